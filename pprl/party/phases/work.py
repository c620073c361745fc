"""What each phase of Algorithm 1 does on one party: the pipeline's steps (pprl.protocol.
pipeline) with their inputs read from the party's files and their results kept in the run
store, so a phase redone after a restart starts from what the earlier phases stored.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pprl import __version__
from pprl.files.atomic import atomic_file
from pprl.party.config import PartyConfig, attribute_kinds, attribute_scales
from pprl.party.keys.bloom_key import load_bloom_key
from pprl.party.keys.noise_key import party_noise_key
from pprl.party.peering.peer import AGREEMENT_WAIT_SECONDS, AUTO_NOISE_WAIT_SECONDS, PeerClient
from pprl.party.peering.transfer import Expected
from pprl.party.phases import engine
from pprl.party.storage.artifacts import (
    DATA_REPORT,
    LINKAGE_CSV,
    MODEL,
    NOISE_CHOICE,
    ORDER,
    OWN_MATCHES,
    OWN_MATCHES_CSV,
    OWN_TENSOR,
    OWN_TOKENS_CSV,
    PEER_MATCHES,
    PEER_MATCHES_CSV,
    PEER_TENSOR,
    SOFT_LINKS_CSV,
    SOFT_MATCHES,
    TensorFile,
)
from pprl.party.storage.gate_cache import (
    CACHE_DIR,
    DiskProjections,
    read_noise_hint,
    write_noise_hint,
)
from pprl.party.storage.inputs import Inputs, load_dictionary, load_inputs, load_population
from pprl.party.storage.state import Artifact, RunStore, file_sha256
from pprl.party.versions import check_versions
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.records import RecordTable
from pprl.protocol.data.reference import reference_overlap
from pprl.protocol.encodings import ENCODINGS, Runner
from pprl.protocol.errors import PprlError
from pprl.protocol.expectation import expected_quality, poor_linkage_words
from pprl.protocol.gate import (
    attacked_entries,
    audit_rows,
    calibrate_noise,
    gate_sample,
    unaudited_attributes,
)
from pprl.protocol.linkage import plans, soft_links
from pprl.protocol.linkage.matching import Matches
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import (
    MethodParams,
    description_digest,
    explain_mismatch,
    reference_sha256,
    with_auto_noise,
    without_sigma,
)
from pprl.protocol.model import classifier
from pprl.protocol.phases import Phase
from pprl.protocol.privacy import noise
from pprl.protocol.privacy.audit import ATTACK_NAMES, AuditReport, Dictionary
from pprl.protocol.privacy.noise_choice import NoiseChoice
from pprl.protocol.privacy.population_attack import Population
from pprl.protocol.vectors.bloom import BloomKey
from pprl.protocol.vectors.randomness import Randomness
from pprl.wire.v1 import linkage_pb2 as pb

# phase_progress(done, total, unit, message): what the Advance stream tells the coordinator.
PhaseProgress = Callable[[int, int, str, str], None]


class PhaseFailed(PprlError):
    """A phase cannot complete for a reason the operator must fix (stated in the message)."""

    def __init__(self, message: str, reason: pb.ErrorReason = pb.BAD_INPUT) -> None:
        super().__init__(message)
        self.reason = reason  # what the coordinator is told, beside the message


def party_bloom_key(config: PartyConfig) -> BloomKey | None:
    """The Bloom-filter key when the method encodes values as Bloom filters."""
    if not config.method.keyed or config.privacy.bloom_key is None:
        return None
    return load_bloom_key(config.privacy.bloom_key)


def resolve_agreement(config: PartyConfig, inputs: Inputs) -> Agreement:
    """The configured method on these inputs, sigma solved from attack_success if set."""
    try:
        return Agreement.resolve(
            inputs.reference,
            config.mapping,
            config.method,
            config.attack_success,
            kinds=attribute_kinds(config),
            scales=attribute_scales(config),
            store=DiskProjections(config.state_dir / CACHE_DIR),
            bloom_key=party_bloom_key(config),
        )
    except noise.CalibrationError as exc:
        raise PhaseFailed(f"[method] attack_success in {config.source}: {exc}") from None


def data_report(inputs: Inputs, agreement: Agreement) -> dict[str, Any]:
    """What real registers hold and the method accepts: reference values shared with the
    records, records sharing every compared value, missing and unreadable values."""
    records: RecordTable = inputs.records
    groups, repeated = records.repeated()
    return {
        "reference_shared": reference_overlap(
            records.attributes, agreement.reference, agreement.mapping
        ),
        "repeated_groups": groups,
        "repeated_records": repeated,
        "missing_values": records.missing(),
        "unreadable_values": dict(records.unreadable),
    }


def data_words(report: dict[str, Any]) -> str:
    """The data report as one progress line."""
    shared = report["reference_shared"]
    parts = [
        "reference values shared with the records: "
        + (", ".join(f"{entry} {count}" for entry, count in shared.items()) or "none")
    ]
    if report["repeated_groups"]:
        parts.append(
            f"{report['repeated_records']} records in {report['repeated_groups']} groups share "
            "every compared value (kept; their pairs are marked for review)"
        )
    missing = {a: n for a, n in report["missing_values"].items() if n}
    if missing:
        parts.append("missing values: " + ", ".join(f"{a} {n}" for a, n in missing.items()))
    if report["unreadable_values"]:
        unreadable = ", ".join(f"{a} {n}" for a, n in report["unreadable_values"].items())
        parts.append(f"unreadable cells counted as missing: {unreadable}")
    return "; ".join(parts)


def attack_words(report: AuditReport) -> str:
    """Which attacker the rate is of, when more than one ran."""
    if len(report.by_attack) < 2:
        return ""
    others = ", ".join(f"{a} {r:.1%}" for a, r in report.by_attack.items() if a != report.attack)
    return f"; strongest attacker: {ATTACK_NAMES[report.attack]} (others: {others})"


def recovered_words(report: AuditReport) -> str:
    """What the peer recovers besides whole records: each attacked attribute's values (a
    surname, say), and records with at least one name."""
    if not report.attributes:
        return "no name attribute attacked"
    each = ", ".join(
        f"{a.attribute} {a.recovered:.1%}" + (f" (with the {a.prior} list)" if a.prior else "")
        for a in report.attributes
    )
    return f"values recovered: {each}; records with any name recovered {report.record_exposed:.1%}"


def _review(own_sharing: int, peer_sharing: int) -> str:
    return "yes" if own_sharing > 1 or peer_sharing > 1 else ""


def match_rows(match_set: pb.PushMatchesRequest) -> list[list]:
    """The peer's pairs as stored: [our row, their row, their id, records sharing values]."""
    return [
        [p.receiver_row, p.sender_row, p.sender_id, max(1, p.sender_sharing)]
        for p in match_set.pairs
    ]


