"""LINK: the pairs both classifiers accepted, with both parties' ids, written as the result;
beside it each side's own accepted pairs and, when asked for, the soft links."""

from __future__ import annotations

import json

import numpy as np

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.reporting.facts import read_facts
from pprl.party.reporting.render import write_report
from pprl.party.storage.artifacts import (
    LINKAGE_CSV,
    OWN_MATCHES,
    OWN_MATCHES_CSV,
    OWN_TOKENS_CSV,
    PEER_MATCHES,
    PEER_MATCHES_CSV,
    SOFT_LINKS_CSV,
    SOFT_MATCHES,
)
from pprl.protocol.linkage import soft_links


def _review(own_sharing: int, peer_sharing: int, score: float, close_below: float) -> str:
    """A pair for a person to check: one of several records holding the same compared
    values, or scoring at or below `close_below` (the threshold plus the review band)."""
    return "yes" if own_sharing > 1 or peer_sharing > 1 or score <= close_below else ""


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    peer_artifact = ctx.store.artifact(run_id, PEER_MATCHES)
    if peer_artifact is None:
        raise PhaseFailed(f"{ctx.peer(run_id).peer} has not sent its matches yet")
    theirs = json.loads(peer_artifact.path.read_text(encoding="utf-8"))["pairs"]
    peer_ids = {int(peer_row): peer_id for _, peer_row, peer_id, _ in theirs}
    ours = ctx.own_matches(run_id)
    ids = ctx.own_ids(run_id)
    sharing = ctx.own_sharing(run_id)
    matched = ctx.store.artifact(run_id, OWN_MATCHES, verify=False)
    threshold = float(matched.meta.get("threshold", 0.0)) if matched is not None else 0.0
    band = ctx.config.review_band
    close_below = threshold + band if band else -np.inf
    our_scores = {
        (int(o), int(p)): float(score)
        for o, p, score in zip(ours["own"], ours["peer"], ours["scores"], strict=True)
    }
    agreed = sorted(
        (
            ids[o],
            peer_ids[p],
            f"{our_scores[(int(o), int(p))]:.6f}",
            sharing[o],
            peer_sharing,
            _review(sharing[o], peer_sharing, our_scores[(int(o), int(p))], close_below),
        )
        for o, p, _, peer_sharing in theirs
        if (int(o), int(p)) in our_scores
    )
    own_rows = [
        (ids[o], peer_ids.get(int(p), ""), f"{s:.6f}")
        for o, p, s in zip(ours["own"], ours["peer"], ours["scores"], strict=True)
    ]
    peer_rows = sorted((ids[o], peer_id) for o, _, peer_id, _ in theirs)
    me, peer = ctx.config.identity, ctx.peer(run_id).peer
    header = [f"{me}_id", f"{peer}_id"]
    # Records whose compared values other records share cannot be told apart by those
    # values: the pair is one of several equally good ones and needs a person's review.
    # This party's own classifier's score of each pair (the peer's stays with the peer).
    marks = [f"{me}_records_sharing_values", f"{peer}_records_sharing_values", "review"]
    ctx.write_csv(run_id, LINKAGE_CSV, [*header, f"{me}_score", *marks], agreed)
    ctx.write_csv(run_id, OWN_MATCHES_CSV, [*header, "score"], own_rows)
    ctx.write_csv(run_id, PEER_MATCHES_CSV, header, peer_rows)
    if ctx.store.artifact(run_id, SOFT_MATCHES, verify=False) is not None:
        _write_soft(ctx, run_id, ids)
    review = sum(1 for row in agreed if row[-1])
    facts = read_facts(ctx.config.state_dir, run_id, linking=True)
    write_report(facts, ctx.store.run_dir(run_id))
    progress(len(agreed), len(agreed), "pairs", words.linkage_words(len(agreed), review))


def _write_soft(ctx: RunContext, run_id: str, ids: list[str]) -> None:
    """Own records' best peer records as peer tokens, and the map of this party's own tokens
    (which the peer's soft file names), both sorted by own id then rank."""
    with np.load(ctx.artifact(run_id, SOFT_MATCHES).path) as data:
        own, peer, scores = data["own"], data["peer"], data["scores"]
    me, other = ctx.config.identity, ctx.peer(run_id).peer
    peer_tokens = soft_links.tokens(run_id, other, peer)
    rank = np.arange(len(own)) - np.searchsorted(own, own, side="left") + 1
    rows = sorted(
        (ids[o], int(r), t, f"{s:.6f}")
        for o, r, t, s in zip(own.tolist(), rank.tolist(), peer_tokens, scores, strict=True)
    )
    header = [f"{me}_id", "rank", f"{other}_token", "score"]
    ctx.write_csv(run_id, SOFT_LINKS_CSV, header, rows)
    own_tokens = soft_links.tokens(run_id, me, np.arange(len(ids)))
    mine = sorted(zip(own_tokens, ids, strict=True), key=lambda row: row[1])
    ctx.write_csv(run_id, OWN_TOKENS_CSV, [f"{me}_token", f"{me}_id"], mine)
