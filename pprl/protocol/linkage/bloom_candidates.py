"""Candidate pairs for the Bloom release: every pair a linear classifier can accept, found
without scoring all pairs.

A linear model's decision on a pair is b + sum_a w_a s_a(d_a) plus, for an attribute missing
on one side or both, that indicator's weight (s_a caps a distance when the model saturates).
For the rows of one missing pattern on each side, the attributes present on both sides with
a negative weight are the only ones that can pull the decision down; everything else is at
most a constant C. The decision exceeds 0 only if sum over those attributes of
|w_a| s_a(d_a) < C. Split C in shares beta_a = C |w_a| t_a / sum_b |w_b| t_b (t_a: the
largest s_a can be): if every attribute had |w_a| s_a(d_a) >= beta_a the sum would reach C,
so at least one has d_a < t_a C / sum_b |w_b| t_b (pigeonhole). The candidates are the pairs
with some attribute below that bound, found by comparing
the distinct filters of each attribute: exact, so matching keeps exactly the pairs scoring
all pairs keeps (`tests/test_bloom_candidates.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pprl.protocol.model.classifier import Model, full_weights
from pprl.protocol.model.features import indicator_features
from pprl.protocol.vectors.bloom import FEATURES_PER_ENTRY, dice_distance

# Bounds are loosened by this much so that float32 rounding never drops a pair.
_SLACK = 1e-4
_JOIN_BLOCK = 1024
_SCORE_BLOCK = 1 << 18


@dataclass(frozen=True)
class Packed:
    """Filters as 64-bit words, for popcounts of candidate pairs."""

    words: np.ndarray  # (n, attributes, bits / 64) uint64
    counts: np.ndarray  # (n, attributes) float32

    @classmethod
    def of(cls, filters: np.ndarray) -> Packed:
        words = np.ascontiguousarray(filters).view(np.uint64)
        counts = np.bitwise_count(words).sum(axis=-1, dtype=np.int64).astype(np.float32)
        return cls(words, counts)


def _weights(model: Model, entries: int) -> tuple[np.ndarray, float] | None:
    if model.kind != "linear":
        return None
    weights = model.arrays["weights"]
    if len(weights) != FEATURES_PER_ENTRY * entries:
        weights = full_weights(weights, entries)
    return np.asarray(weights, dtype=np.float64), float(model.arrays["bias"])


def _patterns(missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct missing patterns (p, attributes) and each row's pattern index."""
    patterns, inverse = np.unique(missing, axis=0, return_inverse=True)
    return patterns, inverse.ravel()


def _bounds(
    weights: np.ndarray, bias: float, caps: np.ndarray | None, pa: np.ndarray, pb: np.ndarray
) -> dict[int, float] | None:
    """Per constraining attribute, the distance below which a pair may be accepted (a pair is
    a candidate when one attribute is); None when every pair of these patterns is a
    candidate, {} when none is."""
    entries = len(pa)
    w, one_w, both_w = weights[:entries], weights[entries : 2 * entries], weights[2 * entries :]
    top = np.ones(entries) if caps is None else np.minimum(1.0, caps[:entries])
    present = ~pa & ~pb
    constant = bias
    constant += float(np.sum((w * top + one_w)[pa ^ pb]))
    constant += float(np.sum((w * top + both_w)[pa & pb]))
    constant += float(np.sum((w * top)[present & (w > 0)]))
    useful = np.flatnonzero(present & (w < 0))
    if len(useful) == 0:
        return None if constant > 0 else {}
    if constant <= 0:
        return {}
    # Split C among the attributes in proportion to the most each can take away,
    # |w_a| top_a: each then has the same share of its range as its bound.
    reach = float(np.sum(-w[useful] * top[useful]))
    if reach <= constant:
        return None  # even the farthest pair is not ruled out
    share = constant / reach * (1 + _SLACK) + _SLACK
    return {a: share * top[a] for a in useful.tolist()}


