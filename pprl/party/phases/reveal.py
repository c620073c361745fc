"""REVEAL: send the peer the pairs this party's classifier accepted, each with this party's
record id; and receive the peer's, checked to be one-to-one and within both tensors."""

from __future__ import annotations

import math

import numpy as np

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.phases.sealed import probability
from pprl.party.storage.artifacts import OWN_TENSOR, PEER_MATCHES
from pprl.protocol.data.record_ids import id_problem
from pprl.wire.v1 import linkage_pb2 as pb


def match_rows(match_set: pb.PushMatchesRequest) -> list[list]:
    """The peer's pairs as stored: [our row, their row, their id, records sharing values]."""
    return [
        [p.receiver_row, p.sender_row, p.sender_id, max(1, p.sender_sharing)]
        for p in match_set.pairs
    ]


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    found = ctx.own_matches(run_id)
    ids = ctx.own_ids(run_id)
    sharing = ctx.own_sharing(run_id)
    run = ctx.store.run(run_id)
    kept = np.ones(len(found["own"]), dtype=bool)
    if ctx.agreement(run_id).encoding.cuts_at_reveal:
        kept = probability.kept_at_cut(ctx, run_id, found, sharing, run.cut(ctx.config.threshold))
    pairs = [
        pb.MatchedPair(
            sender_row=int(o), receiver_row=int(p), sender_id=ids[o], sender_sharing=sharing[o]
        )
        for o, p in zip(found["own"][kept], found["peer"][kept], strict=True)
    ]
    peer = ctx.peer(run_id)
    progress(0, len(pairs), "pairs", words.sending_pairs_words(peer.peer))
    match_set = pb.PushMatchesRequest(
        run_id=run_id, digest=run.digest, pairs=pairs, review_band=ctx.config.review_band
    )
    _, sent = peer.push_matches(match_set)
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    progress(len(pairs), len(pairs), "pairs", words.PEER_RECEIVED)


def receive(ctx: RunContext, run_id: str, match_set: pb.PushMatchesRequest) -> int:
    """Store the peer's accepted pairs after checking every row is one we and they have, and
    that no row of either side appears twice: the peer's matching is one-to-one."""
    own_rows = ctx.store.artifact(run_id, OWN_TENSOR, verify=False)
    n_peer = ctx.peer_rows(run_id)
    if own_rows is None or n_peer is None:
        raise PhaseFailed("matches arrived before both parties' rows were in place")
    n_own = own_rows.meta["shape"][0]
    ours: set[int] = set()
    theirs: set[int] = set()
    ids: set[str] = set()
    for number, pair in enumerate(match_set.pairs):
        key = (pair.receiver_row, pair.sender_row)
        if pair.receiver_row >= n_own or pair.sender_row >= n_peer:
            raise PhaseFailed(f"pair {key} is out of range")
        if pair.receiver_row in ours or pair.sender_row in theirs:
            raise PhaseFailed(f"pair {key} repeats a row: a linkage is one-to-one")
        problem = id_problem(pair.sender_id)
        if problem is not None:
            raise PhaseFailed(f"pair {number}: {problem}")
        if pair.sender_id in ids:
            raise PhaseFailed(f"pair {number}: an id given to another row too")
        if pair.sender_sharing > n_peer:
            raise PhaseFailed(
                f"pair {number}: {pair.sender_sharing:,} records sharing values, of {n_peer:,} rows"
            )
        ours.add(pair.receiver_row)
        theirs.add(pair.sender_row)
        ids.add(pair.sender_id)
    pairs = match_rows(match_set)
    band = match_set.review_band if math.isfinite(match_set.review_band) else 0.0
    ctx.write_json(
        run_id, PEER_MATCHES, {"pairs": pairs, "review_band": max(band, 0.0)}, {"pairs": len(pairs)}
    )
    return len(pairs)
