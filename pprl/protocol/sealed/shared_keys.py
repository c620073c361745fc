"""Candidate pairs from doubly blinded blocking keys: the rows of two parties that share at
least one key, and the block sizes a party sees (what the keys reveal besides the pairs)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np


def shared_key_pairs(own: Sequence[Sequence[bytes]], peer: Sequence[Sequence[bytes]]) -> np.ndarray:
    """(pairs, 2) int64 rows (own row, peer row), sorted and unique: every pair of rows with a
    doubly blinded key in common. `own[i]` and `peer[j]` hold each row's keys."""
    return shared_key_counts(own, peer)[0]


def shared_key_counts(
    own: Sequence[Sequence[bytes]],
    peer: Sequence[Sequence[bytes]],
    own_entries: Sequence[Sequence[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`shared_key_pairs` and, per pair, how many of the own row's entries hold a key the
    peer row holds: `own_entries[i][k]` numbers the entry of key `own[i][k]` (the hidden
    join's, recipes.entry_label), each key its own entry when None. The hidden join gives a
    pair a slot per entry."""
    rows_of: defaultdict[bytes, list[int]] = defaultdict(list)
    for j, keys in enumerate(peer):
        for key in set(keys):
            rows_of[key].append(j)
    numbers = own_entries or [range(len(keys)) for keys in own]
    width = 1 + max((max(row, default=0) for row in numbers), default=0)
    codes = [
        (i * len(peer) + j) * width + entry
        for i, (keys, entries) in enumerate(zip(own, numbers, strict=True))
        for key, entry in dict(zip(keys, entries, strict=True)).items()
        for j in rows_of.get(key, ())
    ]
    distinct = np.unique(np.asarray(codes, dtype=np.int64)) // width
    unique, counts = np.unique(distinct, return_counts=True)
    pairs = np.stack([unique // max(len(peer), 1), unique % max(len(peer), 1)], axis=1)
    return pairs, counts


def block_sizes(rows: Sequence[Sequence[bytes]]) -> Counter[int]:
    """How many distinct keys are held by exactly s rows, for each s: what the other party
    learns of a party's key frequencies from the doubly blinded values alone."""
    holders = Counter(key for keys in rows for key in set(keys))
    return Counter(holders.values())
