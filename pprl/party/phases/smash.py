"""SMASH: release the records as agreed, in a secret order, and attack a sample of the release
as the peer could before anything is stored for EXCHANGE."""

from __future__ import annotations

import numpy as np

from pprl.files.atomic import atomic_file
from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.storage.artifacts import ORDER, OWN_TENSOR
from pprl.party.storage.inputs import Inputs
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.gate import (
    audit_rows,
    combined_names,
    gate_sample,
    unaudited_attributes,
)
from pprl.protocol.linkage.released import Released
from pprl.protocol.privacy.audit import AuditReport
from pprl.wire.v1 import linkage_pb2 as pb


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    inputs = ctx.inputs(run_id)
    agreement = ctx.agreement(run_id)
    n = len(inputs.records)
    progress(0, n, "records", words.SMASHING)
    released = pipeline.release(
        agreement,
        inputs.records.attributes,
        ctx.randomness,
        progress=lambda done, total: progress(done, total, "mapping entries", ""),
    )
    audit = _privacy_gate(ctx, run_id, agreement, released, inputs, progress)
    # The order and the tensor are written before either is recorded: a SMASH redone after a
    # crash between them writes both again.
    with atomic_file(ctx.store.artifact_path(run_id, ORDER)) as tmp, tmp.open("wb") as out:
        np.save(out, released.order)
    with atomic_file(ctx.store.artifact_path(run_id, OWN_TENSOR)) as tmp:
        released.tensor.tofile(tmp)
    ctx.store.record_artifact(run_id, ORDER)
    ctx.store.record_artifact(
        run_id,
        OWN_TENSOR,
        {
            "shape": list(released.tensor.shape),
            "audited_records": audit.records,
            "reidentified": audit.rate(ctx.config.privacy.measure),
            "limit": ctx.config.privacy.max_reidentification,
            "exposed": audit.record_exposed,
            "recovered": {a.attribute: a.recovered for a in audit.attributes},
            "noise_edits": agreement.release.noise,
        },
    )
    progress(n, n, "records", words.smashed_words(released.tensor.shape))


def _privacy_gate(
    ctx: RunContext,
    run_id: str,
    agreement: Agreement,
    released: Released,
    inputs: Inputs,
    progress: PhaseProgress,
) -> AuditReport:
    """Attack a sample of the release as the peer could, before it is stored for EXCHANGE;
    refuse when more records fall than the configured limit allows."""
    settings = ctx.config.privacy
    chosen = ctx.noise_meta(run_id).get("records")
    if chosen is not None:
        # The records the noise was chosen on: where the shuffle put them.
        position = np.empty(len(released.order), dtype=np.int64)
        position[released.order] = np.arange(len(released.order))
        rows = np.sort(position[np.asarray(chosen, dtype=np.int64)])
    else:
        rows = gate_sample(len(released.order), settings.audit_records, ctx.randomness)
    size = len(rows)
    progress(0, size, "records", words.GATE_ATTACKING)
    report = audit_rows(
        agreement,
        released,
        rows,
        inputs.records.attributes,
        ctx.dictionary(inputs),
        settings.measure,
        population=ctx.population(agreement),
    )
    limit = settings.max_reidentification
    found = words.gate_words(
        report,
        settings.measure,
        size,
        unaudited_attributes(agreement),
        combined_names(agreement),
    )
    if report.rate(settings.measure) > limit:
        raise PhaseFailed(
            words.gate_refused_words(found, limit, ctx.config.source), reason=pb.PRIVACY_GATE
        )
    progress(size, size, "records", words.gate_passed_words(found, limit))
    return report
