"""The distance between two values of one kind, as smashing and the reference statistics use it.

Levenshtein on the canonical text for every kind but quantities; for dates the smaller of that
and one more than the distance with day and month exchanged, so a date and its day/month swap
get vectors within one edit of each other, and a one-year slip stays one or two edits. A
quantity's distance is its absolute difference in units of the attribute's scale, rounded to
the nearest integer (FedSim's Euclidean distance for numbers): a height of 175.5 and a
reference height of 170 are 11 units apart at a scale of 0.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pprl.protocol.kinds import DEFAULT_KIND, swap_day_month

# Cells of a quantity table computed at once: bounds the float64 scratch (32 MiB) at any size.
_QUANTITY_CELLS = 1 << 22


class Metric(Protocol):
    """A distance other than the kind's own (pprl.protocol.bloom.FilterDistance)."""

    @property
    def identity(self) -> str: ...

    def table(
        self,
        values_a: Sequence[str],
        values_b: Sequence[str],
        kind: str,
        clamp: int,
        scale: float | None,
    ) -> np.ndarray: ...


def kind_distances(
    values_a: Sequence[str],
    values_b: Sequence[str],
    kind: str = DEFAULT_KIND,
    clamp: int = 254,
    scale: float | None = None,
    metric: Metric | None = None,
) -> np.ndarray:
    """(len(a), len(b)) uint8 distances of the kind between present (non-empty) values;
    anything above `clamp` - 1 reads as `clamp`. `scale` is a quantity's unit of distance;
    `metric`, when given, replaces the kind's distance."""
    if metric is not None:
        return metric.table(values_a, values_b, kind, clamp, scale)
    if kind == "quantity":
        if scale is None:
            raise ValueError("a quantity's distance needs its scale")
        return _quantity_distances(values_a, values_b, clamp, scale)
    table = process.cdist(
        values_a,
        values_b,
        scorer=Levenshtein.distance,
        dtype=np.uint8,
        workers=-1,
        score_cutoff=clamp - 1,
    )
    if kind == "date":
        swapped = process.cdist(
            [swap_day_month(value) for value in values_a],
            values_b,
            scorer=Levenshtein.distance,
            dtype=np.int32,
            workers=-1,
            score_cutoff=clamp - 1,
        )
        np.minimum(table, np.minimum(swapped + 1, clamp).astype(np.uint8), out=table)
    return table


def _quantity_distances(
    values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float
) -> np.ndarray:
    """round(|a - b| / scale), at most `clamp`, a block of rows at a time."""
    numbers_a = np.array([float(value) for value in values_a], dtype=np.float64)
    numbers_b = np.array([float(value) for value in values_b], dtype=np.float64)
    table = np.empty((len(numbers_a), len(numbers_b)), dtype=np.uint8)
    rows = max(1, _QUANTITY_CELLS // max(1, len(numbers_b)))
    for start in range(0, len(numbers_a), rows):
        block = np.abs(numbers_a[start : start + rows, None] - numbers_b[None, :]) / scale
        table[start : start + rows] = np.minimum(np.rint(block), clamp)
    return table
