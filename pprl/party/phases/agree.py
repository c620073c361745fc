"""AGREE: load the inputs, report on them, choose the noise if asked, and agree the method's
digest with the peer (both proposals' larger noise when both chose their own)."""

from __future__ import annotations

import json
import math
from typing import Any

from pprl import __version__, failpoints
from pprl.party.config import PartyConfig
from pprl.party.peering.peer import AGREEMENT_WAIT_SECONDS, AUTO_NOISE_WAIT_SECONDS
from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext, resolve_agreement
from pprl.party.storage.artifacts import DATA_REPORT, NOISE_CHOICE, PEER_DECLARED
from pprl.party.storage.gate_cache import CACHE_DIR, read_noise_hint, write_noise_hint
from pprl.party.storage.inputs import Inputs, load_inputs
from pprl.party.versions import check_versions
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.records import RecordTable
from pprl.protocol.data.reference import reference_overlap
from pprl.protocol.gate import calibrate_noise, gate_sample
from pprl.protocol.method import (
    description_digest,
    explain_mismatch,
    with_auto_noise,
    without_sigma,
)
from pprl.protocol.privacy import noise
from pprl.protocol.privacy.noise_choice import SIGMA_STEPS, NoiseChoice
from pprl.wire.v1 import linkage_pb2 as pb


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
        "records": len(records),
    }


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    config = ctx.config
    inputs = load_inputs(config)
    failpoints.after_read("records")
    agreement = resolve_agreement(config, inputs)
    report = data_report(inputs, agreement)
    ctx.write_json(run_id, DATA_REPORT, report, report)
    progress(0, 1, "agreements", words.data_words(report))
    if config.registers_by_default:
        progress(0, 1, "agreements", words.REGISTERS_BY_DEFAULT)
    choice = None
    if config.auto_noise:
        choice = _choose_noise(ctx, run_id, agreement, inputs, progress)
        agreement = agreement.with_noise(choice.sigma)
    description, digest = _set_agreement(ctx, run_id, agreement, inputs)
    ctx.keep(run_id, inputs, agreement)
    peer = ctx.peer(run_id)
    progress(0, 1, "agreements", words.waiting_words(peer.peer))
    # A peer choosing its noise takes as long as we do (the gate's dictionary, a few
    # sigmas); waiting for it is part of AGREE.
    wait = AUTO_NOISE_WAIT_SECONDS if choice else AGREEMENT_WAIT_SECONDS
    theirs, sent = peer.agreement(run_id, wait_seconds=wait)
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    mismatch = check_versions(__version__, theirs.software_version, peer.peer)
    if mismatch:
        raise PhaseFailed(mismatch, reason=pb.VERSION_MISMATCH)
    _check_sizes(config, peer.peer, len(inputs.records), theirs)
    declared = {"records": theirs.records, "accepts": theirs.accepts_records}
    ctx.write_json(run_id, PEER_DECLARED, declared, declared)
    peer_description = json.loads(theirs.description)
    if choice is not None and without_sigma(peer_description) == without_sigma(description):
        # Both chose their own noise: the larger protects both releases. Each side
        # derives the same final description from the two proposals, and the final
        # digest is checked again on every tensor the peer pushes (EXCHANGE).
        proposed = _proposed_sigma(peer_description, peer.peer)
        agreed = max(choice.sigma, proposed)
        agreement = agreement.with_noise(agreed)
        description, digest = _set_agreement(ctx, run_id, agreement, inputs)
        ctx.keep(run_id, inputs, agreement)
        said = words.agreed_noise_words(agreed, choice.words(), peer.peer, proposed)
        _store_noise(ctx, run_id, ctx.noise_meta(run_id) | {"agreed": agreed, "why": said})
        progress(0, 1, "agreements", said)
    elif theirs.digest != digest:
        why = explain_mismatch(description, peer_description)
        raise PhaseFailed(words.digests_differ_words(why), reason=pb.DIGEST_MISMATCH)
    seed = config.development_seed if ctx.randomness.replayable else None
    said = words.agreed_words(digest, peer.peer, agreement.noise_words(), seed)
    progress(1, 1, "agreements", said)


