"""Candidate pairs from doubly blinded blocking keys: the rows of two parties that share at
least one key, and the block sizes a party sees (what the keys reveal besides the pairs)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np


def shared_key_pairs(own: Sequence[Sequence[bytes]], peer: Sequence[Sequence[bytes]]) -> np.ndarray:
    """(pairs, 2) int64 rows (own row, peer row), sorted and unique: every pair of rows with a
    doubly blinded key in common. `own[i]` and `peer[j]` hold each row's keys."""
    rows_of: defaultdict[bytes, list[int]] = defaultdict(list)
    for j, keys in enumerate(peer):
        for key in set(keys):
            rows_of[key].append(j)
    codes = [
        i * len(peer) + j
        for i, keys in enumerate(own)
        for key in set(keys)
        for j in rows_of.get(key, ())
    ]
    unique = np.unique(np.asarray(codes, dtype=np.int64))
    return np.stack([unique // max(len(peer), 1), unique % max(len(peer), 1)], axis=1)


def block_sizes(rows: Sequence[Sequence[bytes]]) -> Counter[int]:
    """How many distinct keys are held by exactly s rows, for each s: what the other party
    learns of a party's key frequencies from the doubly blinded values alone."""
    holders = Counter(key for keys in rows for key in set(keys))
    return Counter(holders.values())
