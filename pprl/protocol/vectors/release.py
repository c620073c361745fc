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
records share a value, as it does without noise). A peer reads the distinct coordinates
only: those carry independent noise of one scale (audit.distinct_positions).

The projected release (`ProjectedRelease`) sends less: the "projected-cosine" feature only
uses a value's centred distance vector projected onto the reference column's k leading
components, so a party can send those k coordinates, with the noise added in that space,
instead of all R noisy distances. The noise is drawn in that space, one independent draw of
the same scale per coordinate, so its covariance is noise^2 times the identity whatever the
reference column repeats. (Noise drawn once per distinct reference value and then projected
has covariance noise^2 N^T N, N the basis rows summed per distinct value: a column that
repeats values makes it up to 140 times the nominal variance in a few directions and far
less in others, and a peer who weighs each direction by that public covariance re-identified
about five times what a Euclidean attack did.) Each coordinate is quantised to one byte on a
grid that covers the reference values' own projections with room to spare; the basis and
grid come from the public reference set only, so both parties derive the same ones.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np
import scipy.linalg

from pprl.protocol.data.combined import is_combined
from pprl.protocol.data.distances import Metric
from pprl.protocol.data.kinds import DEFAULT_KIND, kind_distances
from pprl.protocol.errors import SettingError
from pprl.protocol.model.features import FEATURES, MISSING_CODE, PROJECTED, RAW_JOINS, Standardise

_STEPS_PER_NOISE = 4
_OFFSET_STEPS = 16
# "distances": all R noisy distances per value (the paper's tensor); "projected": k
# coordinates per value, for the "projected-cosine" feature only.
RELEASES = ("distances", "projected")
_GRID_NOISE_DEVIATIONS = 4


def kept_components(reference_rows: int) -> int:
    """Components kept by "projected-cosine": names' distance vectors are close to low-rank,
    while noise spreads evenly over all R coordinates, so dropping the rest drops mostly
    noise. Measured best among those tried: 30 at R = 200 (15, 20 and 60 were worse) and
    60 at R = 2,000 (30 and 120 were worse); sqrt(2R) with a floor of 30 gives both."""
    return min(reference_rows, max(30, round(math.sqrt(2 * reference_rows))))


def released_width(release: str, reference_rows: int, components: int = 0) -> int:
    """Coordinates a party sends per value: every distance, or the kept components (the
    agreed number, up to the rule's; 0: the rule's)."""
    if release not in RELEASES:
        raise SettingError(f"unknown release {release!r}; expected one of {', '.join(RELEASES)}")
    if release != "projected":
        return reference_rows
    return _kept(reference_rows, components)


def _kept(reference_rows: int, components: int) -> int:
    """The components kept: the rule's, or fewer where agreed (the leading ones of the
    rule's, so that a stored basis serves both)."""
    rule = kept_components(reference_rows)
    return min(rule, components) if components > 0 else rule


def standard_normals(
    draws: np.ndarray | None, rng: np.random.Generator | None, shape: tuple[int, ...]
) -> np.ndarray:
    """The keyed draws when given, else fresh ones from `rng`: both releases' noise source."""
    if draws is not None:
        return draws
    if rng is None:
        raise ValueError("noise needs a random generator")
    return rng.standard_normal(shape)


@dataclass(frozen=True)
class Release:
    """Noise in edit units and the byte grid its codes live on."""

    noise: float = 0.0

    def __post_init__(self) -> None:
        if not np.isfinite(self.noise) or self.noise < 0:
            raise SettingError(f"the noise scale must be a finite number >= 0, got {self.noise}")

    @property
    def step(self) -> float:
        return 1.0 if self.noise == 0 else max(self.noise, 1.0) / _STEPS_PER_NOISE

    @property
    def offset(self) -> int:
        return 0 if self.noise == 0 else _OFFSET_STEPS

    def encode(
        self,
        distances: np.ndarray,
        rng: np.random.Generator | None,
        draws: np.ndarray | None = None,
    ) -> np.ndarray:
        """uint8 codes of integer distances. Noise needs `rng`, or `draws`: standard normals
        of the distances' shape (keyed noise)."""
        if self.noise == 0:
            return np.asarray(distances, dtype=np.uint8)
        values = np.asarray(distances, dtype=np.float64)
        values = values + self.noise * standard_normals(draws, rng, values.shape)
        codes = np.rint(values / self.step) + self.offset
        return np.clip(codes, 0, MISSING_CODE - 1).astype(np.uint8)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """float32 distances in edit units, as the peer reads them."""
        return ((np.asarray(codes, dtype=np.float32) - self.offset) * self.step).astype(np.float32)


