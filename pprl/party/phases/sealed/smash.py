"""SMASH in sealed linkage: the records' vectors, kept here (never sent), and their blocking
keys, blinded once (with the hidden join, also its key entries: `hidden_entries`)."""

from __future__ import annotations

import numpy as np

from pprl import failpoints
from pprl.files.atomic import atomic_file
from pprl.party.phases.context import PhaseProgress, RunContext
from pprl.party.phases.sealed import hidden_entries, stored
from pprl.party.storage.artifacts import BLINDING_SECRET, ORDER, OWN_KEYS, OWN_TENSOR
from pprl.protocol import pipeline
from pprl.protocol.sealed import session
from pprl.protocol.sealed.blinding import Blinder
from pprl.protocol.sealed.recipes import found_by_key, probing, recipe_number


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    inputs = ctx.inputs(run_id)
    agreement = ctx.agreement(run_id)
    n = len(inputs.records)
    progress(0, n, "records", "smashing the records against the reference set (kept here)")
    released = pipeline.release(
        agreement,
        inputs.records.attributes,
        ctx.randomness,
        progress=lambda done, total: progress(done, total, "mapping entries", ""),
    )
    method = agreement.method
    recipes = session.recipes(method.sealed_keys, list(inputs.records.attributes))
    first = stored.is_first(ctx, run_id)
    keys = session.row_keys(recipes, inputs.records.attributes, released.order, first)
    if failpoints.probe_with_fallback():
        keys = [probing(row, first) for row in keys]
    found_by = np.fromiter((found_by_key(key, first) for row in keys for key in row), dtype=bool)
    made_by = np.fromiter((recipe_number(key) for row in keys for key in row), dtype=np.int32)
    digest, _ = ctx.store.run(run_id).agreement()
    context = session.key_context(digest, run_id)
    hidden = method.join.hidden
    with ctx.spreading() as spread:
        blinder = Blinder(spread=spread)
        counts, values = session.blinded_rows(blinder, context, keys)
        entries = hidden_entries.smash(ctx, run_id, keys, context, spread) if hidden else 0
        where = spread.where() if spread is not None else ""
    # Everything is written before anything is recorded: a SMASH redone after a crash writes
    # it all again, with a fresh scalar.
    with atomic_file(ctx.store.artifact_path(run_id, ORDER)) as tmp, tmp.open("wb") as out:
        np.save(out, released.order)
    with atomic_file(ctx.store.artifact_path(run_id, OWN_TENSOR)) as tmp:
        released.tensor.tofile(tmp)
    with atomic_file(ctx.store.artifact_path(run_id, BLINDING_SECRET)) as tmp:
        tmp.write_bytes(blinder.secret())
        tmp.chmod(0o600)
    stored.write_keys(
        ctx, run_id, OWN_KEYS, counts, values, record=False, found_by=found_by, recipes=made_by
    )
    if hidden:
        hidden_entries.record_smash(ctx, run_id, entries)
    ctx.store.record_artifact(run_id, ORDER)
    ctx.store.record_artifact(run_id, BLINDING_SECRET)
    ctx.store.record_artifact(run_id, OWN_KEYS, {"rows": n, "keys": int(counts.sum())})
    ctx.store.record_artifact(
        run_id,
        OWN_TENSOR,
        {
            "shape": list(released.tensor.shape),
            "audited_records": 0,
            "reidentified": 0.0,
            "exposed": 0.0,
            "recovered": {},
            "noise_edits": 0.0,
        },
    )
    keyless = int(np.count_nonzero(counts == 0))
    said = (
        f"smashed {n:,} records (kept here: sealed linkage sends no vectors); "
        f"{int(counts.sum()):,} blocking keys from {len(recipes)} "
        f"recipe{'s' if len(recipes) != 1 else ''}, blinded{where}"
    )
    if keyless:
        said += (
            f"; {keyless:,} records have no key (each recipe needs a value they lack) and "
            "cannot be linked"
        )
    progress(n, n, "records", said)
