"""Slow, obviously correct references that tests compare the fast matching code against."""

from __future__ import annotations

from typing import Any

import numpy as np

from pprl.protocol.classifier import Model
from pprl.protocol.matching import (
    DEFAULT_TOP_K,
    Matches,
    Selection,
    one_to_one,
    score_pairs,
)
from pprl.protocol.progress import Progress


def brute_greedy(scores: np.ndarray, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs by descending score, ties by (A row, B row), each row used at most once."""
    used_a: set[int] = set()
    used_b: set[int] = set()
    chosen = []
    for i, j in sorted(pairs, key=lambda p: (-scores[p], p[0], p[1])):
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            chosen.append((i, j))
    return chosen


def pair_list(matches: Matches) -> list[tuple[int, int]]:
    return list(zip(matches.rows_a.tolist(), matches.rows_b.tolist(), strict=True))


def candidate_pairs(
    unit_a: np.ndarray,
    unit_b: np.ndarray,
    model: Model,
    *,
    top_k: int = DEFAULT_TOP_K,
    block_bytes: int = 64 << 20,
    progress: Progress | None = None,
) -> Matches:
    """Pairs with decision > 0, at most top_k best per A row (one selection of score_pairs)."""
    selection = Selection(model, top_k)
    return score_pairs(unit_a, unit_b, [selection], block_bytes=block_bytes, progress=progress)[0]


def match(
    unit_a: np.ndarray,
    unit_b: np.ndarray,
    model: Model,
    *,
    top_k: int = DEFAULT_TOP_K,
    block_bytes: int = 64 << 20,
) -> Matches:
    """All-pairs candidates, then the one-to-one step."""
    return one_to_one(candidate_pairs(unit_a, unit_b, model, top_k=top_k, block_bytes=block_bytes))


def training_set(
    attributes: dict[str, list[str]],
    reference: dict[str, list[str]],
    mapping: tuple[tuple[str, str], ...],
    rng: np.random.Generator,
    **method: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Labelled training pairs the way a party makes them (pipeline), on raw distances."""
    from pprl.protocol.method import MethodParams
    from pprl.protocol.pipeline import Agreement, training_pairs, training_sample
    from pprl.protocol.reference import ReferenceSet

    params = MethodParams(**{"hard_negatives": 0, **method})
    agreement = Agreement(ReferenceSet("reference", reference), mapping, params)
    return training_pairs(agreement, training_sample(agreement, attributes, rng), rng)


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
    from pprl.protocol.release import ProjectedRelease
    from pprl.protocol.smashing import smash_values

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
    from rapidfuzz.distance import Levenshtein

    n = len(tensor)
    every = np.ones(n, dtype=bool)
    rates = {}
    for attribute in attributes:
        entries = [m for m, (a, _) in enumerate(agreement.mapping) if a == attribute]
        # Whitened coordinates: (x - mu)' S+ (x - mu) = |W x - W mu|^2 with S+ = W' W.
        values, vectors = np.linalg.eigh(
            noise_covariance(agreement, entries, covariance_names, rng)
        )
        kept = values > values.max() * 1e-9
        whiten = (vectors[:, kept] / np.sqrt(values[kept])).T
        means = np.concatenate([_clean(agreement, m, names) for m in entries], axis=1) @ whiten.T
        released = (
            np.concatenate(
                [agreement.releases[m].decode(tensor[:, m, :]).astype(np.float64) for m in entries],
                axis=1,
            )
            @ whiten.T
        )
        present = np.array([v != "" for v in truth[attribute]])
        best = np.zeros(n, dtype=bool)
        best_count = -1
        for log_prior in priors.values():
            found = np.zeros(n, dtype=bool)
            for row in np.flatnonzero(present):
                gap = released[row] - means
                score = log_prior - 0.5 * np.einsum("dk,dk->d", gap, gap)
                top = score.max()
                winners = np.flatnonzero(score >= top - 1e-9)
                guess = names[int(winners[0])]
                close = Levenshtein.distance(guess, truth[attribute][row]) <= tolerance
                found[row] = len(winners) == 1 and close
            if found.sum() > best_count:
                best, best_count = found, int(found.sum())
        every &= best | ~present
        rates[attribute] = float(best[present].mean()) if present.any() else 0.0
    return float(every.mean()), rates
