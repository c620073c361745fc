"""MATCH's cost, told before it is paid: the candidate pairs, the slots and batches they take
in the packed ciphertexts, the bytes both ways and the time; and whether the keys make it
grow with the square of the files.

Every record with a partner brings about one candidate pair, its partner; the others are
look-alikes that share a key with it, and their number per record grows with the peer's
file. Where a record has few look-alikes (names with a date of birth: 0.1 at 400,000 a side)
MATCH grows with the files; where it has many (names alone), with their product. TRAIN
projects the cost from its simulated join, before anything is sent (`projected`); MATCH
computes it from the layout both parties derive, before the first ciphertext (`of_counts`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed.layout import (
    FRESH_BYTES,
    RETURNED_BYTES,
    Layout,
    batch_rounds,
    best_rounds_of,
    candidate_counts,
)

# MATCH's seconds per slot with both parties on one machine of 2 cores, each scoring its
# slots and evaluating the peer's: 954 s for 442,737 pairs at 400,000 a side, names and date
# of birth (docs/research/scale.md). Another machine's rate differs; the projection says
# whose it is.
SECONDS_PER_SLOT = 0.002
# Look-alikes per record (candidates beyond the one partner) from which they, not the
# partners, make most of MATCH's work, and that work grows with the product of the files.
QUADRATIC_LOOKALIKES = 2.0


@dataclass(frozen=True)
class MatchCost:
    """What MATCH will do for one scoring party (the peer's scoring costs as much again)."""

    candidates: int
    slots: int
    batches: int
    bytes_both_ways: int
    seconds: float
    lookalikes: float  # candidate pairs per own row that has any, beyond one

    @property
    def quadratic(self) -> bool:
        """The look-alikes make most of the work: it grows with the product of the files."""
        return self.lookalikes >= QUADRATIC_LOOKALIKES


def of_counts(
    counts: np.ndarray, slots: int, coordinates: int, returned: int, hidden: bool = False
) -> MatchCost:
    """The cost of scoring rows with these candidate counts (rows with none left out) in
    ciphertexts of `slots`, `coordinates` a batch out and `returned` a round back, at the
    layout's rounds (`layout.best_rounds_of`); with the `hidden` join, whose rows are key
    entries of a few candidates each, a slot a candidate."""
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts > 0]
    if not len(counts):
        return MatchCost(0, 0, 0, 0, 0.0, 0.0)
    if hidden:
        used = int(counts.sum())
        needed = np.ones(-(-used // slots), dtype=np.int64)
        return _cost(counts, used, needed, coordinates, returned)
    rounds = best_rounds_of(counts, slots, coordinates, returned)
    needed = batch_rounds(counts, slots, rounds)
    used = int((-(-counts // rounds)).sum())
    return _cost(counts, used, needed, coordinates, returned)


def of_layout(placed: Layout, pairs: np.ndarray, coordinates: int, returned: int) -> MatchCost:
    """The cost of the layout MATCH is about to send (its check rows included)."""
    counts = candidate_counts(pairs)
    if not len(counts):
        return MatchCost(0, 0, 0, 0, 0.0, 0.0)
    needed = np.array([placed.batch_rounds(b) for b in range(placed.batches)], dtype=np.int64)
    return _cost(counts, len(placed.rows), needed, coordinates, returned)


def _cost(
    counts: np.ndarray, used: int, needed: np.ndarray, coordinates: int, returned: int
) -> MatchCost:
    """`used` slots in batches needing `needed` rounds each: out, one ciphertext per
    coordinate and batch; back, `returned` per round."""
    kilobytes = len(needed) * coordinates * FRESH_BYTES
    kilobytes += int(needed.sum()) * returned * RETURNED_BYTES
    candidates = int(counts.sum())
    return MatchCost(
        candidates=candidates,
        slots=used,
        batches=len(needed),
        bytes_both_ways=kilobytes * 1000,
        seconds=used * SECONDS_PER_SLOT,
        lookalikes=max(candidates / len(counts) - 1.0, 0.0),
    )


def projected(
    sampled_counts: np.ndarray,
    simulated_rows: int,
    own_rows: int,
    peer_rows: int,
    slots: int,
    coordinates: int,
    returned: int,
    hidden: bool = False,
    pair_counts: np.ndarray | None = None,
) -> MatchCost:
    """The cost at `own_rows` against `peer_rows`, from a simulated join: each sampled own
    record's candidate count (with the `hidden` join, its slots; then `pair_counts`, its
    candidate pairs, give the look-alikes) against a simulated peer file of
    `simulated_rows` (TRAIN's, as large as the own file). A record's candidates grow with
    the peer's rows; the own file's counts are the sampled ones repeated to its size."""
    ratio = peer_rows / max(simulated_rows, 1)
    sampled = np.asarray(sampled_counts, dtype=np.float64)
    if not len(sampled) or own_rows < 1:
        return MatchCost(0, 0, 0, 0, 0.0, 0.0)
    scaled = np.rint(sampled * ratio).astype(np.int64)
    cost = of_counts(np.resize(scaled, own_rows), slots, coordinates, returned, hidden)
    if pair_counts is None:
        return cost
    pairs = np.asarray(pair_counts, dtype=np.float64) * ratio
    joined = pairs[pairs > 0]
    lookalikes = float(joined.mean()) - 1.0 if len(joined) else 0.0
    return dataclasses.replace(cost, lookalikes=max(lookalikes, 0.0))
