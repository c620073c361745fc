"""benchmarks/secure_join_cost.py's plaintext side: the entries it hands the secure
computation, the join it checks against, and how it reads the opened flags. The computation
itself needs SPU, which the suite does not install; the script's own computation of it in
the clear (window_in_the_clear) stands in, so that the reading of the flags is checked
against the plaintext join it is compared with."""

from __future__ import annotations

import numpy as np

from lab import hash_bins
from tests.scripts import benchmark_script

bench = benchmark_script("secure_join_cost")


def test_hashed_keys_are_distinct_per_row_and_equal_across_sides_only_under_one_salt() -> None:
    for bits in hash_bins.KEY_BITS.values():
        a = hash_bins.hashed([["k1", "k2", "k1"], []], b"salt", bits)
        b = hash_bins.hashed([["k2"]], b"salt", bits)
        assert len(a[0]) == 2 and a[1] == []
        assert b[0][0] in a[0]
        assert hash_bins.hashed([["k2"]], b"other", bits)[0][0] not in a[0]
        assert all(0 <= k < 2**bits for k in a[0])
        assert max(a[0]) >= 2 ** (bits - 4)  # the top bits are used, not only the low ones


def test_entries_carry_side_and_row() -> None:
    data = bench.entries([[5, 7], [7]], [[7], [], [9]])
    assert data["keys"].tolist() == [5, 7, 7, 7, 9]
    assert data["sides"].tolist() == [0, 0, 0, 1, 1]
    assert data["rows"].tolist() == [0, 0, 1, 0, 2]


def test_the_plaintext_join_counts_a_pair_once_and_its_slots_once_a_key() -> None:
    pairs, slots = hash_bins.plaintext_join([[1, 2], [3]], [[1, 2], [2], [4]])
    assert pairs == {(0, 0), (0, 1)}
    assert slots == 3  # (0, 0) by keys 1 and 2, (0, 1) by key 2


def test_a_wide_enough_window_finds_every_joined_pair_and_a_narrow_one_misses_big_blocks() -> None:
    rng = np.random.default_rng(3)
    alice = [sorted(set(rng.integers(0, 40, 3).tolist())) for _ in range(60)]
    bob = [sorted(set(rng.integers(0, 40, 3).tolist())) for _ in range(60)]
    data = bench.entries(alice, bob)
    joined, _ = hash_bins.plaintext_join(alice, bob)
    biggest = max(np.unique(data["keys"], return_counts=True)[1])
    found = bench.flagged_pairs(*bench.window_in_the_clear(data, int(biggest)))
    assert found == joined
    flags, sides, rows = bench.window_in_the_clear(data, int(biggest))
    # Bob's entry first within a key, as a secure sort may leave it: read by the sides.
    swapped = {(a, b) for b, a in bench.flagged_pairs(flags, 1 - sides, rows)}
    assert bench.flagged_pairs(flags, sides, rows) == swapped == joined
    narrow = bench.flagged_pairs(*bench.window_in_the_clear(data, 1))
    assert narrow < joined  # only adjacent entries: Alice's last and Bob's first of a key


def test_bins_wide_enough_find_every_joined_pair_and_dummies_never_meet() -> None:
    rng = np.random.default_rng(5)
    alice = [sorted(set(rng.integers(0, 40, 3).tolist())) for _ in range(60)]
    bob = [sorted(set(rng.integers(0, 40, 3).tolist())) for _ in range(50)]
    joined, _ = hash_bins.plaintext_join(alice, bob)
    for field in hash_bins.KEY_BITS:
        wide = hash_bins.binned(alice, bob, 60, field, rng)
        # As many bins as the larger side's entries, the capacity a bin, for each side.
        assert wide["keys_a"].shape == wide["keys_b"].shape == (sum(map(len, alice)), 60)
        flags = hash_bins.bins_in_the_clear(wide)
        assert hash_bins.binned_pairs(flags, wide) == joined
        # Every flag is a real entry of each side: no dummy (row -1) meets anything.
        where, first, second = np.nonzero(flags)
        assert np.all(wide["rows_a"][where, first] >= 0) and np.all(
            wide["rows_b"][where, second] >= 0
        )
        # Each side's real entries all placed, in the bin of their key.
        real = wide["rows_a"] >= 0
        assert real.sum() == sum(map(len, alice))
        bins = len(wide["keys_a"])
        assert np.all(wide["keys_a"][real] % bins == np.nonzero(real)[0])
    # One place a bin drops most entries of the 40 keys' crowded bins: pairs are missed.
    narrow = hash_bins.binned(alice, bob, 1, 64, rng)
    assert hash_bins.binned_pairs(hash_bins.bins_in_the_clear(narrow), narrow) < joined