class _Groups:
    """The distinct filters of some rows, and the rows holding each, grouped."""

    def __init__(self, words: np.ndarray) -> None:
        self.values, inverse = np.unique(words, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        self.rows = np.argsort(inverse, kind="stable")  # positions, grouped by value
        self.starts = np.searchsorted(inverse[self.rows], np.arange(len(self.values) + 1))

    def sizes(self, values: np.ndarray) -> np.ndarray:
        return self.starts[values + 1] - self.starts[values]


def _expand(
    left: _Groups, right: _Groups, us: np.ndarray, vs: np.ndarray, distances: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (i, j) of every pair of rows holding the value pairs (us[p], vs[p]), with
    the pair's distance."""
    size_a, size_b = left.sizes(us), right.sizes(vs)
    total = size_a * size_b
    pair = np.repeat(np.arange(len(us)), total)
    offset = np.arange(int(total.sum())) - np.repeat(np.cumsum(total) - total, total)
    i, j = np.divmod(offset, size_b[pair])
    rows_a = left.rows[left.starts[us[pair]] + i]
    return rows_a, right.rows[right.starts[vs[pair]] + j], distances[pair]


def _close_pairs(
    a: np.ndarray, b: np.ndarray, bound: float
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Pairs (i, j) of distinct filters (word rows) with Dice distance under `bound`, and
    their distances."""
    bits_a = np.unpackbits(a.view(np.uint8), axis=1).astype(np.float32)
    bits_b = np.unpackbits(b.view(np.uint8), axis=1).astype(np.float32)
    count_a, count_b = bits_a.sum(axis=1), bits_b.sum(axis=1)
    for start in range(0, len(bits_a), _JOIN_BLOCK):
        block = bits_a[start : start + _JOIN_BLOCK]
        distance = dice_distance(
            block @ bits_b.T, count_a[start : start + _JOIN_BLOCK, None], count_b[None, :]
        )
        i, j = np.nonzero(distance < bound)
        yield i + start, j, distance[i, j]


def _bound_table(
    weights: np.ndarray,
    bias: float,
    caps: np.ndarray | None,
    patterns_a: np.ndarray,
    patterns_b: np.ndarray,
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(p_a, p_b, attributes) bounds (-inf: no candidate through that attribute), and the
    pattern pairs of which every pair is a candidate."""
    table = np.full((len(patterns_a), len(patterns_b), patterns_a.shape[1]), -np.inf)
    everything = []
    for g, pattern_a in enumerate(patterns_a):
        for h, pattern_b in enumerate(patterns_b):
            bounds = _bounds(weights, bias, caps, pattern_a, pattern_b)
            if bounds is None:
                everything.append((g, h))
            for a, bound in (bounds or {}).items():
                table[g, h, a] = bound
    return table, everything


def candidate_keys(own: Packed, peer: Packed, model: Model) -> np.ndarray | None:
    """Sorted distinct keys own_row * len(peer) + peer_row of every pair the model can
    accept, or None when no bound applies (score all pairs).

    One comparison of distinct filters per attribute, under the loosest bound any pair of
    missing patterns allows it; each row pair found is then held to its own patterns' bound.
    """
    entries = own.words.shape[1]
    found = _weights(model, entries)
    if found is None:
        return None
    weights, bias = found
    n_b = len(peer.counts)
    patterns_a, of_a = _patterns(own.counts == 0)
    patterns_b, of_b = _patterns(peer.counts == 0)
    table, everything = _bound_table(weights, bias, model.caps, patterns_a, patterns_b)
    keys = []
    for g, h in everything:
        rows_a, rows_b = np.flatnonzero(of_a == g), np.flatnonzero(of_b == h)
        keys.append((rows_a[:, None] * n_b + rows_b[None, :]).ravel())
    for a in range(entries):
        loosest = float(table[:, :, a].max())
        if loosest == -np.inf:
            continue
        rows_a = np.flatnonzero(own.counts[:, a] > 0)
        rows_b = np.flatnonzero(peer.counts[:, a] > 0)
        left, right = _Groups(own.words[rows_a, a]), _Groups(peer.words[rows_b, a])
        for us, vs, distances in _close_pairs(left.values, right.values, loosest):
            i, j, d = _expand(left, right, us, vs, distances)
            i, j = rows_a[i], rows_b[j]
            keep = d < table[of_a[i], of_b[j], a]
            keys.append(i[keep] * n_b + j[keep])
    if not keys:
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(keys))


def score_keys(
    own: Packed, peer: Packed, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(own rows, peer rows, (k, 3A) features) of candidate pairs, from popcounts of the
    packed words: the features bloom.block_features computes for the same pairs."""
    n_b = len(peer.counts)
    rows_a, rows_b = np.divmod(keys, n_b)
    entries = own.words.shape[1]
    features = np.empty((len(keys), FEATURES_PER_ENTRY * entries), dtype=np.float32)
    for start in range(0, len(keys), _SCORE_BLOCK):
        part = slice(start, start + _SCORE_BLOCK)
        i, j = rows_a[part], rows_b[part]
        shared = np.bitwise_count(own.words[i] & peer.words[j]).sum(axis=-1, dtype=np.int64)
        ca, cb = own.counts[i], peer.counts[j]
        features[part, :entries] = dice_distance(shared.astype(np.float32), ca, cb)
        features[part, entries:] = indicator_features(ca == 0, cb == 0)
    return rows_a, rows_b, features
