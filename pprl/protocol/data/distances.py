"""The distance between two values of one kind, as smashing and the reference statistics use it.

Levenshtein on the canonical text for every kind but quantities and coordinates; for dates
the smaller of that and one more than the distance with day and month exchanged, so a date and
its day/month swap get vectors within one edit of each other, and a one-year slip stays one or
two edits. A quantity's distance is its absolute difference in units of the attribute's scale,
rounded to the nearest integer (FedSim's Euclidean distance for numbers): a height of 175.5
and a reference height of 170 are 11 units apart at a scale of 0.5. Coordinates' distance is
the great-circle (haversine) distance in metres, on a sphere of the Earth's mean radius,
in units of the attribute's scale (metres), rounded likewise: Paris and London are 343.5 km
apart, 6,871 units at a scale of 50 m (254, the clamp, in a tensor). A point less than one
scale (the stated tolerance) from another is less than one unit nearer to or farther from any
reference point (the triangle inequality), so two records of one place within the tolerance
smash to vectors within one unit of each other in every coordinate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pprl.protocol.data.canonical import EARTH_RADIUS_METRES, point_of, swap_day_month

# Cells of a quantity table computed at once: bounds the float64 scratch (32 MiB) at any size.
_QUANTITY_CELLS = 1 << 22
# Cells of a coordinates table computed at once: the haversine keeps about four float64
# temporaries of a block, so 8 MiB each.
_COORDINATE_CELLS = 1 << 20


class Metric(Protocol):
    """A distance other than the kind's own (pprl.protocol.vectors.bloom.FilterDistance)."""

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


def levenshtein_table(values_a: Sequence[str], values_b: Sequence[str], clamp: int) -> np.ndarray:
    """(len(a), len(b)) uint8 edit distances; anything above `clamp` - 1 reads as `clamp`."""
    return process.cdist(
        values_a,
        values_b,
        scorer=Levenshtein.distance,
        dtype=np.uint8,
        workers=-1,
        score_cutoff=clamp - 1,
    )


def date_table(values_a: Sequence[str], values_b: Sequence[str], clamp: int) -> np.ndarray:
    """Edit distances of canonical dates, each the smaller of the plain one and one more than
    the distance with day and month exchanged."""
    table = levenshtein_table(values_a, values_b, clamp)
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


def quantity_table(
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


def haversine_metres(
    latitude_a: np.ndarray | float,
    longitude_a: np.ndarray | float,
    latitude_b: np.ndarray | float,
    longitude_b: np.ndarray | float,
) -> np.ndarray:
    """The great-circle distance in metres between points given in degrees, broadcasting:
    2 R asin(sqrt(sin^2(dlat / 2) + cos(lat_a) cos(lat_b) sin^2(dlon / 2)))."""
    phi_a, phi_b = np.radians(latitude_a), np.radians(latitude_b)
    half_lat = np.sin((phi_b - phi_a) / 2)
    half_lon = np.sin(np.radians(np.subtract(longitude_b, longitude_a)) / 2)
    inner = half_lat * half_lat + np.cos(phi_a) * np.cos(phi_b) * (half_lon * half_lon)
    return 2 * EARTH_RADIUS_METRES * np.arcsin(np.sqrt(np.clip(inner, 0.0, 1.0)))


def coordinate_table(
    values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float
) -> np.ndarray:
    """round(haversine(a, b) / scale), at most `clamp`, a block of rows at a time."""
    points_a = np.array([point_of(value) for value in values_a], dtype=np.float64).reshape(-1, 2)
    points_b = np.array([point_of(value) for value in values_b], dtype=np.float64).reshape(-1, 2)
    table = np.empty((len(points_a), len(points_b)), dtype=np.uint8)
    rows = max(1, _COORDINATE_CELLS // max(1, len(points_b)))
    for start in range(0, len(points_a), rows):
        block = points_a[start : start + rows]
        metres = haversine_metres(
            block[:, 0, None], block[:, 1, None], points_b[None, :, 0], points_b[None, :, 1]
        )
        table[start : start + rows] = np.minimum(np.rint(metres / scale), clamp)
    return table
