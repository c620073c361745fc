"""Where each candidate pair sits in the packed ciphertexts of encrypted scoring.

The scoring party encrypts its vectors coordinate by coordinate: ciphertext d of a batch
holds coordinate d of one own row per slot. The evaluating party multiplies it by a plaintext
that holds, per slot, coordinate d of one candidate peer row, and sums over d: one product
per slot and round. A row with many candidates would need as many rounds, so a row takes as
many slots as it needs (`ceil(candidates / rounds)`) and each slot serves up to `rounds`
candidates. Rows are placed by their number of candidates, most first, so that a batch needs
only as many rounds as its fullest slot holds (`batch_rounds`): the later batches, of rows
with few candidates, return fewer ciphertexts. Both parties know the candidate pairs, so both
derive the same layout from them. The work is the batches' rounds x coordinates plaintext
products: close to pairs x coordinates / slots when `rounds` suits the candidate counts
(`best_rounds`).

Only a pair that shares its own row or its peer row with another candidate pair needs an
order in the one-to-one step; any other is kept exactly when it is accepted. The layout
marks which slots hold such a pair (`ranked`): only there does the evaluator return the
score's bucket among the higher thresholds, elsewhere just its sign.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Encrypting and saving a ciphertext, and loading it at the evaluator, takes about as long as
# this many plaintext products (SEAL through sealapi, N = 8192, 2 cores: 1.9 and 0.8 ms
# against 0.65 ms; docs/research/benchmarks.md).
ENCRYPT_COST = 4
# A fresh ciphertext (seeded, two primes) and an evaluated one (one prime), as the wire
# carries them at the agreed parameters (coefficients packed), in KB: 113 and 103 measured
# (126 and 118 as SEAL compresses them). Only their ratio matters here.
FRESH_BYTES = 113
RETURNED_BYTES = 103
# How much more work than the fastest layout a layout that sends fewer bytes may take: time
# is the looser bound (at 50,000 a side MATCH took 223 s where ten minutes are allowed and
# the bytes were 2.4 GB where 1 GB is aimed at, when this was set; now 34-107 s and
# 0.41-0.76 GB, docs/research/benchmarks.md).
TIME_SLACK = 1.5


@dataclass(frozen=True)
class Layout:
    """Slot s of batch b is row `rows[b * slots + s]`; in round r it meets peer row
    `peers[r, b * slots + s]` (-1: nothing, the slot's result is ignored)."""

    slots: int
    rows: np.ndarray  # (used slots,) own row per slot
    peers: np.ndarray  # (rounds, used slots) peer row per slot and round, -1 for none
    pair_of: np.ndarray  # (rounds, used slots) index into the pairs, -1 for none
    ranked: np.ndarray  # (rounds, used slots) the pair there is in conflict (`conflicted`)

    @property
    def rounds(self) -> int:
        return int(self.peers.shape[0])

    @property
    def batches(self) -> int:
        return math.ceil(len(self.rows) / self.slots) if len(self.rows) else 0

    def batch_rounds(self, batch: int) -> int:
        """The rounds batch `batch` needs: the most pairs one of its slots holds (a slot's
        pairs fill its rounds from the first)."""
        used = self.pair_of[:, batch * self.slots : (batch + 1) * self.slots] >= 0
        return int(np.count_nonzero(used.any(axis=1)))


def conflicted(pairs: np.ndarray) -> np.ndarray:
    """(P,) whether each pair shares its own row or its peer row with another pair: the pairs
    whose order the one-to-one step needs. Either party derives it from the candidates."""
    if not len(pairs):
        return np.zeros(0, dtype=bool)
    out = np.zeros(len(pairs), dtype=bool)
    for side in (0, 1):
        _, inverse, counts = np.unique(pairs[:, side], return_inverse=True, return_counts=True)
        out |= counts[inverse.reshape(-1)] > 1
    return out


def positions(pairs: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """Where each pair (rows_a[t], rows_b[t]) is among `pairs`, sorted and distinct as the
    candidates are (shared_keys.shared_key_pairs)."""
    width = int(max(pairs[:, 1].max(initial=0), rows_b.max(initial=0))) + 1
    codes = pairs[:, 0].astype(np.int64) * width + pairs[:, 1]
    return np.searchsorted(codes, rows_a.astype(np.int64) * width + rows_b)


def candidate_counts(pairs: np.ndarray) -> np.ndarray:
    """Candidates per own row that has any."""
    _, counts = np.unique(pairs[:, 0], return_counts=True)
    return counts


def batch_rounds(counts: np.ndarray, slots: int, rounds: int) -> np.ndarray:
    """Per batch, the rounds it needs when rows with these candidate counts are placed as
    `layout` places them: by count, most first, each in slots of `rounds` candidates."""
    ordered = np.sort(counts)[::-1]
    per_row = -(-ordered // rounds)
    fills = np.full(int(per_row.sum()), rounds, dtype=np.int64)
    rest = ordered % rounds
    last = np.cumsum(per_row) - 1
    fills[last[rest > 0]] = rest[rest > 0]
    batches = math.ceil(len(fills) / slots)
    if not batches:
        return np.zeros(0, dtype=np.int64)
    # Each batch's fullest slot: the fills are in placement order, most first.
    padded = np.zeros(batches * slots, dtype=np.int64)
    padded[: len(fills)] = fills
    return padded.reshape(batches, slots).max(axis=1)


def best_rounds(
    pairs: np.ndarray, slots: int, coordinates: int | None = None, thresholds: int = 1
) -> int:
    """The rounds per slot that make the work smallest for these pairs (`best_rounds_of`)."""
    return best_rounds_of(candidate_counts(pairs), slots, coordinates, thresholds)


def best_rounds_of(
    counts: np.ndarray, slots: int, coordinates: int | None = None, thresholds: int = 1
) -> int:
    """The rounds per slot that make the work smallest, for rows with these candidate counts:
    per batch, the scoring party encrypts and sends one ciphertext per coordinate
    (ENCRYPT_COST products' worth of time) and the evaluator makes the batch's rounds of
    products per coordinate. Given the `coordinates` (with the constant) and `thresholds`,
    the bytes count too: per batch each coordinate's ciphertext goes out and each of its
    rounds and thresholds' comes back (with a fresh encryption of flooding noise in it), and
    of the rounds within TIME_SLACK of the fastest, the one that sends fewest bytes is
    taken."""
    if len(counts) == 0:
        return 1
    options = []
    for rounds in range(1, int(counts.max()) + 1):
        needed = batch_rounds(counts, slots, rounds)
        if coordinates is None:
            work = int((ENCRYPT_COST + needed).sum())
            options.append((rounds, work, len(needed)))
            continue
        returned = int(needed.sum()) * thresholds
        work = coordinates * int((ENCRYPT_COST + needed).sum())
        work += returned * (ENCRYPT_COST + 1)
        sent = len(needed) * coordinates * FRESH_BYTES + returned * RETURNED_BYTES
        options.append((rounds, work, sent))
    fastest = min(options, key=lambda o: (o[1], o[2]))
    if coordinates is None:
        return fastest[0]
    allowed = [o for o in options if o[1] <= TIME_SLACK * fastest[1]]
    return min(allowed, key=lambda o: (o[2], o[1]))[0]


def layout(pairs: np.ndarray, slots: int, rounds: int) -> Layout:
    """The layout of `pairs` ((P, 2) own row, peer row; any order) in batches of `slots`."""
    if rounds < 1 or slots < 1:
        raise ValueError("rounds and slots must be at least 1")
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    sorted_rows = pairs[order, 0]
    new_row = np.ones(len(order), dtype=bool)
    new_row[1:] = sorted_rows[1:] != sorted_rows[:-1]
    starts = np.flatnonzero(new_row)
    ends = np.append(starts[1:], len(order))
    # Most candidates first (then by row): the later batches need fewer rounds.
    by_count = np.lexsort((sorted_rows[starts], starts - ends))
    rows, peers, index = [], [], []
    for group in by_count:
        start, end = int(starts[group]), int(ends[group])
        for chunk in range(start, end, rounds):
            members = order[chunk : min(chunk + rounds, end)]
            rows.append(int(sorted_rows[start]))
            peers.append(list(pairs[members, 1]) + [-1] * (rounds - len(members)))
            index.append(list(members) + [-1] * (rounds - len(members)))
    shape = (rounds, len(rows))
    pair_of = np.asarray(index, dtype=np.int64).T.reshape(shape)
    return Layout(
        slots=slots,
        rows=np.asarray(rows, dtype=np.int64),
        peers=np.asarray(peers, dtype=np.int64).T.reshape(shape),
        pair_of=pair_of,
        ranked=(pair_of >= 0) & conflicted(pairs)[np.maximum(pair_of, 0)],
    )