@dataclass(frozen=True, eq=False)
class ProjectedRelease:
    """Noise in edit units, the column's centre (R,) and basis (R, k), and the byte grid of
    each of the k projected coordinates (code = round((y - low) / step)); the noise is
    N(0, noise^2) in each of the k coordinates independently."""

    noise: float
    centre: np.ndarray
    basis: np.ndarray
    low: np.ndarray
    step: np.ndarray

    @property
    def width(self) -> int:
        return int(self.basis.shape[1])

    def project(self, distances: np.ndarray) -> np.ndarray:
        """(n, k) float64 coordinates of (n, R) distances, without noise: what a peer who
        knows the reference set computes for any name it guesses."""
        return (np.asarray(distances, dtype=np.float64) - self.centre) @ self.basis

    def encode(
        self,
        distances: np.ndarray,
        rng: np.random.Generator | None,
        draws: np.ndarray | None = None,
    ) -> np.ndarray:
        """(n, k) uint8 codes of (n, R) distances. Noise needs `rng`, or `draws`: (n, k)
        standard normals, one per coordinate (keyed noise)."""
        values = self.project(distances)
        if self.noise > 0:
            values += self.noise * standard_normals(draws, rng, values.shape)
        codes = np.rint((values - self.low) / self.step)
        return np.clip(codes, 0, MISSING_CODE - 1).astype(np.uint8)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """(..., k) float32 projected coordinates in edit units, as the peer reads them."""
        return (np.asarray(codes, dtype=np.float64) * self.step + self.low).astype(np.float32)


def projected_release(
    noise: float,
    centre: np.ndarray,
    basis: np.ndarray,
    projections: np.ndarray,
) -> ProjectedRelease:
    """The release of one column, its byte grid spanning the reference values' own (R, k)
    `projections` widened by a quarter of their range and four noise deviations each side, so
    that records' values, which are names like the reference set's, are seldom clipped."""
    if not np.isfinite(noise) or noise < 0:
        raise SettingError(f"the noise scale must be a finite number >= 0, got {noise}")
    low, high = projections.min(axis=0), projections.max(axis=0)
    pad = 0.25 * (high - low) + _GRID_NOISE_DEVIATIONS * noise + 1.0
    low, high = low - pad, high + pad
    step = (high - low) / (MISSING_CODE - 1)
    return ProjectedRelease(float(noise), centre, basis, low, step)


# The constant coordinate of the projected features (features.Standardise.constant), in rms
# lengths of a released vector. Measured at the gate's noise on the demo's data (2,000 a side,
# three seeds of the parties' randomness, sigma 2.375-2.5, the same releases): F1 0.913 with
# no constant, 0.935 with 0.5, 0.953 with 1, 0.955 with 1.5 and 2, 0.950 with 4.
LENGTH_WEIGHT = 1.5


def length_constants(
    statistics: ReferenceStatistics, mapping: Sequence[tuple[str, str]], noise: float
) -> np.ndarray | None:
    """(M,) each entry's constant coordinate under noise (None without): LENGTH_WEIGHT times
    the rms length of a released projected vector, the reference values' spread plus the
    noise's (noise^2 in each of the k coordinates). Public figures only, so both parties get
    the same."""
    if noise <= 0:
        return None
    lengths = []
    for _, column in mapping:
        basis = statistics.components[column]
        spread = statistics.projections[column].var(axis=0).sum()
        lengths.append(spread + noise**2 * basis.shape[1])
    return (LENGTH_WEIGHT * np.sqrt(lengths)).astype(np.float32)


class ArrayStore(Protocol):
    """Where a daemon keeps arrays computed from public inputs only (a reference column's
    principal directions, a dictionary's projected coordinates), named by a hash of those
    inputs, so that its later runs read them instead of computing them again."""

    def get(self, key: str) -> np.ndarray | None: ...

    def put(self, key: str, value: np.ndarray) -> None: ...


def stored_or_computed(
    store: ArrayStore | None, key: str, shape: tuple[int, ...], compute: Callable[[], np.ndarray]
) -> np.ndarray:
    """What `store` holds under `key` when it has the expected shape, else computed (and
    kept): every array kept this way depends on public inputs alone (the reference set, a
    dictionary), which `key` stands for."""
    stored = store.get(key) if store is not None else None
    if stored is not None and stored.shape == shape:
        return stored
    value = compute()
    if store is not None:
        store.put(key, value)
    return value