def _check_sizes(config: PartyConfig, peer: str, own: int, theirs: pb.GetAgreementResponse) -> None:
    """Refuse, before anything is sent, a peer that declares more records than this party
    accepts ([limits] peer_records_ratio times its own, within max_peer_records), and a run in
    which this party's own records are more than the peer accepts (it refuses too)."""
    accepted = config.accepted_peer_records(own)
    if theirs.records > accepted:
        memory = accepted == config.max_peer_records
        limit = (
            f"[limits] max_peer_records in {config.source}; the default is what matching can "
            "hold in half this machine's memory"
            if memory
            else f"[limits] peer_records_ratio {config.peer_records_ratio:g} times this "
            f"party's {own:,} records, in {config.source}: a privacy limit, since each record "
            "a peer declares is a guess it may test; raise it for a small file linked against "
            "a large register"
        )
        raise PhaseFailed(
            f"{peer} links {theirs.records:,} records, more than this daemon accepts "
            f"({accepted:,}, {limit}); nothing was sent",
            reason=pb.BAD_INPUT if memory else pb.PEER_TOO_LARGE,
        )
    if theirs.accepts_records and own > theirs.accepts_records:
        raise PhaseFailed(
            f"{peer} accepts at most {theirs.accepts_records:,} records from this party, which "
            f"links {own:,}: its operator can raise its [limits] peer_records_ratio; nothing "
            "was sent",
            reason=pb.PEER_TOO_LARGE,
        )


def _proposed_sigma(description: dict[str, Any], peer: str) -> float:
    """The peer's automatic noise, refused unless a gate could have chosen it (a number
    from 0 to the largest step): infinite or huge noise would make the release meaningless
    and its accounting undefined."""
    value = description["params"].get("noise_sigma")
    top = SIGMA_STEPS[-1]
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 <= value <= top:
        raise PhaseFailed(
            f"{peer} proposed noise {value!r}, which no gate chooses (a number from 0 to {top:g})",
            reason=pb.DIGEST_MISMATCH,
        )
    return float(value)


def _set_agreement(
    ctx: RunContext, run_id: str, agreement: Agreement, inputs: Inputs
) -> tuple[dict[str, Any], str]:
    """Store what the peer will be shown: the description (marked when the noise is chosen
    automatically) and its digest; and the hash of the records' bytes as they were read, so
    that every later load of them is checked against what this run used."""
    description = agreement.description()
    if ctx.config.auto_noise:
        description = with_auto_noise(description)
    digest = description_digest(description)
    canonical = json.dumps(description, sort_keys=True, separators=(",", ":"))
    ctx.store.set_agreement(run_id, digest, canonical, inputs.records.sha256)
    return description, digest


def _choose_noise(
    ctx: RunContext,
    run_id: str,
    agreement: Agreement,
    inputs: Inputs,
    progress: PhaseProgress,
) -> NoiseChoice:
    """The smallest noise at which this party's own gate passes, measured on the records the
    gate will attack at SMASH."""
    settings = ctx.config.privacy
    records = gate_sample(len(inputs.records), settings.audit_records, ctx.randomness)
    limit = settings.max_reidentification
    progress(0, 1, "agreements", words.choosing_noise_words(len(records), limit))
    try:
        choice = calibrate_noise(
            agreement,
            inputs.records.attributes,
            records,
            ctx.dictionary(inputs),
            ctx.randomness,
            limit,
            settings.measure,
            hint=read_noise_hint(ctx.config.state_dir / CACHE_DIR),
            population=ctx.population(agreement),
        )
    except noise.CalibrationError as exc:
        raise PhaseFailed(
            words.no_noise_passes_words(ctx.config.source, exc), reason=pb.PRIVACY_GATE
        ) from None
    meta = {
        "sigma": choice.sigma,
        "limit": choice.limit,
        "rates": {f"{s:g}": r for s, r in choice.rates.items()},
        "records": records.tolist(),
        "words": choice.words(),
    }
    _store_noise(ctx, run_id, meta)
    write_noise_hint(ctx.config.state_dir / CACHE_DIR, choice.sigma)
    progress(0, 1, "agreements", words.own_noise_words(choice.words()))
    return choice


def _store_noise(ctx: RunContext, run_id: str, meta: dict[str, Any]) -> None:
    ctx.write_json(run_id, NOISE_CHOICE, meta, meta)
