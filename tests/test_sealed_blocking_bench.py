"""benchmarks/sealed_blocking.py: the candidate pairs are exactly the pairs that share a key,
and a missing value's key matches nothing."""

from __future__ import annotations

import numpy as np

from tests.scripts import benchmark_script

bench = benchmark_script("sealed_blocking")


def _brute_force(keys_a: list[np.ndarray], keys_b: list[np.ndarray]) -> set[tuple[int, int]]:
    return {
        (i, j)
        for key_a, key_b in zip(keys_a, keys_b, strict=True)
        for i, a in enumerate(key_a)
        for j, b in enumerate(key_b)
        if a >= 0 and a == b
    }


def test_candidates_are_the_pairs_sharing_a_key_of_the_same_band() -> None:
    rng = np.random.default_rng(3)
    n_a, n_b = 40, 30
    keys_a = [bench._tagged(rng.integers(-1, 6, n_a), 0, band) for band in range(3)]
    keys_b = [bench._tagged(rng.integers(-1, 6, n_b), 0, band) for band in range(3)]
    codes = bench.candidate_codes(keys_a, keys_b, n_b)
    found = {(int(c) // n_b, int(c) % n_b) for c in codes}
    assert found == _brute_force(keys_a, keys_b)
    assert 0 < len(found) < n_a * n_b
    # Tagged bands never share a key: band 0's keys against band 1's give no pair.
    assert len(bench.candidate_codes(keys_a[:1], keys_b[1:2], n_b)) == 0


def test_a_missing_value_gets_no_key_and_completeness_counts_what_was_kept() -> None:
    bits = np.array([[True, False], [True, False], [False, True]])
    keys = bench.band_keys(bits, 2, np.array([True, False, True]))
    assert keys[0].tolist() == [1, -1, 2]
    codes = bench.candidate_codes(keys, keys, 3)
    assert {(int(c) // 3, int(c) % 3) for c in codes} == {(0, 0), (2, 2)}
    assert bench.completeness(codes, {(0, 0), (1, 1)}, 3) == 0.5
