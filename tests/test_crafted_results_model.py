"""The model of an evaluator returning crafted ciphertexts: its ring arithmetic is the
negacyclic ring's and the canonical embedding's (checked against the definitions), and the
signs of the decryptions give the secret key's signs away where coins' signs give nothing."""

from __future__ import annotations

import numpy as np
import pytest

from lab.crafted_results_model import Ring, estimate


def _negacyclic(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = len(a)
    out = np.zeros(n)
    for i in range(n):
        for j in range(n):
            k = i + j
            out[k % n] += a[i] * b[j] * (-1 if k >= n else 1)
    return out


def test_the_ring_is_the_negacyclic_ring_and_its_embedding() -> None:
    rng = np.random.default_rng(0)
    ring = Ring(16)
    a, b, g = rng.normal(size=16), rng.normal(size=16), rng.normal(size=16)
    assert np.allclose(ring.times(a, b), _negacyclic(a, b))
    assert np.isclose(ring.times(a, b) @ g, b @ ring.transpose_times(a, g))
    roots = np.exp(1j * np.pi * (2 * np.arange(8) + 1) / 16)
    assert np.allclose(ring.slots(a), np.polyval(a[::-1], roots))
    w = rng.normal(size=8) + 1j * rng.normal(size=8)
    assert np.isclose(np.sum(np.real(np.conj(w) * ring.slots(a))), a @ ring.slots_transpose(w))


def test_the_decryptions_signs_give_the_keys_signs_away() -> None:
    signs = estimate(1024, 4, np.random.default_rng(1))
    coins = estimate(1024, 4, np.random.default_rng(1), signs_known=False)
    assert signs.signs_right_where_not_zero > 0.9
    assert signs.coefficients_right > 0.6
    assert abs(coins.signs_right_where_not_zero - 0.5) < 0.06
    assert coins.coefficients_right < 0.45


def test_fewer_signs_read_give_less_of_the_key_away() -> None:
    """A quarter of one ciphertext's signs tell the estimator less than all of them, and more
    than coins; a bit count outside the ciphertext's signs is refused."""
    every = estimate(1024, 1, np.random.default_rng(2))
    quarter = estimate(1024, 1, np.random.default_rng(2), bits=256)
    coins = estimate(1024, 1, np.random.default_rng(2), signs_known=False, bits=256)
    assert quarter.signs_per_coefficient == 0.25
    assert every.signs_right_where_not_zero > quarter.signs_right_where_not_zero + 0.05
    assert quarter.signs_right_where_not_zero > coins.signs_right_where_not_zero + 0.03
    with pytest.raises(ValueError, match="bits must lie"):
        estimate(1024, 1, np.random.default_rng(2), bits=2048)
