"""What the sealed phases keep in the run store and read back: the blinded keys, the
candidate pairs both sets of doubly blinded keys make, this party's unit vectors, and which
party is the first."""

from __future__ import annotations

import itertools

import numpy as np

from pprl.files.atomic import atomic_file
from pprl.party.phases.context import PhaseFailed, RunContext
from pprl.party.storage.artifacts import OWN_KEYS, OWN_KEYS_TWICE, OWN_TENSOR, PEER_KEYS_TWICE
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.sealed import session
from pprl.protocol.sealed.keyless_rows import keyless_refusal
from pprl.protocol.sealed.recipes import most_keyless_keys
from pprl.wire.v1 import linkage_pb2 as pb


def is_first(ctx: RunContext, run_id: str) -> bool:
    """Whether this party is the first of the two (the lower identity): the side of a fallback
    recipe's keys and of the one-to-one step's tie-break, which both parties must agree on."""
    return ctx.config.identity < ctx.peer(run_id).peer


def candidates(ctx: RunContext, run_id: str) -> np.ndarray:
    """The pairs (own row, peer row) sharing a doubly blinded key, as both parties derive
    them; refused (KEY_BOUND) when a peer row probes with a fallback key yet holds more keys
    than a keyless row can (keyless_rows). Derived once for both sets of keys as stored."""
    held = ctx.store.artifact(run_id, PEER_KEYS_TWICE)
    if held is None:
        raise PhaseFailed(
            "the peer's blinded keys have not arrived: its EXCHANGE has not run",
            reason=pb.OUT_OF_ORDER,
        )
    source = (run_id, ctx.artifact(run_id, OWN_KEYS_TWICE).sha256, held.sha256)
    pairs: np.ndarray = ctx.derived.get("candidates", source, lambda: _candidates(ctx, run_id))
    return pairs.copy()


def _candidates(ctx: RunContext, run_id: str) -> np.ndarray:
    counts, values = read_keys(ctx, run_id, OWN_KEYS_TWICE)
    own = session.grouped(counts, values)
    peer = session.grouped(*read_keys(ctx, run_id, PEER_KEYS_TWICE))
    with np.load(ctx.artifact(run_id, OWN_KEYS).path) as data:
        flags = data["found_by"]
    if flags.any():
        starts = np.concatenate([[0], np.cumsum(counts)])
        rows = [flags[a:b].tolist() for a, b in itertools.pairwise(starts)]
        most = most_keyless_keys(ctx.agreement(run_id).method.sealed_keys)
        refusal = keyless_refusal(own, rows, peer, most)
        if refusal is not None:
            raise PhaseFailed(f"keys refused: {refusal}", reason=pb.KEY_BOUND)
    return session.candidates(own, peer)


def own_units(ctx: RunContext, run_id: str) -> np.ndarray:
    """This party's projected vectors (kept by SMASH) as the unit vectors scoring takes."""
    tensor = ctx.tensor(run_id, OWN_TENSOR)
    return unit_vectors(tensor[0 : len(tensor)], ctx.agreement(run_id).standardise)


def write_keys(
    ctx: RunContext,
    run_id: str,
    name: str,
    counts: np.ndarray,
    values: bytes,
    record: bool = True,
    found_by: np.ndarray | None = None,
    recipes: np.ndarray | None = None,
) -> None:
    """Blinded keys (`counts` a row, `values` their points, and for this party's own which are
    a fallback's found-by tag, recipes.found_by_key, and each key's recipe) written; recorded
    unless SMASH records them itself once all its files are written."""

    def write(path) -> None:
        points = np.frombuffer(values, dtype=np.uint8)
        flags = np.zeros(0, dtype=bool) if found_by is None else found_by
        made_by = np.zeros(0, dtype=np.int32) if recipes is None else recipes
        with path.open("wb") as out:
            np.savez(out, counts=counts, values=points, found_by=flags, recipes=made_by)

    if record:
        meta = {"rows": len(counts), "keys": int(counts.sum())}
        ctx.write_artifact(run_id, name, write, meta)
    else:
        with atomic_file(ctx.store.artifact_path(run_id, name)) as tmp:
            write(tmp)


def read_keys(ctx: RunContext, run_id: str, name: str) -> tuple[np.ndarray, bytes]:
    """The counts and points `write_keys` wrote."""
    with np.load(ctx.artifact(run_id, name).path) as data:
        return data["counts"], data["values"].tobytes()
