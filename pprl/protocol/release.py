"""What a party releases in place of raw edit distances: the distances plus Gaussian noise,
quantised back to one byte per coordinate, and the reference-set statistics that both the
noise scale and the noise-robust features are measured against.

A released code is c = round((d + e) / step) + offset with e ~ N(0, noise^2) in edit units.
Without noise step = 1 and offset = 0, so the codes are the raw distances, byte for byte.
With noise the grid is a quarter of the noise (or of one edit, whichever is larger): rounding
adds a variance of step^2 / 12, about 0.5% of the noise's, and the offset leaves four noise
deviations below zero. Quantising and clipping after the noise is drawn are post-processing,
so they do not weaken what the noise buys.

Noise is drawn once per distinct value and distinct reference value of each mapping entry:
every record with the same name shows the same noisy vector, and a reference value that
occurs twice gives two equal coordinates, so a peer can average neither (it still sees which
records share a value, as it does without noise).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.distances import kind_distances
from pprl.protocol.features import FEATURES, MISSING_CODE, Standardise
from pprl.protocol.kinds import DEFAULT_KIND

_STEPS_PER_NOISE = 4
_OFFSET_STEPS = 16


def kept_components(reference_rows: int) -> int:
    """Components kept by "projected-cosine": names' distance vectors are close to low-rank,
    while noise spreads evenly over all R coordinates, so dropping the rest drops mostly
    noise. Measured best among those tried: 30 at R = 200 (15, 20 and 60 were worse) and
    60 at R = 2,000 (30 and 120 were worse); sqrt(2R) with a floor of 30 gives both."""
    return min(reference_rows, max(30, round(math.sqrt(2 * reference_rows))))


@dataclass(frozen=True)
class Release:
    """Noise in edit units and the byte grid its codes live on."""

    noise: float = 0.0

    def __post_init__(self) -> None:
        if not np.isfinite(self.noise) or self.noise < 0:
            raise ValueError(f"the noise scale must be a finite number >= 0, got {self.noise}")

    @property
    def step(self) -> float:
        return 1.0 if self.noise == 0 else max(self.noise, 1.0) / _STEPS_PER_NOISE

    @property
    def offset(self) -> int:
        return 0 if self.noise == 0 else _OFFSET_STEPS

    def encode(self, distances: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
        """uint8 codes of integer distances; `rng` must be given when there is noise."""
        if self.noise == 0:
            return np.asarray(distances, dtype=np.uint8)
        if rng is None:
            raise ValueError("noise needs a random generator")
        values = np.asarray(distances, dtype=np.float64)
        values = values + rng.normal(0.0, self.noise, size=values.shape)
        codes = np.rint(values / self.step) + self.offset
        return np.clip(codes, 0, MISSING_CODE - 1).astype(np.uint8)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """float32 distances in edit units, as the peer reads them."""
        return ((np.asarray(codes, dtype=np.float32) - self.offset) * self.step).astype(np.float32)


@dataclass(frozen=True)
class ReferenceStatistics:
    """Per reference column: each coordinate's mean and spread of distances from the column's
    own values, and sigma0, the spread of all those distances (FedSim's standardisation)."""

    centre: dict[str, np.ndarray]  # column -> (R,) float64 edit units
    spread: dict[str, np.ndarray]  # column -> (R,) float64 edit units
    sigma0: float
    # column -> (R, k) principal directions of the column's own centred distance vectors
    components: dict[str, np.ndarray]


def reference_statistics(
    reference_columns: Mapping[str, Sequence[str]],
    mapping: Sequence[tuple[str, str]],
    with_components: bool = True,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
) -> ReferenceStatistics:
    """Statistics of the public reference set only, so both parties compute the same ones.

    A coordinate's statistics are over the distances from every other reference value of its
    column (the zero to itself is left out); sigma0 pools the columns the mapping uses.
    `kinds` gives each mapped attribute's kind, and so the distance of its column, and
    `scales` each quantity's scale.
    """
    centre, spread, components, pooled = {}, {}, {}, []
    comparisons = {
        column: ((kinds or {}).get(a, DEFAULT_KIND), (scales or {}).get(a)) for a, column in mapping
    }
    for column, (kind, scale) in comparisons.items():
        values = list(reference_columns[column])
        table = kind_distances(values, values, kind, scale=scale).astype(np.int32)
        if len(values) < 2:
            raise ValueError(f"reference column {column!r} needs at least two values")
        others = ~np.eye(len(values), dtype=bool)
        distances = table.astype(np.float64)
        counts = others.sum(axis=0)
        mean = (distances * others).sum(axis=0) / counts
        square = ((distances - mean) ** 2 * others).sum(axis=0) / counts
        centre[column] = mean
        spread[column] = np.sqrt(square)
        pooled.append(distances[others])
        if with_components:  # an SVD of R x R: seconds at R = 2,000, so only when needed
            _, _, directions = np.linalg.svd(distances - mean, full_matrices=False)
            components[column] = directions[: kept_components(len(values))].T
    sigma0 = float(np.concatenate(pooled).std())
    return ReferenceStatistics(centre, spread, sigma0, components)


def standardise(
    statistics: ReferenceStatistics,
    mapping: Sequence[tuple[str, str]],
    release: Release,
    feature: str,
) -> Standardise | None:
    """The per-coordinate shift and scale, in code units, that turn released codes into the
    vectors whose cosine `feature` names; None for the paper's raw cosine."""
    if feature not in FEATURES:
        raise ValueError(f"unknown feature {feature!r}; expected one of {', '.join(FEATURES)}")
    if feature == "cosine":
        return None
    centre = np.stack([statistics.centre[column] for _, column in mapping])
    centre = release.offset + centre / release.step
    basis = None
    if feature == "standardised-cosine":
        spread = np.stack([statistics.spread[column] for _, column in mapping])
        scale = np.maximum(spread, 1e-6) / release.step
    else:
        scale = np.ones_like(centre)
    if feature == "projected-cosine":
        basis = np.stack([statistics.components[column] for _, column in mapping])
        basis = basis.astype(np.float32)
    return Standardise(centre.astype(np.float32), scale.astype(np.float32), basis)
