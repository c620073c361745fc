"""Blocking keys joined by hash bins, in the clear: each party puts each of its entries in the
bin its key hashes to, C a bin with dummies of its own, so that a secure computation compares
C x C entries a bin and nothing of the binning is computed inside (docs/research/sealed.md, "A join
inside a secure computation"), and the whole join it is measured against. Shared by the
benchmarks that run that join inside SPU and that model what a pipeline around it would link
and reveal."""

from __future__ import annotations

import hashlib

import numpy as np

# Bits of a hashed key by the ring's: in 2^64, 48 (two distinct keys collide with chance
# 2^-48, none expected here); in 2^32, 30, which the signed ring's comparisons keep whole.
# With 30 bits a few distinct keys collide, and both the plaintext join and the computation
# then join their rows (FEBRL4 names: 5,757 pairs joined against 5,746 with 48 bits).
KEY_BITS = {64: 48, 32: 30}


def hashed(keys: list[list[str]], salt: bytes, bits: int) -> list[list[int]]:
    """Each row's distinct keys as `bits`-bit integers under a run's salt."""
    return [
        sorted(
            {
                int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8, key=salt).digest())
                >> (64 - bits)
                for key in row
            }
        )
        for row in keys
    ]


def plaintext_join(
    alice: list[list[int]], bob: list[list[int]]
) -> tuple[set[tuple[int, int]], int]:
    """The pairs sharing a key, and the slots a join without a window lays out (a pair once
    per key it shares), as the hidden join does."""
    holders: dict[int, list[int]] = {}
    for j, row in enumerate(bob):
        for key in row:
            holders.setdefault(key, []).append(j)
    pairs: set[tuple[int, int]] = set()
    slots = 0
    for i, row in enumerate(alice):
        for key in row:
            slots += len(holders.get(key, ()))
            pairs.update((i, j) for j in holders.get(key, ()))
    return pairs, slots


def binned(
    alice: list[list[int]],
    bob: list[list[int]],
    capacity: int,
    field: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Each party's entries in hash bins by key (as many bins as the larger side has entries),
    `capacity` a bin, a full bin's excess dropped at random and its empty places filled with
    a dummy key of the party's own that meets no key of the other's (row -1). Each party bins
    its own entries; only the bins' keys would enter the computation, whose C x C equalities
    a bin are slots a fixed number an entry, as the window's are."""
    sides = {"a": alice, "b": bob}
    bins = max(sum(map(len, rows)) for rows in sides.values())
    out = {}
    for offset, (name, rows) in enumerate(sides.items()):
        flat = [(key, i) for i, row in enumerate(rows) for key in row]
        keys = np.full((bins, capacity), 2 ** KEY_BITS[field] + offset, dtype=np.int64)
        held = np.full((bins, capacity), -1, dtype=np.int64)
        filled = np.zeros(bins, dtype=np.int64)
        for t in rng.permutation(len(flat)):
            key, row = flat[t]
            place = key % bins
            if filled[place] < capacity:
                keys[place, filled[place]], held[place, filled[place]] = key, row
                filled[place] += 1
        out[f"keys_{name}"], out[f"rows_{name}"] = keys, held
    return out


def bins_in_the_clear(data: dict[str, np.ndarray]) -> np.ndarray:
    """What secure_join_spu.bin_join computes and opens, computed in the clear."""
    return data["keys_a"][:, :, None] == data["keys_b"][:, None, :]


def binned_pairs(flags: np.ndarray, data: dict[str, np.ndarray]) -> set[tuple[int, int]]:
    """The (Alice row, Bob row) pairs the opened bin flags hold."""
    where, first, second = np.nonzero(flags)
    alice, bob = data["rows_a"][where, first], data["rows_b"][where, second]
    return set(zip(alice.tolist(), bob.tolist(), strict=True))
