"""The Bayes decision on a release, brute force: the yardstick the privacy gate is held to.

A peer who receives a release knows how its noise is made (the software is public) and can
compute its covariance from public data. For each attribute it can then pick, for a released
vector x, the listed name of largest posterior: log prior - (x - mu)' S+ (x - mu) / 2, with S
the noise's covariance and mu the name's clean coordinates. This module does exactly that,
without pruning or shortcuts, and estimates S from the release itself (distinct names
released with noise, minus their clean coordinates), so it assumes nothing of how the noise
is made. It is slow by design; tests/test_gate_oracle.py and benchmarks/gate_oracle.py hold
the gate to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from pprl.protocol.vectors.release import ProjectedRelease
from pprl.protocol.vectors.smashing import smash_values

_BLOCK = 256


def noise_covariance(
    agreement: Any, entries: list[int], names: list[str], rng: np.random.Generator
) -> np.ndarray:
    """The covariance of what the release adds to one attribute's coordinates (its `entries`
    side by side), estimated from the release itself: `names`, released with noise through
    the agreement's own smashing, minus their clean coordinates. Noise is added alike to any
    value, so distinct names serve as repeated draws; nothing is assumed of how it is made."""
    columns = {attribute: names for attribute, _ in agreement.mapping}
    noisy = agreement.smash(columns, rng)[:, entries, :]
    residuals = []
    for j, m in enumerate(entries):
        encoder = agreement.releases[m]
        clean = _clean(agreement, m, names)
        residuals.append(encoder.decode(noisy[:, j, :]).astype(np.float64) - clean)
    joined = np.concatenate(residuals, axis=1)
    return np.cov(joined.T)


def _clean(agreement: Any, entry: int, names: list[str]) -> np.ndarray:
    """(n, W) float64: the names' coordinates of one entry as released without noise."""
    column = agreement.reference.columns[agreement.mapping[entry][1]]
    distances = smash_values(names, column, metric=agreement.metric).astype(np.float64)
    encoder = agreement.releases[entry]
    return encoder.project(distances) if isinstance(encoder, ProjectedRelease) else distances


def bayes_reidentified(
    agreement: Any,
    tensor: np.ndarray,
    truth: dict[str, list[str]],
    attributes: list[str],
    names: list[str],
    priors: dict[str, np.ndarray],
    covariance_names: list[str],
    rng: np.random.Generator,
    tolerance: int = 1,
) -> tuple[float, dict[str, float]]:
    """The Bayes decision for each attribute's value, brute force: per row, per prior (log
    probabilities over `names`), the name of largest log prior - (x - mu)' S+ (x - mu) / 2,
    S the release's noise covariance as `noise_covariance` estimates it from
    `covariance_names`, mu the name's clean coordinates. A value is recovered when the unique
    best name is within `tolerance` edits of it; per attribute the prior that recovers most
    is kept. Returns the share of rows whose every non-empty attribute is recovered, and the
    share recovered per attribute."""
    n = len(tensor)
    every = np.ones(n, dtype=bool)
    rates = {}
    for attribute in attributes:
        entries = [m for m, (a, _) in enumerate(agreement.mapping) if a == attribute]
        released, means = _whitened(agreement, tensor, entries, names, covariance_names, rng)
        present = np.array([v != "" for v in truth[attribute]])
        best = np.zeros(n, dtype=bool)
        best_count = -1
        squares = np.einsum("dk,dk->d", means, means)
        rows = np.flatnonzero(present)
        for log_prior in priors.values():
            found = np.zeros(n, dtype=bool)
            for start in range(0, len(rows), _BLOCK):
                block = rows[start : start + _BLOCK]
                # log prior - |x - mu|^2 / 2, the |x|^2 every name shares left out.
                score = log_prior[None, :] - 0.5 * squares[None, :] + released[block] @ means.T
                top = score.max(axis=1, keepdims=True)
                ties = (score >= top - 1e-6 * (1.0 + np.abs(top))).sum(axis=1)
                for row, winner, count in zip(block, score.argmax(axis=1), ties, strict=True):
                    guess = names[int(winner)]
                    close = Levenshtein.distance(guess, truth[attribute][row]) <= tolerance
                    found[row] = count == 1 and close
            if found.sum() > best_count:
                best, best_count = found, int(found.sum())
        every &= best | ~present
        rates[attribute] = float(best[present].mean()) if present.any() else 0.0
    return float(every.mean()), rates


