"""Why each agreed pair matched, in sealed linkage: the recipes of the blocking keys its
records share (pprl.protocol.sealed.why_matched), from what this party already holds: both
sides' keys blinded twice (the keys' graph) or the slots it named (the hidden join)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pprl.party.phases.context import RunContext
from pprl.party.phases.sealed import stored
from pprl.party.storage.artifacts import OWN_KEYS, OWN_KEYS_TWICE, OWN_NAMED, PEER_KEYS_TWICE
from pprl.protocol.data.combined import base_names
from pprl.protocol.sealed import session, why_matched

Pair = tuple[int, int]


def explanations(
    ctx: RunContext, run_id: str, pairs: Iterable[Pair]
) -> dict[Pair, tuple[str, str]]:
    """Per (own row, peer row): (the near fields and how they agree, the compared fields no
    shared key reads)."""
    agreement = ctx.agreement(run_id)
    attributes = list(ctx.inputs(run_id).records.attributes)
    recipes = session.recipes(agreement.method.sealed_keys, attributes)
    compared = list(dict.fromkeys(base_names(a for a, _ in agreement.mapping)))
    wanted = list(pairs)
    shared = _named(ctx, run_id) if agreement.method.join.hidden else _graph(ctx, run_id, wanted)
    return {pair: why_matched.explained(recipes, compared, shared.get(pair, ())) for pair in wanted}


def _graph(ctx: RunContext, run_id: str, pairs: list[Pair]) -> dict[Pair, set[int]]:
    """The recipes of the own row's keys the peer row holds too (both blinded twice)."""
    counts, values = stored.read_keys(ctx, run_id, OWN_KEYS_TWICE)
    own = session.grouped(counts, values)
    peer = session.grouped(*stored.read_keys(ctx, run_id, PEER_KEYS_TWICE))
    with np.load(ctx.artifact(run_id, OWN_KEYS).path) as data:
        made_by = data["recipes"] if "recipes" in data.files else None
    if made_by is None or len(made_by) != int(counts.sum()):
        return {}  # a run smashed before recipes were kept
    starts = np.concatenate([[0], np.cumsum(counts)])
    out = {}
    for o, p in pairs:
        theirs = set(peer[p])
        out[(o, p)] = {int(made_by[starts[o] + j]) for j, key in enumerate(own[o]) if key in theirs}
    return out


def _named(ctx: RunContext, run_id: str) -> dict[Pair, set[int]]:
    """The recipes of the entries whose named slots resolved to each pair."""
    held = ctx.store.artifact(run_id, OWN_NAMED, verify=False)
    if held is None:
        return {}
    out: dict[Pair, set[int]] = {}
    with np.load(held.path) as data:
        for o, p, recipe in zip(data["own"], data["peer"], data["recipes"], strict=True):
            out.setdefault((int(o), int(p)), set()).add(int(recipe))
    return out
