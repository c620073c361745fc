"""Noise calibration against values worked out by hand, and noise no one can replay."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pprl.protocol.privacy.noise import (
    CalibrationError,
    attack_success,
    describe,
    gaussian_epsilon,
    sigma_for_success,
    success_floor,
)
from pprl.protocol.vectors import randomness
from pprl.protocol.vectors.randomness import secret_generator
from pprl.protocol.vectors.release import Release

# erf(0.5), erf(1), erf(0.4) and erf(1 / (2 sqrt 2)) = P(|Z| < 1/2), from tables.
ERF_HALF = 0.5204998778130465
ERF_ONE = 0.8427007929497149
ERF_0_4 = 0.42839235504666845
ERF_FLOOR_1 = 0.38292492254802624


def test_attack_success_by_hand() -> None:
    # sigma = 1, sigma0 = 1: sqrt(2) / (2 sqrt(2)) = 1/2.
    assert attack_success(1.0, 1.0) == pytest.approx(ERF_HALF, abs=1e-12)
    # sigma = 1, sigma0 = 1/2: sqrt(2) / sqrt(2) = 1.
    assert attack_success(1.0, 0.5) == pytest.approx(ERF_ONE, abs=1e-12)
    assert success_floor(1.0) == pytest.approx(ERF_FLOOR_1, abs=1e-12)
    # More noise, less success, never below the floor.
    values = [attack_success(s, 1.0) for s in (0.5, 1, 2, 8, 1e6)]
    assert values == sorted(values, reverse=True) and values[-1] > ERF_FLOOR_1


@pytest.mark.parametrize(
    ("tau", "sigma0", "sigma"),
    [
        (ERF_HALF, 1.0, 1.0),  # erf(x) = tau with x = 1/2: 1 / sqrt(8 * 1/4 * 1 - 1) = 1
        (ERF_ONE, 0.5, 1.0),  # x = 1: 1 / sqrt(8 * 1 * 1/4 - 1) = 1
        (ERF_0_4, 1.0, 1.8898223650461361),  # x = 0.4: 1 / sqrt(1.28 - 1)
    ],
)
def test_sigma_from_target_success_by_hand(tau: float, sigma0: float, sigma: float) -> None:
    found = sigma_for_success(tau, sigma0)
    assert found == pytest.approx(sigma, rel=1e-9)
    assert attack_success(found, sigma0) <= tau + 1e-15


def test_unreachable_targets_are_refused_with_the_floor() -> None:
    with pytest.raises(CalibrationError, match=r"0\.382925"):
        sigma_for_success(0.38, 1.0)
    for tau in (0.0, 1.0, -0.1):
        with pytest.raises(CalibrationError, match="must be in"):
            sigma_for_success(tau, 1.0)


def test_gaussian_mechanism_epsilon_by_hand() -> None:
    # sqrt(2 ln(1.25 / 1e-5)) = sqrt(2 * 11.7360690) = 4.8448050
    assert gaussian_epsilon(1.0, 1.0, 1e-5) == pytest.approx(4.844805, abs=1e-6)
    assert gaussian_epsilon(4.844805, 1.0, 1e-5) == pytest.approx(1.0, abs=1e-6)
    assert gaussian_epsilon(2.0, 3.0, 1e-5) == pytest.approx(1.5 * 4.844805, abs=1e-5)
    with pytest.raises(ValueError, match="delta"):
        gaussian_epsilon(1.0, 1.0, 1.5)


def test_noise_comes_from_the_secure_source(monkeypatch) -> None:
    calls = []

    def randbits(k: int) -> int:
        calls.append(k)
        return 12345

    monkeypatch.setattr(randomness.secrets, "randbits", randbits)
    drawn = secret_generator().random(3)
    assert 256 in calls  # 256 secret bits seed it...
    np.testing.assert_array_equal(drawn, np.random.default_rng(12345).random(3))  # ...and only them


def test_two_secret_generators_draw_different_noise() -> None:
    distances = np.zeros((50, 4), dtype=np.uint8)
    first = Release(1.0).encode(distances, secret_generator())
    second = Release(1.0).encode(distances, secret_generator())
    assert not np.array_equal(first, second)


def test_describe_states_tau_epsilon_and_where_the_bound_holds() -> None:
    assert describe(0.0, 1.5, 400) == "no noise: the released distances are exact"
    words = describe(1.0, 2.0, 4)
    # sensitivity sqrt(4) / 2 = 1, so epsilon = 4.844805 / sigma; tau = erf(sqrt(2) / 4 sqrt 2)
    assert "epsilon 4.845 at delta 1e-05" in words
    assert f"tau {math.erf(0.25):.4f}" in words
    assert "(2 edits, sigma0 2)" in words
    assert "classical bound holds for epsilon < 1 only" in words
    assert "only" not in describe(10.0, 2.0, 4)  # epsilon 0.4845