def _whitened(
    agreement: Any,
    tensor: np.ndarray,
    entries: list[int],
    guesses: list[str],
    covariance_names: list[str],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The released rows' and the guesses' clean coordinates over `entries`, whitened by the
    noise covariance estimated from the release (noise_covariance): (x - mu)' S+ (x - mu) =
    |W x - W mu|^2 with S+ = W' W."""
    values, vectors = np.linalg.eigh(noise_covariance(agreement, entries, covariance_names, rng))
    kept = values > values.max() * 1e-9
    whiten = (vectors[:, kept] / np.sqrt(values[kept])).T
    means = np.concatenate([_clean(agreement, m, guesses) for m in entries], axis=1) @ whiten.T
    released = np.concatenate(
        [agreement.releases[m].decode(tensor[:, m, :]).astype(np.float64) for m in entries],
        axis=1,
    )
    return released @ whiten.T, means


def bayes_joint_reidentified(
    agreement: Any,
    tensor: np.ndarray,
    truth: dict[str, list[str]],
    first: str,
    last: str,
    combined: str,
    names: list[str],
    priors: dict[str, np.ndarray],
    covariance_names: list[str],
    rng: np.random.Generator,
    tolerance: int = 1,
) -> float:
    """The Bayes decision for a record's two names together, brute force over every pair of
    `names`: per row, the pair (f, l) of largest log prior(f) + log prior(l) minus half the
    whitened squared distances over `first`'s entries, `last`'s, and the `combined` entry's
    (whose clean value for the pair is the sorted words "F L"), each whitened by its noise
    covariance estimated from the release. Every pair of the dictionary's priors is tried
    and the one re-identifying most kept. Returns the share of rows whose two names are
    both within `tolerance` edits of the unique best pair (rows with a name missing are
    left out of the count)."""

    def of(attribute: str) -> list[int]:
        return [m for m, (a, _) in enumerate(agreement.mapping) if a == attribute]

    first_x, first_mu = _whitened(agreement, tensor, of(first), names, covariance_names, rng)
    last_x, last_mu = _whitened(agreement, tensor, of(last), names, covariance_names, rng)
    words = [" ".join(sorted((f, s))) for f in names for s in names]
    pair_names = [f"{n} {n}" for n in covariance_names]
    both_x, both_mu = _whitened(agreement, tensor, of(combined), words, pair_names, rng)
    rows = [i for i in range(len(tensor)) if truth[first][i] and truth[last][i]]
    d = len(names)

    def fit(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
        # -|x - mu|^2 / 2, the |x|^2 every guess shares left out.
        return x[rows] @ mu.T - 0.5 * np.einsum("dk,dk->d", mu, mu)[None, :]

    first_fit, last_fit, both_fit = (
        fit(first_x, first_mu),
        fit(last_x, last_mu),
        fit(both_x, both_mu),
    )
    best = -1
    for first_prior in priors.values():
        for last_prior in priors.values():
            score = both_fit + (first_fit + first_prior[None, :])[:, :, None].repeat(
                d, axis=2
            ).reshape(len(rows), d * d)
            score += np.tile(last_fit + last_prior[None, :], (1, d))
            top = score.max(axis=1, keepdims=True)
            ties = (score >= top - 1e-6 * (1.0 + np.abs(top))).sum(axis=1)
            found = 0
            for k, (winner, count) in enumerate(zip(score.argmax(axis=1), ties, strict=True)):
                f, s = names[int(winner) // d], names[int(winner) % d]
                row = rows[k]
                found += bool(
                    count == 1
                    and Levenshtein.distance(f, truth[first][row]) <= tolerance
                    and Levenshtein.distance(s, truth[last][row]) <= tolerance
                )
            best = max(best, found)
    return best / len(rows) if rows else 0.0
