"""Random features that turn a kernel model into the linear form sealed scoring evaluates.

A kernel model reads each entry's distance d = 1 - <u, v> of two unit vectors as
exp(-d / width) = exp(-|u - v|^2 / (2 width)), a Gaussian kernel (classifier.kernelise). With
D / 2 frequencies w_j drawn from N(0, I / width), z(u) = sqrt(2 / D) (cos(w_j u), sin(w_j u))_j
gives z(u) . z(v) = (2 / D) sum_j cos(w_j (u - v)), whose mean is exp(-d / width) (Rahimi and
Recht, 2007), so the score is a dot product of the scoring party's weighted z(u) and the
peer's plaintext z(v): the linear form sealed scoring already evaluates, with D coordinates
an entry instead of the projected k. A cosine and a sine per frequency, rather than D cosines
with random phases, leave out the phases' own noise (cos(w (u + v) + 2 b)), so the estimate
varies less at the same D (Sutherland and Schneider, 2015), and |z(u)| is exactly 1, which
bounds the scores more tightly (linear_form.score_bound). Measured at D = 64 over 15 feature
draws for each of three training draws (FEBRL4 names, the keys' pairs scored in the clear):
median F1
0.8534, 0.8536, 0.8538 against 0.8526, 0.8534, 0.8537 with random phases; the generated
namesakes (9 draws) 0.8606, 0.8597, 0.8609 against 0.8607, 0.8579, 0.8602 (docs/research/sealed.md,
"A cosine and a sine a frequency"). The frequencies' directions are drawn orthogonal in
blocks of k (orthogonal random features, Yu et al., 2016), which approximate the kernel
better at the same D: FEBRL4 names at 128 an entry, every pair scored in plaintext, 0.8117
against 0.8015 for independent draws (with random phases; docs/research/sealed.md).

Both parties need the same z: the draw is seeded by the run's agreement digest, and the
widths are the scoring party's (it sends them with its public key; they are its training
pairs' distances at one quantile, nothing of a record).

An entry whose values are few and public (an initial: one of 26 letters; a category: the
values its reference column lists) needs no draws: with the unit vectors L of its values
(`Exact`, both parties smash them from the agreement, pprl.protocol.sealed.exact_entries),
phi(u) = K^(-1/2) k(L, u), K = k(L, L), gives phi(a) . phi(b) = k(a, b) exactly whenever a or
b is one of them (Nystrom features on every value as a landmark), in as many coordinates as
values instead of D: the rest of the entry's D are zero on both sides, so they are neither
encrypted nor multiplied (`live`). On the generated namesakes' six entries, two of them
initials, that is a fifth fewer ciphertexts (docs/research/sealed.md, "The model").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from pprl.protocol.model.features import missing_units

# What the digest says of how the features are made (method.agreement_description): a party
# whose pprl made them otherwise would score other numbers, so AGREE must tell them apart.
FEATURE_MAP = "orthogonal frequencies, a cosine and a sine each"
_CONTEXT = b"pprl sealed kernel features|"


# Below this share of K's largest eigenvalue, a direction of the exact features is dropped:
# two values whose vectors (nearly) coincide leave K (nearly) singular.
_EIGEN_FLOOR = 1e-9


@dataclass(frozen=True)
class Exact:
    """An entry (its index among the agreement's) scored exactly: the unit vectors (L, k) of
    every value it can hold."""

    entry: int
    landmarks: np.ndarray


def live(entries: int, count: int, exact: tuple[Exact, ...] = ()) -> np.ndarray:
    """(entries, count) whether each feature can be non-zero: all of an entry's but an exact
    entry's beyond its values' count, which both parties leave out of scoring."""
    out = np.ones((entries, count), dtype=bool)
    for one in usable(exact, count):
        out[one.entry, len(one.landmarks) :] = False
    return out


def usable(exact: tuple[Exact, ...], count: int) -> tuple[Exact, ...]:
    """The exact entries that fit in `count` features an entry (the others keep their
    random features)."""
    return tuple(one for one in exact if len(one.landmarks) <= count)


@dataclass(frozen=True)
class RandomFeatures:
    """`count` random features per entry (count / 2 frequencies, count even) for the kernels
    of `widths` (M,), drawn from `seed` (the agreement digest); the `exact` entries (those
    `usable`) by their values instead. Each entry's z(u) has length exactly 1 (sqrt(2 / D)
    times D / 2 pairs cos^2 + sin^2), as a unit vector has, and an exact entry's at most 1
    (a projection of a kernel of 1 on the diagonal): linear_form.score_bound relies on it."""

    widths: np.ndarray
    count: int
    seed: str
    exact: tuple[Exact, ...] = ()
    # Per unit-vector width, the draws (`_draws`): made once, whoever maps how often.
    _drawn: dict[int, tuple[np.ndarray, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.count % 2:
            raise ValueError(f"random features come in (cos, sin) pairs: {self.count} is odd")

    def map(self, unit: np.ndarray) -> np.ndarray:
        """(n, M, k) unit vectors -> (n, M, count) float64 features; a missing value's (a zero
        unit vector) are zero, so that it adds nothing to a dot product."""
        n, entries, width = unit.shape
        if entries != len(self.widths):
            raise ValueError(f"{entries} entries for {len(self.widths)} kernel widths")
        out = np.empty((n, entries, self.count), dtype=np.float64)
        half = self.count // 2
        for m, frequencies in enumerate(self._draws(width)):
            phase = unit[:, m, :].astype(np.float64) @ frequencies
            np.cos(phase, out=out[:, m, :half])
            np.sin(phase, out=out[:, m, half:])
        out *= np.sqrt(2.0 / self.count)
        for one in usable(self.exact, self.count):
            out[:, one.entry, :] = 0.0
            features = _exact(unit[:, one.entry, :], one.landmarks, float(self.widths[one.entry]))
            out[:, one.entry, : len(one.landmarks)] = features
        out[missing_units(unit)] = 0.0
        return out

    def _draws(self, width: int) -> tuple[np.ndarray, ...]:
        """Per entry, the (width, count / 2) frequencies: directions over the root of its
        kernel width, drawn from the seed; every party gets these, and each is drawn once."""
        if width in self._drawn:
            return self._drawn[width]
        digest = hashlib.sha256(_CONTEXT + self.seed.encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:16], "big"))
        self._drawn[width] = tuple(
            _orthogonal(rng, width, self.count // 2) / np.sqrt(width_m)
            for width_m in self.widths.tolist()
        )
        return self._drawn[width]


def _exact(unit: np.ndarray, landmarks: np.ndarray, width: float) -> np.ndarray:
    """(n, L) features whose dot products are exp(-d / width) for d = 1 - <u, v>, exactly
    where one side is a landmark: K^(-1/2) k(L, u), from K's eigenvectors."""
    marks = landmarks.astype(np.float64)
    values, vectors = np.linalg.eigh(np.exp(-(1.0 - marks @ marks.T) / width))
    kept = values > _EIGEN_FLOOR * values.max()
    root = (vectors[:, kept] / np.sqrt(values[kept])) @ vectors[:, kept].T
    return np.exp(-(1.0 - unit.astype(np.float64) @ marks.T) / width) @ root


def _orthogonal(rng: np.random.Generator, width: int, count: int) -> np.ndarray:
    """(width, count) Gaussian directions, orthogonal within each block of `width` columns,
    each with a Gaussian vector's length (a chi draw), as independent ones would have."""
    blocks = []
    for _ in range(-(-count // width)):
        q, r = np.linalg.qr(rng.normal(size=(width, width)))
        q *= np.sign(np.diag(r))[None, :]  # Q uniform over the orthogonal group
        blocks.append(q * np.sqrt(rng.chisquare(width, size=width))[None, :])
    return np.concatenate(blocks, axis=1)[:, :count]
