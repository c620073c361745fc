"""How likely a scorer's checks miss an evaluator that returns values of its own in place of
its results, read from a finished run's state (benchmarks/sealed_check_power.py).

The evaluator wants signs of functions of the scorer's key: the scorer's actions tell at most
about one bit a slot (hidden join: whether it names it) or a candidate pair (graph: whether
it links it), so reading `signs` bits takes replacing the results of at least that many. It
sees the units checks come in (an entry's slots under the hidden join, a row's pairs under
the graph; counts and layout are both parties'), never which units are checks. The checks
are drawn with a chance proportional to a unit's slots (hidden_join.weighted_sample), K of
them one after another (or alike, as first built: `alike`), so a replaced set holding the
share w of the weight the checks are drawn from escapes each draw with a chance of at most
1 - w, or has it pass when the replaced value happens to land in the due bucket (`PASS`):
unnoticed with a chance of about (1 - w (1 - PASS))^K. Two plans are read: the largest units
first, and any slots (w the replaced share of all slots; drawn in proportion to slots only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed import session

# The signs one crafted ciphertext could give (docs/research/sealed.md, the crafted-results model).
RING = 8192
# The buckets of the default thresholds, which the runs read here were made with.
BUCKETS = len(session.thresholds(session.DEFAULT_THRESHOLDS)) + 1
# The chance a replaced check slot decrypts to its due bucket anyway: under the graph join a
# pair in no conflict is told its sign alone (1 in 2); a bucket at random, 1 in BUCKETS.
PASS = {"sign": 0.5, "bucket": 1 / BUCKETS}


@dataclass(frozen=True)
class Power:
    """Of one direction: the units (entries or rows) with slots, the checks drawn among them
    and their slots, and for reading `signs` bits the units replaced largest first and the
    chance that goes unnoticed, and the chance for any `signs` slots."""

    units: int
    slots: int
    checks: int
    check_slots: int
    signs: int
    replaced: int
    unnoticed_largest_first: float
    unnoticed_any_slots: float | None  # None: checks drawn alike


def _unnoticed(share: float, passing: float, checks: int) -> float:
    return max(0.0, 1 - share * (1 - passing)) ** checks


def _power(
    sizes: np.ndarray,
    weights: np.ndarray,
    made: np.ndarray,
    signs: int,
    passing: float,
    alike: bool = False,
) -> Power:
    """`sizes`: slots per unit; `weights`: what the checks are drawn in proportion to (0 for a
    unit never drawn); `made`: whether each unit is a check in this run; `alike`: the weights
    are not the slots, so any slots' chance is not read."""
    order = np.argsort(-sizes, kind="stable")
    reach = np.cumsum(sizes[order])
    replaced = (
        len(sizes)
        if not len(sizes) or reach[-1] < signs
        else int(np.searchsorted(reach, signs)) + 1
    )
    total = max(1, int(weights.sum()))
    checks = int(np.count_nonzero(made))
    largest = weights[order[:replaced]].sum() / total
    return Power(
        units=len(sizes),
        slots=int(sizes.sum()),
        checks=checks,
        check_slots=int(sizes[made].sum()),
        signs=signs,
        replaced=replaced,
        unnoticed_largest_first=_unnoticed(largest, passing, checks),
        unnoticed_any_slots=None
        if alike
        else _unnoticed(min(1.0, signs / max(1, sizes.sum())), passing, checks),
    )


def hidden(
    rows: np.ndarray, counts: np.ndarray, made: np.ndarray, signs: int = RING, alike: bool = False
) -> Power:
    """One direction of a hidden join: the scorer's entries' own rows, the evaluator's counts
    per entry, and the entries made checks (hidden_join.checks, >= 0); `alike`: as if as many
    had been drawn with equal chances (the first checks' way), not in proportion to slots."""
    held = counts > 0
    per_row = np.bincount(rows, weights=held, minlength=int(rows.max(initial=-1)) + 1)
    eligible = held & (per_row[rows] >= 2)
    weights = np.where(eligible, 1 if alike else counts, 0)
    return _power(counts[held], weights[held], (made >= 0)[held], signs, PASS["bucket"], alike)


def graph(pairs: np.ndarray, made_rows: np.ndarray, signs: int = RING) -> Power:
    """One direction of the keys' graph: the scorer's candidate pairs (own row first) and the
    rows made checks (graph_checks.drawn); a replaced check row passes by chance at best
    with a sign's odds (a pair in no conflict), taken for all."""
    rows, sizes = np.unique(pairs[:, 0], return_counts=True)
    return _power(sizes, sizes, np.isin(rows, made_rows), signs, PASS["sign"])
