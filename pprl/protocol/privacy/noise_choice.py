"""Noise chosen for the user: the smallest sigma at which a party's own release passes its
privacy gate.

The gate's attack (pprl.protocol.privacy.audit) re-identifies fewer records as the noise grows, so
the smallest passing sigma on a grid is found by bisection, measuring about six points
instead of every one. The measurement is a sample of the party's own records, released as
they will be (keyed noise gives the sample the very vectors the real release will hold),
attacked as the gate will attack them; the choice holds for that dictionary and reference set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pprl.protocol.privacy.noise import CalibrationError

# Eighth steps up to 8 standardised units (about 13 edits on census names): beyond that the
# linkage has long stopped working (docs/research/privacy.md), so a gate that needs more refuses.
SIGMA_STEPS: tuple[float, ...] = tuple(0.125 * i for i in range(65))


@dataclass(frozen=True)
class NoiseChoice:
    """The chosen sigma and every rate measured on the way, sigma -> share re-identified."""

    sigma: float
    limit: float
    rates: dict[float, float]

    def words(self) -> str:
        """Why this sigma: its own rate, and the rate one step below it when measured."""
        said = f"sigma {self.sigma:g} re-identified {self.rates[self.sigma]:.1%}"
        below = [s for s in self.rates if s < self.sigma]
        if below:
            # A failing step stops at the first attacker over the limit: a lower bound.
            nearest = max(below)
            said += f" (sigma {nearest:g}: at least {self.rates[nearest]:.1%})"
        return f"{said}; limit {self.limit:.1%}"


def choose_sigma(
    rate: Callable[[float], float],
    limit: float,
    steps: Sequence[float] = SIGMA_STEPS,
    hint: float | None = None,
) -> NoiseChoice:
    """The smallest step whose `rate` is at most `limit`, assuming rates fall as sigma grows,
    and whose next step passes too (a margin for the peer's proposal); CalibrationError
    when even the largest step's rate is above the limit.

    `hint` (a step, e.g. the previous run's choice) is measured first, then its neighbour on
    the side it points to: when the records and the gate's sample change little, two
    measurements settle the choice instead of about seven. A hint off the grid is ignored."""
    if not steps or list(steps) != sorted(set(steps)):
        raise ValueError("steps must be distinct and increasing")
    rates: dict[float, float] = {}

    def measured(index: int) -> float:
        sigma = steps[index]
        if sigma not in rates:
            rates[sigma] = rate(sigma)
        return rates[sigma]

    last = len(steps) - 1
    low, high = -1, last  # steps[high] passes; everything at or below low failed
    if hint is not None and hint in steps:
        start = list(steps).index(hint)
        if measured(start) <= limit:
            high = start
            if start > 0:
                low, high = (start - 1, start) if measured(start - 1) > limit else (-1, start - 1)
        else:
            low = start
            if start < last:
                low, high = (
                    (start, start + 1) if measured(start + 1) <= limit else (start + 1, last)
                )

    def refused() -> CalibrationError:
        return CalibrationError(
            f"even sigma {steps[last]:g} re-identifies {rates[steps[last]]:.1%} of the sampled "
            f"records, above the limit of {limit:.1%}"
        )

    if high == last and measured(last) > limit:
        raise refused()
    while high - low > 1:
        middle = (low + high) // 2
        if measured(middle) <= limit:
            high = middle
        else:
            low = middle
    # A step of margin: the peer may propose the next step up, and the run takes the larger
    # noise, which this gate must then pass too. Rates measured on a sample do not always
    # fall as sigma grows (FEBRL4: 10.0% at 1.625, 12.5% at 1.75, which stopped a run at
    # SMASH), so the step above is measured and, if it fails, the choice moves past it.
    while high < last and measured(high + 1) > limit:
        high += 2
        while high <= last and measured(high) > limit:
            high += 1
        if high > last:  # the last step failed (a hint may have left it unmeasured)
            raise refused()
    return NoiseChoice(steps[high], limit, dict(sorted(rates.items())))
