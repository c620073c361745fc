"""What every phase of a run works with: the party's configuration, the run store, the peer,
the run's inputs and agreement (kept for the run being worked on), and one way to write an
artifact so that a phase's output counts only once it is whole and recorded."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from pprl.files.atomic import atomic_file
from pprl.party.config import PartyConfig, attribute_kinds, attribute_scales
from pprl.party.credentials.bloom_key import load_bloom_key
from pprl.party.credentials.noise_key import party_noise_key
from pprl.party.peering.peer import PeerClient
from pprl.party.peering.transfer import Expected
from pprl.party.phases import engine, words, workers
from pprl.party.phases.derived import Derived
from pprl.party.phases.workers import Spread
from pprl.party.storage.artifacts import (
    NOISE_CHOICE,
    ORDER,
    OWN_MATCHES,
    PEER_DECLARED,
    PEER_KEYS_TWICE,
    PEER_TENSOR,
    TensorFile,
)
from pprl.party.storage.gate_cache import CACHE_DIR, DiskProjections
from pprl.party.storage.inputs import Inputs, load_dictionary, load_inputs, load_population
from pprl.party.storage.state import Artifact, RunStore
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.record_ids import spreadsheet_safe
from pprl.protocol.encodings.base import Runner
from pprl.protocol.encodings.registry import ENCODINGS
from pprl.protocol.errors import PprlError
from pprl.protocol.linkage import plans
from pprl.protocol.linkage.matching import Matches
from pprl.protocol.method import reference_sha256
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.privacy import noise
from pprl.protocol.privacy.audit import Dictionary
from pprl.protocol.privacy.population_attack import Population
from pprl.protocol.release_attacks import attacked_entries
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


class RunContext:
    """The party's side of a run, shared by the phases (pprl.party.phases.steps)."""

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
        self.derived = Derived()

    def peer(self, run_id: str) -> PeerClient:
        """The client of the party this run links with (a run stored before daemons had
        several peers names none: its peer is the only one configured)."""
        stored = self.store.run(run_id).peer
        if not stored and len(self.peers) == 1:
            return next(iter(self.peers.values()))
        if stored not in self.peers:
            raise PhaseFailed(words.peer_gone_words(run_id, stored, list(self.peers)))
        return self.peers[stored]

    def inputs(self, run_id: str) -> Inputs:
        """The run's records and reference set, refusing files changed since agreement."""
        if run_id not in self._inputs:
            run = self.store.run(run_id)
            # The hash of the bytes this load parsed, not of the file read again: a file
            # rewritten in between cannot pass for the one the run used.
            loaded = load_inputs(self.config)
            if run.records_sha256 != loaded.records.sha256:
                raise PhaseFailed(words.records_changed_words(self.config.records_path))
            _, description = run.agreement()
            agreed = json.loads(description)["reference"]["sha256"]
            if agreed != reference_sha256(loaded.reference):
                raise PhaseFailed(words.records_changed_words(self.config.reference_path))
            # Only the run being worked on is kept: fifty runs must not hold fifty copies.
            self._inputs = {run_id: loaded}
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
                    # The reference set's figures as AGREE stored them: a phase resumed after a
                    # restart does not compute them again.
                    store=DiskProjections(self.config.state_dir / CACHE_DIR),
                    bloom_key=party_bloom_key(self.config),
                )
            }
        return self._agreements[run_id]

    def keep(self, run_id: str, inputs: Inputs, agreement: Agreement) -> None:
        """What AGREE loaded and agreed, kept for the later phases of the same run."""
        self._inputs = {run_id: inputs}
        self._agreements = {run_id: agreement}

    def expected_tensor(self, run_id: str) -> Expected:
        """What a peer tensor must fit, taken from the stored agreement itself."""
        digest, description = self.store.run(run_id).agreement()
        agreed = json.loads(description)
        method = MethodParams(**agreed["params"])
        entries, width = ENCODINGS[method.encoding].wire_shape(
            agreed["mapping"], method, agreed["reference"]["rows"]
        )
        return Expected(run_id, digest, entries, width, self.config.max_peer_records)

    # -- what earlier phases stored ------------------------------------------------------
    def artifact(self, run_id: str, name: str) -> Artifact:
        """An artifact an earlier phase stored; the phase order guarantees it unless the state
        directory was changed by hand."""
        artifact = self.store.artifact(run_id, name)
        if artifact is None:
            raise PhaseFailed(f"{name} is not there yet for run {run_id}")
        return artifact

    def tensor(self, run_id: str, name: str) -> TensorFile:
        artifact = self.artifact(run_id, name)
        return TensorFile(artifact.path, tuple(artifact.meta["shape"]))

    def order(self, run_id: str) -> np.ndarray:
        """The secret order SMASH released the records in."""
        return np.load(self.artifact(run_id, ORDER).path)

    def own_ids(self, run_id: str) -> list[str]:
        """Per released row, the own record's id."""
        ids = self.inputs(run_id).records.ids
        return [ids[i] for i in self.order(run_id)]

    def own_sharing(self, run_id: str) -> list[int]:
        """Per released row, how many own records share its compared values."""
        sharing = self.inputs(run_id).records.sharing()
        return [sharing[i] for i in self.order(run_id)]

    def peer_rows(self, run_id: str) -> int | None:
        """How many rows the peer links with: its tensor's, or in sealed linkage its blinded
        keys'; None before either has arrived."""
        tensor = self.store.artifact(run_id, PEER_TENSOR, verify=False)
        if tensor is not None:
            return int(tensor.meta["shape"][0])
        if self.agreement(run_id).method.join.hidden:
            # The peer's keys travel one to a message, shuffled: their count is not its rows'.
            return self.peer_declared(run_id) or None
        keys = self.store.artifact(run_id, PEER_KEYS_TWICE, verify=False)
        return None if keys is None else int(keys.meta["rows"])

    def peer_declared(self, run_id: str) -> int:
        """How many records the peer declared at AGREE (0 before), within what this party
        accepted: the bound on every key, entry and named slot it may send."""
        declared = self.store.artifact(run_id, PEER_DECLARED, verify=False)
        return 0 if declared is None else int(declared.meta["records"])

    def own_matches(self, run_id: str) -> dict[str, np.ndarray]:
        with np.load(self.artifact(run_id, OWN_MATCHES).path) as data:
            return {k: data[k] for k in data.files}

    def noise_meta(self, run_id: str) -> dict[str, Any]:
        """How AGREE chose the noise, if it did."""
        artifact = self.store.artifact(run_id, NOISE_CHOICE, verify=False)
        return dict(artifact.meta) if artifact is not None else {}

    # -- the gate's inputs, read once per daemon -----------------------------------------
    def population(self, agreement: Agreement) -> Population | None:
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

    def dictionary(self, inputs: Inputs) -> Dictionary:
        """The gate's dictionary, kept while the reference set stays the same: its vectors
        against the reference set are most of what the gate costs."""
        key = (self.config.privacy.dictionary, reference_sha256(inputs.reference))
        if self._dictionary_cache is None or self._dictionary_cache[0] != key:
            store = DiskProjections(self.config.state_dir / CACHE_DIR)
            loaded = load_dictionary(self.config.privacy.dictionary, inputs.reference, store)
            self._dictionary_cache = (key, loaded)
        return self._dictionary_cache[1]

    def runner(self) -> Runner:
        """Where MATCH's blocks run: on the configured Dask scheduler, or here."""
        return engine.on_dask(self.config.scheduler) if self.config.scheduler else plans.run_here

    def spreading(self) -> AbstractContextManager[Spread | None]:
        """Where sealed linkage's blinding runs: the Dask cluster, local workers or here."""
        config = self.config
        return workers.spreading(config.scheduler, config.workers, config.chunk_values)

    # -- writing what a phase produces ---------------------------------------------------
    def write_artifact(
        self, run_id: str, name: str, write: Callable[[Path], Any], meta: dict[str, Any]
    ) -> Path:
        """An artifact written whole beside its place and renamed into it (atomic_file), then
        recorded in the run store: a phase's output counts once both are done, and a file
        the store could not record (its disk full) is removed again."""
        path = self.store.artifact_path(run_id, name)
        with atomic_file(path) as tmp:
            write(tmp)
        try:
            self.store.record_artifact(run_id, name, meta)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path

    def write_json(self, run_id: str, name: str, value: Any, meta: dict[str, Any]) -> Path:
        return self.write_artifact(
            run_id, name, lambda tmp: tmp.write_text(json.dumps(value), encoding="utf-8"), meta
        )

    def write_csv(self, run_id: str, name: str, header: list[str], rows: list) -> Path:
        """Rows written whole or not at all; text cells a spreadsheet would run as a formula
        (an id starting with =, +, -, @) escaped with a leading apostrophe."""

        def write(tmp: Path) -> None:
            with tmp.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(header)
                writer.writerows(
                    [spreadsheet_safe(c) if isinstance(c, str) else c for c in row] for row in rows
                )

        return self.write_artifact(run_id, name, write, {"rows": len(rows)})

    def write_pairs(
        self,
        run_id: str,
        name: str,
        found: Matches,
        meta: dict[str, Any] | None = None,
        extra: dict[str, np.ndarray] | None = None,
    ) -> Path:
        """(own row, peer row, score) pairs as an artifact, written whole or not at all; `extra`:
        more per-pair arrays kept beside them."""

        def write(tmp: Path) -> None:
            with tmp.open("wb") as out:
                arrays = {"own": found.rows_a, "peer": found.rows_b, "scores": found.scores}
                np.savez(out, allow_pickle=False, **arrays, **(extra or {}))

        return self.write_artifact(run_id, name, write, {"pairs": len(found), **(meta or {})})
