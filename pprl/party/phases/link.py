"""LINK: the pairs both classifiers accepted, with both parties' ids, written as the result;
beside it each side's own accepted pairs and, when asked for, the soft links."""

from __future__ import annotations

import json

import numpy as np

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.phases.sealed import probability, why
from pprl.party.reporting.facts import read_facts
from pprl.party.reporting.render import write_report
from pprl.party.storage.artifacts import (
    LINKAGE_CSV,
    OWN_MATCHES_CSV,
    OWN_TOKENS_CSV,
    PEER_MATCHES,
    PEER_MATCHES_CSV,
    REVIEW_CSV,
    SOFT_LINKS_CSV,
    SOFT_MATCHES,
)
from pprl.protocol.linkage import review_queue, soft_links


def _review(own_sharing: int, peer_sharing: int, score: float, close_below: float) -> str:
    """A pair for a person to check: one of several records holding the same compared
    values, or scoring at or below `close_below` (the cut plus the review band)."""
    if own_sharing > 1 or peer_sharing > 1:
        return "records share values"
    return "near the cut" if score <= close_below else ""


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    peer_artifact = ctx.store.artifact(run_id, PEER_MATCHES)
    if peer_artifact is None:
        raise PhaseFailed(f"{ctx.peer(run_id).peer} has not sent its matches yet")
    received = json.loads(peer_artifact.path.read_text(encoding="utf-8"))
    theirs = received["pairs"]
    peer_ids = {int(peer_row): peer_id for _, peer_row, peer_id, _ in theirs}
    peer_sharing = {int(peer_row): int(shared) for _, peer_row, _, shared in theirs}
    ours = ctx.own_matches(run_id)
    ids = ctx.own_ids(run_id)
    sharing = ctx.own_sharing(run_id)
    cut = ctx.store.run(run_id).cut(ctx.config.threshold)
    sealed = ctx.agreement(run_id).encoding.cuts_at_reveal
    scores = _own_probabilities(ctx, run_id, ours, sharing, peer_sharing) if sealed else None
    probabilities = scores is not None
    if scores is None:
        scores = ours["scores"]
    if sealed:
        # REVEAL sent only the pairs at or above the cut: the rest are not this party's.
        sent = probability.kept_at_cut(ctx, run_id, ours, sharing, cut)
        ours = {name: values[sent] for name, values in ours.items()}
        scores = scores[sent]
    band = ctx.config.review_band
    close_below = cut + band if band else -np.inf
    our_scores = {
        (int(o), int(p)): float(score)
        for o, p, score in zip(ours["own"], ours["peer"], scores, strict=True)
    }
    both = [
        (int(o), int(p), int(shared))
        for o, p, _, shared in theirs
        if (int(o), int(p)) in our_scores
    ]
    # Sealed linkage: which fields the blocking keys found agreeing (why.explanations).
    reasons = why.explanations(ctx, run_id, [(o, p) for o, p, _ in both]) if sealed else {}
    agreed = sorted(
        (
            ids[o],
            peer_ids[p],
            f"{our_scores[(o, p)]:.6f}",
            *(reasons[(o, p)] if sealed else ()),
            sharing[o],
            shared,
            _review(sharing[o], shared, our_scores[(o, p)], close_below),
        )
        for o, p, shared in both
    )
    own_rows = [
        (ids[o], peer_ids.get(int(p), ""), f"{score:.6f}")
        for o, p, score in zip(ours["own"], ours["peer"], scores, strict=True)
    ]
    peer_rows = sorted((ids[o], peer_id) for o, _, peer_id, _ in theirs)
    me, peer = ctx.config.identity, ctx.peer(run_id).peer
    header = [f"{me}_id", f"{peer}_id"]
    # Records whose compared values other records share cannot be told apart by those
    # values: the pair is one of several equally good ones and needs a person's review.
    # This party's own classifier's score of each pair (the peer's stays with the peer): in
    # sealed linkage its match probability.
    scored = f"{me}_probability" if probabilities else f"{me}_score"
    marks = [f"{me}_records_sharing_values", f"{peer}_records_sharing_values", "review"]
    explained = ["near_fields", "other_fields"] if sealed else []
    ctx.write_csv(run_id, LINKAGE_CSV, [*header, scored, *explained, *marks], agreed)
    ctx.write_csv(run_id, OWN_MATCHES_CSV, [*header, scored.removeprefix(f"{me}_")], own_rows)
    ctx.write_csv(run_id, PEER_MATCHES_CSV, header, peer_rows)
    if band > 0 and float(received.get("review_band", 0.0)) > 0:
        queue = review_queue.rows(agreed, own_rows, peer_rows)
        ctx.write_csv(run_id, REVIEW_CSV, [*header, scored, "review"], queue)
    if ctx.store.artifact(run_id, SOFT_MATCHES, verify=False) is not None:
        _write_soft(ctx, run_id, ids)
    review = sum(1 for row in agreed if row[-1])
    facts = read_facts(ctx.config.state_dir, run_id, linking=True)
    write_report(facts, ctx.store.run_dir(run_id))
    progress(len(agreed), len(agreed), "pairs", words.linkage_words(len(agreed), review))


def _own_probabilities(
    ctx: RunContext,
    run_id: str,
    ours: dict[str, np.ndarray],
    sharing: list[int],
    peer_sharing: dict[int, int],
) -> np.ndarray | None:
    """In sealed linkage, each of MATCH's pairs' match probability, the records sharing its
    values on the side with more (the peer's where it sent the pair); None where TRAIN
    calibrated nothing."""
    calibrated = probability.calibration(ctx, run_id)
    if calibrated is None:
        return None
    own = np.asarray(sharing, dtype=np.int64)[ours["own"]]
    peer = np.array([peer_sharing.get(int(p), 1) for p in ours["peer"]], dtype=np.int64)
    return probability.of_matches(calibrated, ours, np.maximum(own, peer))


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