def leading_directions(centred: np.ndarray, k: int) -> np.ndarray:
    """(k, R) the k leading right singular vectors of `centred`, largest first, as the
    leading eigenvectors of its Gram matrix: computing only those takes 0.5 s at 2,000
    reference rows where a full SVD took 2.5 s (the same vectors, to 1e-15), which a daemon
    paid per name column at its first SMASH (benchmarks/reference_basis.py)."""
    rows = centred.shape[1]
    _, vectors = scipy.linalg.eigh(centred.T @ centred, subset_by_index=[rows - k, rows - 1])
    return np.ascontiguousarray(vectors[:, ::-1].T)


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class _Column:
    """One reference column's figures, read from `store` when it holds them: the R x R
    distance table behind them takes seconds at R = 2,000 (and the SVD of it more), so a
    daemon computes it only when a figure is missing."""

    def __init__(
        self,
        values: list[str],
        kind: str,
        scale: float | None,
        store: ArrayStore | None,
        metric: Metric | None = None,
    ) -> None:
        self.values, self.kind, self.scale, self.store = values, kind, scale, store
        self.metric = metric
        parts = ["column-v1", kind, repr(scale), "\n".join(values)]
        if metric is not None:
            parts.append(metric.identity)
        self.identity = _key(*parts)

    @cached_property
    def distances(self) -> np.ndarray:
        table = kind_distances(
            self.values, self.values, self.kind, scale=self.scale, metric=self.metric
        )
        return table.astype(np.int32).astype(np.float64)

    @cached_property
    def others(self) -> np.ndarray:
        """Which cells compare two different values: the zero to itself is left out."""
        return ~np.eye(len(self.values), dtype=bool)

    def pooled(self) -> np.ndarray:
        return self.distances[self.others]

    def figures(self) -> np.ndarray:
        """(2, R): each coordinate's mean and spread of distances from the other values."""

        def compute() -> np.ndarray:
            counts = self.others.sum(axis=0)
            mean = (self.distances * self.others).sum(axis=0) / counts
            square = ((self.distances - mean) ** 2 * self.others).sum(axis=0) / counts
            return np.stack([mean, np.sqrt(square)])

        return stored_or_computed(
            self.store, _key("figures-v1", self.identity), (2, len(self.values)), compute
        )

    def basis(self, centre: np.ndarray) -> np.ndarray:
        """(R, k) leading right singular vectors of the centred table, each signed so that its
        largest coordinate is positive (both parties get the same basis)."""
        k = kept_components(len(self.values))
        digest = hashlib.sha256(f"directions-v2\0{self.kind}\0{self.scale!r}\0".encode())
        digest.update("\n".join(self.values).encode())
        if self.metric is not None:
            digest.update(b"\0" + self.metric.identity.encode())

        directions = stored_or_computed(
            self.store,
            digest.hexdigest(),
            (k, len(self.values)),
            lambda: leading_directions(self.distances - centre, k),
        )
        basis = directions.T.copy()
        strongest = np.abs(basis).argmax(axis=0)
        basis *= np.sign(basis[strongest, np.arange(basis.shape[1])])
        return basis

    def projections(self, centre: np.ndarray, basis: np.ndarray) -> np.ndarray:
        """(R, k) the column's own values projected onto `basis`."""
        key = _key("projections-v1", self.identity, hashlib.sha256(basis.tobytes()).hexdigest())
        return stored_or_computed(
            self.store, key, basis.shape, lambda: (self.distances - centre) @ basis
        )


@dataclass(frozen=True)
class ReferenceStatistics:
    """Per reference column: each coordinate's mean and spread of distances from the column's
    own values, and sigma0, the spread of all those distances (FedSim's standardisation)."""

    centre: dict[str, np.ndarray]  # column -> (R,) float64 edit units
    spread: dict[str, np.ndarray]  # column -> (R,) float64 edit units
    sigma0: float
    # column -> (R, k) principal directions of the column's own centred distance vectors, each
    # signed so that its largest coordinate is positive (both parties get the same basis), and
    # (R, k) the column's own values projected onto them
    components: dict[str, np.ndarray]
    projections: dict[str, np.ndarray] = field(default_factory=dict)


