"""Gaussian noise for released tensors: its scale from a target attack success, what that
scale buys under the Gaussian mechanism, and how to say it in words.

Calibration (FedSim, appendix A): an attacker who recovers a released standardised value
(value - mean) / sigma0 to within half a unit, from the value plus N(0, sigma^2) noise,
succeeds with probability tau = erf(sqrt(sigma^2 + 1) / (2 sqrt(2) sigma sigma0)). tau falls
as sigma grows, towards erf(1 / (2 sqrt(2) sigma0)); no noise can push it below that floor.
"""

from __future__ import annotations

import math

from pprl.protocol.errors import PprlError, SettingError

_BISECTION_STEPS = 200


class CalibrationError(PprlError, ValueError):
    """The requested target cannot be reached with any noise scale; the message says why."""


def attack_success(sigma: float, sigma0: float) -> float:
    """tau for noise scale sigma on values standardised by sigma0 (both > 0)."""
    if sigma <= 0 or sigma0 <= 0:
        raise SettingError(f"sigma and sigma0 must be positive, got {sigma} and {sigma0}")
    return math.erf(math.sqrt(sigma * sigma + 1) / (2 * math.sqrt(2) * sigma * sigma0))


def success_floor(sigma0: float) -> float:
    """The limit of attack_success as sigma grows without bound."""
    return math.erf(1 / (2 * math.sqrt(2) * sigma0))


def sigma_for_success(tau: float, sigma0: float) -> float:
    """The smallest sigma whose attack_success is at most tau.

    attack_success falls monotonically in sigma, so bisection on it is exact to float
    precision; the answer is checked against the closed form 1 / sqrt(8 x^2 sigma0^2 - 1)
    with erf(x) = tau in the tests.
    """
    if not 0 < tau < 1:
        raise CalibrationError(f"the target attack success must be in (0, 1), got {tau}")
    floor = success_floor(sigma0)
    if tau <= floor:
        raise CalibrationError(
            f"no noise brings the attack success to {tau}: with sigma0 = {sigma0} it stays "
            f"above {floor:.6f} however large sigma is"
        )
    low, high = 1e-12, 1.0
    while attack_success(high, sigma0) > tau:
        high *= 2
    for _ in range(_BISECTION_STEPS):
        middle = (low + high) / 2
        if attack_success(middle, sigma0) > tau:
            low = middle
        else:
            high = middle
    return high


def gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """epsilon of the Gaussian mechanism with noise sigma: sigma = sensitivity *
    sqrt(2 ln(1.25 / delta)) / epsilon. The classical theorem holds for epsilon < 1 only;
    callers must say so when the result is not below 1."""
    if sigma <= 0 or sensitivity <= 0 or not 0 < delta < 1:
        raise SettingError(
            f"need sigma > 0, sensitivity > 0 and 0 < delta < 1; got {sigma}, {sensitivity}, "
            f"{delta}"
        )
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / sigma


DELTA = 1e-5


def describe(
    sigma: float,
    sigma0: float,
    coordinates: int,
    delta: float = DELTA,
    unit: str = "edits",
    change: float = 1.0,
) -> str:
    """sigma, what it is in the distances' unit, the per-coordinate attack success and the
    Gaussian mechanism's epsilon, for one value changed by one edit: each of its
    `coordinates` released distances moves by at most `change` units (one edit; up to 2 q
    hashes bits between Bloom filters), an L2 sensitivity of change sqrt(coordinates) /
    sigma0."""
    if sigma == 0:
        return "no noise: the released distances are exact"
    epsilon = gaussian_epsilon(sigma, change * math.sqrt(coordinates) / sigma0, delta)
    caveat = "" if epsilon < 1 else " (the classical bound holds for epsilon < 1 only)"
    return (
        f"noise sigma {sigma:.4g} ({sigma * sigma0:.3g} {unit}, sigma0 {sigma0:.3g}): "
        f"per-coordinate attack success tau {attack_success(sigma, sigma0):.4f}; "
        f"Gaussian mechanism epsilon {epsilon:.4g} at delta {delta:g} for a one-edit change "
        f"over {coordinates} coordinates{caveat}"
    )