class PhaseWork:
    def __init__(self, config: PartyConfig, store: RunStore, peers: dict[str, PeerClient]) -> None:
        self.config = config
        self.store = store
        self.peers = peers  # by identity, one for each configured peer
        key = party_noise_key(config.state_dir, config.privacy.noise_key)
        self.randomness = Randomness(config.development_seed, config.identity, key)
        self._inputs: dict[str, Inputs] = {}
        self._dictionary_cache: tuple[tuple[Path | None, str], Dictionary] | None = None
        self._population_cache: tuple[tuple[Path, tuple[str, ...]], Population | None] | None = None
        self._agreements: dict[str, Agreement] = {}

    # -- helpers -------------------------------------------------------------------------
    def peer(self, run_id: str) -> PeerClient:
        """The client of the party this run links with (a run stored before daemons had
        several peers names none: its peer is the only one configured)."""
        stored = self.store.run(run_id).peer
        if not stored and len(self.peers) == 1:
            return next(iter(self.peers.values()))
        if stored not in self.peers:
            raise PhaseFailed(
                f"run {run_id} links with {stored or 'an unnamed peer'!r}, which is no longer "
                f"among the configured peers ({', '.join(self.peers)}); abandon the run"
            )
        return self.peers[stored]

    def inputs(self, run_id: str) -> Inputs:
        """The run's records and reference set, refusing files changed since agreement."""
        if run_id not in self._inputs:
            run = self.store.run(run_id)
            if run.records_sha256 != file_sha256(self.config.records_path):
                raise PhaseFailed(
                    f"{self.config.records_path} changed since this run's agreement; "
                    "start a new run"
                )
            # Only the run being worked on is kept: fifty runs must not hold fifty copies.
            self._inputs = {run_id: load_inputs(self.config)}
        return self._inputs[run_id]

    def agreement(self, run_id: str) -> Agreement:
        """The agreement stored at AGREE (its noise already resolved from a target)."""
        if run_id not in self._agreements:
            _, description = self.store.run(run_id).agreement()
            agreed = json.loads(description)
            # Only the run being worked on is kept, as with its inputs.
            self._agreements = {
                run_id: Agreement(
                    self.inputs(run_id).reference,
                    self.config.mapping,
                    MethodParams(**agreed["params"]),
                    agreed["kinds"],
                    agreed.get("scales"),  # only there when a quantity or coordinates are mapped
                    bloom_key=party_bloom_key(self.config),
                )
            }
        return self._agreements[run_id]

    def expected_tensor(self, run_id: str) -> Expected:
        """What a peer tensor must fit, taken from the stored agreement itself."""
        digest, description = self.store.run(run_id).agreement()
        agreed = json.loads(description)
        method = MethodParams(**agreed["params"])
        entries, width = ENCODINGS[method.encoding].wire_shape(
            agreed["mapping"], method, agreed["reference"]["rows"]
        )
        return Expected(run_id, digest, entries, width)

    def _artifact(self, run_id: str, name: str) -> Artifact:
        """An artifact an earlier phase stored; the phase order guarantees it unless the state
        directory was changed by hand."""
        artifact = self.store.artifact(run_id, name)
        if artifact is None:
            raise PhaseFailed(f"{name} is not there yet for run {run_id}")
        return artifact

    def _tensor(self, run_id: str, name: str) -> TensorFile:
        artifact = self._artifact(run_id, name)
        return TensorFile(artifact.path, tuple(artifact.meta["shape"]))

    def _order(self, run_id: str) -> np.ndarray:
        return np.load(self._artifact(run_id, ORDER).path)

    def _own_ids(self, run_id: str) -> list[str]:
        ids = self.inputs(run_id).records.ids
        return [ids[i] for i in self._order(run_id)]

    # -- phases --------------------------------------------------------------------------
    def agree(self, run_id: str, progress: PhaseProgress) -> None:
        inputs = load_inputs(self.config)
        agreement = resolve_agreement(self.config, inputs)
        report = data_report(inputs, agreement)
        self._write_json(run_id, DATA_REPORT, report, report)
        progress(0, 1, "agreements", data_words(report))
        if self.config.registers_by_default:
            progress(
                0,
                1,
                "agreements",
                "training will corrupt records with the register error model (nicknames, "
                "initials, swapped fields, blanks, changed surnames: docs/error-model.md), the "
                'default when [records] names its own attributes; error_model = "one-error" in '
                "[method] gives the paper's single edit",
            )
        choice = None
        if self.config.auto_noise:
            choice = self._choose_noise(run_id, agreement, inputs, progress)
            agreement = agreement.with_noise(choice.sigma)
        description, digest = self._set_agreement(run_id, agreement)
        self._inputs = {run_id: inputs}
        self._agreements = {run_id: agreement}
        peer = self.peer(run_id)
        progress(0, 1, "agreements", f"waiting for {peer.peer}'s agreement")
        # A peer choosing its noise takes as long as we do (the gate's dictionary, a few
        # sigmas); waiting for it is part of AGREE.
        wait = AUTO_NOISE_WAIT_SECONDS if choice else AGREEMENT_WAIT_SECONDS
        theirs, sent = peer.agreement(run_id, wait_seconds=wait)
        self.store.add_counter(run_id, "bytes_sent", sent)
        mismatch = check_versions(__version__, theirs.software_version, peer.peer)
        if mismatch:
            raise PhaseFailed(mismatch, reason=pb.VERSION_MISMATCH)
        peer_description = json.loads(theirs.description)
        if choice is not None and without_sigma(peer_description) == without_sigma(description):
            # Both chose their own noise: the larger protects both releases. Each side
            # derives the same final description from the two proposals, and the final
            # digest is checked again on every tensor the peer pushes (EXCHANGE).
            agreed = max(choice.sigma, float(peer_description["params"]["noise_sigma"]))
            agreement = agreement.with_noise(agreed)
            description, digest = self._set_agreement(run_id, agreement)
            self._agreements[run_id] = agreement
            words = (
                f"noise chosen for this run: sigma {agreed:g} (here {choice.words()}; "
                f"{peer.peer} proposed {peer_description['params']['noise_sigma']:g})"
            )
            self._store_noise(run_id, self._noise_meta(run_id) | {"agreed": agreed, "why": words})
            progress(0, 1, "agreements", words)
        elif theirs.digest != digest:
            why = explain_mismatch(description, peer_description)
            raise PhaseFailed(
                f"agreement digests differ ({why}); the run cannot go on",
                reason=pb.DIGEST_MISMATCH,
            )
        seeded = (
            f"; development seed {self.config.development_seed}: this run's shuffle, noise "
            "and training are replayable, never use it with real records"
            if self.randomness.replayable
            else ""
        )
        progress(
            1,
            1,
            "agreements",
            f"digest {digest[:16]}… matches {peer.peer}'s; {agreement.noise_words()}{seeded}",
        )

    def _set_agreement(self, run_id: str, agreement: Agreement) -> tuple[dict[str, Any], str]:
        """Store what the peer will be shown: the description (marked when the noise is
        chosen automatically) and its digest."""
        description = agreement.description()
        if self.config.auto_noise:
            description = with_auto_noise(description)
        digest = description_digest(description)
        canonical = json.dumps(description, sort_keys=True, separators=(",", ":"))
        records_sha = file_sha256(self.config.records_path)
        self.store.set_agreement(run_id, digest, canonical, records_sha)
        return description, digest

    def _choose_noise(
        self,
        run_id: str,
        agreement: Agreement,
        inputs: Inputs,
        progress: PhaseProgress,
    ) -> NoiseChoice:
        """The smallest noise at which this party's own gate passes, measured on the records
        the gate will attack at SMASH."""
        settings = self.config.privacy
        records = gate_sample(len(inputs.records), settings.audit_records, self.randomness)
        progress(
            0,
            1,
            "agreements",
            f"choosing the noise: the smallest sigma at which the gate's attack on {len(records)} "
            f"sampled records stays within {settings.max_reidentification:.1%}",
        )
        try:
            choice = calibrate_noise(
                agreement,
                inputs.records.attributes,
                records,
                self._dictionary(inputs),
                self.randomness,
                settings.max_reidentification,
                settings.measure,
                hint=read_noise_hint(self.config.state_dir / CACHE_DIR),
                population=self._population(agreement),
            )
        except noise.CalibrationError as exc:
            raise PhaseFailed(
                f'noise_sigma = "auto" in {self.config.source}: {exc}; nothing was sent. Raise '
                "[privacy] max_reidentification or use a larger reference set (docs/privacy.md)",
                reason=pb.PRIVACY_GATE,
            ) from None
        meta = {
            "sigma": choice.sigma,
            "limit": choice.limit,
            "rates": {f"{s:g}": r for s, r in choice.rates.items()},
            "records": records.tolist(),
            "words": choice.words(),
        }
        self._store_noise(run_id, meta)
        write_noise_hint(self.config.state_dir / CACHE_DIR, choice.sigma)
        progress(0, 1, "agreements", f"own noise: {choice.words()}")
        return choice

    def _store_noise(self, run_id: str, meta: dict[str, Any]) -> None:
        self._write_json(run_id, NOISE_CHOICE, meta, meta)

    def _noise_meta(self, run_id: str) -> dict[str, Any]:
        artifact = self.store.artifact(run_id, NOISE_CHOICE, verify=False)
        return dict(artifact.meta) if artifact is not None else {}

    def _population(self, agreement: Agreement) -> Population | None:
        """The gate's list of people, if configured, with the attacked attributes' columns:
        read once per daemon."""
        path = self.config.privacy.population
        if path is None:
            return None
        attacked = list(dict.fromkeys(agreement.mapping[m][0] for m in attacked_entries(agreement)))
        key = (path, tuple(attacked))
        if self._population_cache is None or self._population_cache[0] != key:
            self._population_cache = (key, load_population(path, attacked))
        return self._population_cache[1]

    def _dictionary(self, inputs: Inputs) -> Dictionary:
        """The gate's dictionary, kept while the reference set stays the same: its vectors
        against the reference set are most of what the gate costs."""
        key = (self.config.privacy.dictionary, reference_sha256(inputs.reference))
        if self._dictionary_cache is None or self._dictionary_cache[0] != key:
            store = DiskProjections(self.config.state_dir / CACHE_DIR)
            loaded = load_dictionary(self.config.privacy.dictionary, inputs.reference, store)
            self._dictionary_cache = (key, loaded)
        return self._dictionary_cache[1]

    def smash(self, run_id: str, progress: PhaseProgress) -> None:
        inputs = self.inputs(run_id)
        agreement = self.agreement(run_id)
        n = len(inputs.records)
        progress(0, n, "records", "computing edit distances to the reference set")
        released = pipeline.release(
            agreement,
            inputs.records.attributes,
            self.randomness,
            progress=lambda done, total: progress(done, total, "mapping entries", ""),
        )
        audit = self._privacy_gate(run_id, agreement, released, inputs, progress)
        with atomic_file(self.store.artifact_path(run_id, ORDER)) as tmp, tmp.open("wb") as out:
            np.save(out, released.order)
        with atomic_file(self.store.artifact_path(run_id, OWN_TENSOR)) as tmp:
            released.tensor.tofile(tmp)
        self.store.record_artifact(run_id, ORDER)
        self.store.record_artifact(
            run_id,
            OWN_TENSOR,
            {
                "shape": list(released.tensor.shape),
                "audited_records": audit.records,
                "reidentified": audit.rate(self.config.privacy.measure),
                "exposed": audit.record_exposed,
                "recovered": {a.attribute: a.recovered for a in audit.attributes},
                "noise_edits": agreement.release.noise,
            },
        )
        progress(n, n, "records", f"smashed tensor {released.tensor.shape}")

    def _privacy_gate(
        self,
        run_id: str,
        agreement: Agreement,
        released: Released,
        inputs: Inputs,
        progress: PhaseProgress,
    ) -> AuditReport:
        """Attack a sample of the release as the peer could, before it is stored for EXCHANGE;
        refuse when more records fall than the configured limit allows."""
        settings = self.config.privacy
        chosen = self._noise_meta(run_id).get("records")
        if chosen is not None:
            # The records the noise was chosen on: where the shuffle put them.
            position = np.empty(len(released.order), dtype=np.int64)
            position[released.order] = np.arange(len(released.order))
            rows = np.sort(position[np.asarray(chosen, dtype=np.int64)])
        else:
            rows = gate_sample(len(released.order), settings.audit_records, self.randomness)
        size = len(rows)
        progress(0, size, "records", "privacy gate: dictionary attack on a sample of the tensor")
        report = audit_rows(
            agreement,
            released,
            rows,
            inputs.records.attributes,
            self._dictionary(inputs),
            settings.measure,
            population=self._population(agreement),
        )
        limit = settings.max_reidentification
        rate = report.rate(settings.measure)
        counted = "every name" if settings.measure == "every-name" else "at least one name"
        unaudited = unaudited_attributes(agreement)
        words = (
            f"a dictionary attack re-identified {rate:.1%} of {size} sampled records "
            f"({counted} recovered); {recovered_words(report)}{attack_words(report)}"
        )
        if unaudited:
            words += f"; not attacked by the name dictionary: {', '.join(unaudited)}"
        if rate > limit:
            raise PhaseFailed(
                f"privacy gate: {words}, above the limit of {limit:.1%} "
                f"([privacy] max_reidentification in {self.config.source}); nothing was sent. "
                "Add noise ([method] noise_sigma or attack_success) or, knowing what the peer "
                "learns (docs/privacy.md), raise the limit",
                reason=pb.PRIVACY_GATE,
            )
        progress(size, size, "records", f"privacy gate passed: {words}, limit {limit:.1%}")
        return report

    def train(self, run_id: str, progress: PhaseProgress) -> None:
        inputs = self.inputs(run_id)
        agreement = self.agreement(run_id)
        method = agreement.method
        progress(
            0,
            1,
            "models",
            f"training a {method.classifier} SVM on synthetic pairs of "
            f"{min(method.training_records, len(inputs.records))} own records (Algorithm 2)",
        )
        model, pairs = pipeline.train(agreement, inputs.records.attributes, self.randomness)
        meta: dict[str, Any] = {"kind": model.kind, "pairs": pairs}
        words = f"trained on {pairs} pairs"
        minimum = self.config.privacy.min_expected_f1
        if minimum > 0:  # 0: no minimum to check, nothing to estimate
            progress(0, 1, "models", f"{words}; estimating the linkage it will give")
            quality = expected_quality(agreement, inputs.records.attributes, model, self.randomness)
            if quality.f1 < minimum:
                raise PhaseFailed(
                    f"{poor_linkage_words(quality, minimum)} (in {self.config.source})"
                    + self._whose_noise(run_id),
                    reason=pb.POOR_LINKAGE,
                )
            meta["expected"] = quality.as_dict()
            words += f"; {quality.words()}"
        self._write_artifact(run_id, MODEL, lambda tmp: tmp.write_bytes(model.to_bytes()), meta)
        progress(1, 1, "models", words)

    def _whose_noise(self, run_id: str) -> str:
        """When the peer's gate asked for more noise than this party's: say so, since the
        linkage this party expects is then the peer's choice's."""
        meta = self._noise_meta(run_id)
        own, agreed = meta.get("sigma"), meta.get("agreed")
        if own is None or agreed is None or agreed <= own:
            return ""
        return (
            f"; the noise is {self.peer(run_id).peer}'s proposal, sigma {agreed:g}, where this "
            f"party's own gate needed sigma {own:g}"
        )

    def exchange(self, run_id: str, progress: PhaseProgress) -> None:
        artifact = self._artifact(run_id, OWN_TENSOR)
        shape = tuple(artifact.meta["shape"])
        megabytes = -(-artifact.size // 1_000_000)
        peer = self.peer(run_id)
        progress(0, megabytes, "MB", f"sending smashed tensor to {peer.peer}")
        digest, _ = self.store.run(run_id).agreement()
        began = time.perf_counter()
        _, sent = peer.push_tensor(
            run_id,
            digest,
            artifact.path,
            shape,
            artifact.sha256,
            progress=lambda done, total: progress(done // 1_000_000, megabytes, "MB", ""),
        )
        rate = artifact.size / 1e6 / max(time.perf_counter() - began, 1e-9)
        self.store.add_counter(run_id, "bytes_sent", sent)
        progress(megabytes, megabytes, "MB", f"peer confirmed the checksum ({rate:.0f} MB/s)")

    def match(self, run_id: str, progress: PhaseProgress) -> None:
        own = self._tensor(run_id, OWN_TENSOR)
        peer = self._tensor(run_id, PEER_TENSOR)
        model = classifier.Model.from_bytes(self._artifact(run_id, MODEL).path.read_bytes())
        top_k = self.agreement(run_id).method.soft_top_k
        if top_k:
            # Before any pair is scored: a K the peer's records cannot fill fails at once.
            try:
                soft_links.check_top_k(top_k, len(peer))
            except ValueError as exc:
                raise PhaseFailed(f"[method] {exc}, in {self.config.source}") from None
        where = f"on {self.config.scheduler}" if self.config.scheduler else "here"
        what = self.agreement(run_id).encoding.match_words(where)
        progress(0, len(own), "records", what)
        matched = pipeline.match(
            self.agreement(run_id),
            own,
            peer,
            model,
            run=self._runner(),
            progress=lambda done, total: progress(done, total, "records", ""),
        )
        found = matched.matches
        scored = len(own) * len(peer) if matched.scored is None else matched.scored
        self._store_pairs(run_id, OWN_MATCHES, found, {"scored": scored})
        share = scored / max(1, len(own) * len(peer))
        what = (
            f"no bound applies to this classifier: scored all {scored:,} pairs"
            if matched.scored is None
            else f"scored {scored:,} candidate pairs ({100 * share:.3f}% of all pairs)"
        )
        progress(len(own), len(own), "records", f"{what}, kept {len(found)}")
        if top_k:
            self._soft_match(run_id, own, peer, model, top_k, progress)

    def _soft_match(
        self,
        run_id: str,
        own: TensorFile,
        peer: TensorFile,
        model: classifier.Model,
        top_k: int,
        progress: PhaseProgress,
    ) -> None:
        """Each own row's top_k peer rows, whatever their score (soft_links)."""
        progress(0, len(own), "records", f"soft linkage: the {top_k} best peer records of each")
        found = pipeline.soft_match(
            self.agreement(run_id),
            own,
            peer,
            model,
            top_k,
            run=self._runner(),
            progress=lambda done, total: progress(done, total, "records", ""),
        )
        self._store_pairs(run_id, SOFT_MATCHES, found)
        progress(len(own), len(own), "records", f"soft linkage: kept {len(found)} pairs")

    def _runner(self) -> Runner:
        """Where MATCH's blocks run: on the configured Dask scheduler, or here."""
        return engine.on_dask(self.config.scheduler) if self.config.scheduler else plans.run_here

    def _store_pairs(
        self, run_id: str, name: str, found: Matches, meta: dict[str, Any] | None = None
    ) -> None:
        """(own row, peer row, score) pairs as an artifact, written whole or not at all."""

        def write(tmp: Path) -> None:
            with tmp.open("wb") as out:
                np.savez(out, own=found.rows_a, peer=found.rows_b, scores=found.scores)

        self._write_artifact(run_id, name, write, {"pairs": len(found), **(meta or {})})

    def _own_matches(self, run_id: str) -> dict[str, np.ndarray]:
        with np.load(self._artifact(run_id, OWN_MATCHES).path) as data:
            return {k: data[k] for k in data.files}

    def _own_sharing(self, run_id: str) -> list[int]:
        """Per released row, how many own records share its compared values."""
        sharing = self.inputs(run_id).records.sharing()
        return [sharing[i] for i in self._order(run_id)]

    def reveal(self, run_id: str, progress: PhaseProgress) -> None:
        found = self._own_matches(run_id)
        ids = self._own_ids(run_id)
        sharing = self._own_sharing(run_id)
        run = self.store.run(run_id)
        pairs = [
            pb.MatchedPair(
                sender_row=int(o), receiver_row=int(p), sender_id=ids[o], sender_sharing=sharing[o]
            )
            for o, p in zip(found["own"], found["peer"], strict=True)
        ]
        peer = self.peer(run_id)
        progress(0, len(pairs), "pairs", f"sending accepted pairs to {peer.peer}")
        match_set = pb.PushMatchesRequest(run_id=run_id, digest=run.digest, pairs=pairs)
        _, sent = peer.push_matches(match_set)
        self.store.add_counter(run_id, "bytes_sent", sent)
        progress(len(pairs), len(pairs), "pairs", "peer received them")

    def receive_matches(self, run_id: str, match_set: pb.PushMatchesRequest) -> int:
        """Store the peer's accepted pairs after checking every row is one we and they have,
        and that no row of either side appears twice: the peer's matching is one-to-one."""
        own_rows = self.store.artifact(run_id, OWN_TENSOR, verify=False)
        peer_rows = self.store.artifact(run_id, PEER_TENSOR, verify=False)
        if own_rows is None or peer_rows is None:
            raise PhaseFailed("matches arrived before both smashed tensors were in place")
        n_own, n_peer = own_rows.meta["shape"][0], peer_rows.meta["shape"][0]
        ours: set[int] = set()
        theirs: set[int] = set()
        for pair in match_set.pairs:
            key = (pair.receiver_row, pair.sender_row)
            if pair.receiver_row >= n_own or pair.sender_row >= n_peer:
                raise PhaseFailed(f"pair {key} is out of range")
            if pair.receiver_row in ours or pair.sender_row in theirs:
                raise PhaseFailed(f"pair {key} repeats a row: a linkage is one-to-one")
            ours.add(pair.receiver_row)
            theirs.add(pair.sender_row)
        pairs = match_rows(match_set)
        self._write_json(run_id, PEER_MATCHES, {"pairs": pairs}, {"pairs": len(pairs)})
        return len(pairs)

    def link(self, run_id: str, progress: PhaseProgress) -> None:
        peer_artifact = self.store.artifact(run_id, PEER_MATCHES)
        if peer_artifact is None:
            raise PhaseFailed(f"{self.peer(run_id).peer} has not sent its matches yet")
        theirs = json.loads(peer_artifact.path.read_text(encoding="utf-8"))["pairs"]
        peer_ids = {int(peer_row): peer_id for _, peer_row, peer_id, _ in theirs}
        ours = self._own_matches(run_id)
        ids = self._own_ids(run_id)
        sharing = self._own_sharing(run_id)
        our_pairs = {(int(o), int(p)) for o, p in zip(ours["own"], ours["peer"], strict=True)}
        agreed = sorted(
            (ids[o], peer_ids[p], sharing[o], peer_sharing, _review(sharing[o], peer_sharing))
            for o, p, _, peer_sharing in theirs
            if (int(o), int(p)) in our_pairs
        )
        own_rows = [
            (ids[o], peer_ids.get(int(p), ""), f"{s:.6f}")
            for o, p, s in zip(ours["own"], ours["peer"], ours["scores"], strict=True)
        ]
        peer_rows = sorted((ids[o], peer_id) for o, _, peer_id, _ in theirs)
        me, peer = self.config.identity, self.peer(run_id).peer
        header = [f"{me}_id", f"{peer}_id"]
        # Records whose compared values other records share cannot be told apart by those
        # values: the pair is one of several equally good ones and needs a person's review.
        marks = [f"{me}_records_sharing_values", f"{peer}_records_sharing_values", "review"]
        self._write_csv(run_id, LINKAGE_CSV, [*header, *marks], agreed)
        self._write_csv(run_id, OWN_MATCHES_CSV, [*header, "score"], own_rows)
        self._write_csv(run_id, PEER_MATCHES_CSV, header, peer_rows)
        if self.store.artifact(run_id, SOFT_MATCHES, verify=False) is not None:
            self._write_soft(run_id, ids)
        review = sum(1 for row in agreed if row[-1])
        progress(
            len(agreed),
            len(agreed),
            "pairs",
            f"{len(agreed)} pairs accepted by both ({review} marked for review: "
            "their values are shared by other records)",
        )

    def _write_soft(self, run_id: str, ids: list[str]) -> None:
        """Own records' best peer records as peer tokens, and the map of this party's own
        tokens (which the peer's soft file names), both sorted by own id then rank."""
        with np.load(self._artifact(run_id, SOFT_MATCHES).path) as data:
            own, peer, scores = data["own"], data["peer"], data["scores"]
        me, other = self.config.identity, self.peer(run_id).peer
        peer_tokens = soft_links.tokens(run_id, other, peer)
        rank = np.arange(len(own)) - np.searchsorted(own, own, side="left") + 1
        rows = sorted(
            (ids[o], int(r), t, f"{s:.6f}")
            for o, r, t, s in zip(own.tolist(), rank.tolist(), peer_tokens, scores, strict=True)
        )
        header = [f"{me}_id", "rank", f"{other}_token", "score"]
        self._write_csv(run_id, SOFT_LINKS_CSV, header, rows)
        own_tokens = soft_links.tokens(run_id, me, np.arange(len(ids)))
        mine = sorted(zip(own_tokens, ids, strict=True), key=lambda row: row[1])
        self._write_csv(run_id, OWN_TOKENS_CSV, [f"{me}_token", f"{me}_id"], mine)

    def _write_csv(self, run_id: str, name: str, header: list[str], rows: list) -> Path:
        def write(tmp: Path) -> None:
            with tmp.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(header)
                writer.writerows(rows)

        return self._write_artifact(run_id, name, write, {"rows": len(rows)})

    def _write_json(self, run_id: str, name: str, value: Any, meta: dict[str, Any]) -> Path:
        return self._write_artifact(
            run_id, name, lambda tmp: tmp.write_text(json.dumps(value), encoding="utf-8"), meta
        )

    def _write_artifact(
        self, run_id: str, name: str, write: Callable[[Path], Any], meta: dict[str, Any]
    ) -> Path:
        """An artifact written whole beside its place and renamed into it (atomic_file), then
        recorded in the run store: a phase's output counts once both are done."""
        path = self.store.artifact_path(run_id, name)
        with atomic_file(path) as tmp:
            write(tmp)
        self.store.record_artifact(run_id, name, meta)
        return path

    def run(self, phase: Phase, run_id: str, progress: PhaseProgress) -> None:
        steps = {
            Phase.AGREE: self.agree,
            Phase.SMASH: self.smash,
            Phase.TRAIN: self.train,
            Phase.EXCHANGE: self.exchange,
            Phase.MATCH: self.match,
            Phase.REVEAL: self.reveal,
            Phase.LINK: self.link,
        }
        steps[phase](run_id, progress)