def reference_statistics(
    reference_columns: Mapping[str, Sequence[str]],
    mapping: Sequence[tuple[str, str]],
    with_components: bool = True,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
    store: ArrayStore | None = None,
    metric: Metric | None = None,
    kept: int = 0,
) -> ReferenceStatistics:
    """Statistics of the public reference set only, so both parties compute the same ones.

    A coordinate's statistics are over the distances from every other reference value of its
    column (the zero to itself is left out); sigma0 pools the columns the mapping uses.
    `kinds` gives each mapped attribute's kind, and so the distance of its column, and
    `scales` each quantity's and coordinates' scale; `store` keeps every figure between runs
    (a stored figure is the computed one, bit for bit, so a party with a warm store agrees
    with one without). `metric` replaces the kinds' distances (the Bloom filters' Hamming
    distance). `kept`: the leading components kept per column (0: the rule's).
    """
    comparisons = {
        column: ((kinds or {}).get(a, DEFAULT_KIND), (scales or {}).get(a)) for a, column in mapping
    }
    columns = {}
    for column, (kind, scale) in comparisons.items():
        values = list(reference_columns[column])
        if len(values) < 2:
            raise SettingError(f"reference column {column!r} needs at least two values")
        columns[column] = _Column(values, kind, scale, store, metric)
    centre, spread, components, projections = {}, {}, {}, {}
    for column, figures in columns.items():
        centre[column], spread[column] = figures.figures()
        if with_components:
            basis = figures.basis(centre[column])[:, : _kept(len(figures.values), kept)]
            components[column] = basis
            projections[column] = figures.projections(centre[column], basis)
    pooled = _key("sigma0-v1", *(figures.identity for figures in columns.values()))
    sigma0 = stored_or_computed(
        store,
        pooled,
        (1,),
        lambda: np.array([np.concatenate([c.pooled() for c in columns.values()]).std()]),
    )
    return ReferenceStatistics(centre, spread, float(sigma0[0]), components, projections)


def standardise(
    statistics: ReferenceStatistics,
    mapping: Sequence[tuple[str, str]],
    release: Release,
    feature: str,
    constant: np.ndarray | None = None,
) -> Standardise | None:
    """The per-coordinate shift and scale, in code units, that turn released codes into the
    vectors whose cosine `feature` names; None for the paper's raw cosine. `constant`: the
    projected features' constant coordinates (length_constants)."""
    if feature not in FEATURES:
        raise SettingError(f"unknown feature {feature!r}; expected one of {', '.join(FEATURES)}")
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
    if feature in PROJECTED:
        basis = np.stack([statistics.components[column] for _, column in mapping])
        basis = basis.astype(np.float32)
    else:
        constant = None
    if feature == RAW_JOINS:
        for m, (attribute, column) in enumerate(mapping):
            if is_combined(attribute):  # read from zero: its raw vector, on the basis
                _, rest = raw_reading(statistics.centre[column], statistics.components[column])
                centre[m] = release.offset
                constant = _with_constant(constant, len(mapping), m, rest / release.step)
    return Standardise(centre.astype(np.float32), scale.astype(np.float32), basis, constant)


def raw_reading(centre: np.ndarray, basis: np.ndarray) -> tuple[np.ndarray, float]:
    """How an entry's raw (uncentred) distance vector reads on the (R, k) `basis`: its
    coordinates are the centred ones plus `shift` (the centre's), and what the basis misses
    of it is mostly the centre's rest, of length `rest`; [centred coordinates + shift, rest]
    then has about the raw vectors' cosines in k + 1 coordinates.

    Why: on an entry that joins several attributes (given name and surname as one), the
    kernel model on raw cosines links better than on centred ones, while one attribute's
    entries link worse raw (FEBRL4 names, in one process, three training draws: 0.8538
    against 0.8441 with the joined entry read so, the single names raw 0.8440 against
    0.8471 on one draw; the European registers' names, both raw, 0.8995 and 0.9012 against
    0.9069; docs/research/sealed.md, "The joined entry read raw")."""
    shift = np.asarray(centre, dtype=np.float64) @ basis
    rest = float(np.linalg.norm(centre - basis @ shift))
    return shift, rest


def raw_joins(
    mapping: Sequence[tuple[str, str]],
    grids: Sequence[ProjectedRelease],
    centre: np.ndarray,
    constant: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The projected release's (M, k) code centre and (M,) constants with each entry that
    joins several attributes read raw (`raw_reading`): its codes read back as the centred
    coordinates plus the centre's, and the centre's rest as its constant coordinate."""
    centre = centre.copy()
    for m, ((attribute, _), grid) in enumerate(zip(mapping, grids, strict=True)):
        if is_combined(attribute):
            shift, rest = raw_reading(grid.centre, grid.basis)
            centre[m] = -(grid.low + shift) / grid.step
            constant = _with_constant(constant, len(mapping), m, rest)
    return centre.astype(np.float32), constant


def _with_constant(constant: np.ndarray | None, entries: int, m: int, value: float) -> np.ndarray:
    """`constant` (zeros when None: no constant coordinate reads as a zero one) with entry m's
    set to `value`."""
    out = np.zeros(entries, dtype=np.float32) if constant is None else constant.copy()
    out[m] = value
    return out
