"""Matching (Algorithm 3): score all pairs blockwise, keep the likely ones, make them 1:1.

The full n_a x n_b score matrix never exists; only accepted pairs, at most `top_k` per A row,
survive a block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pprl.protocol.classifier import Model
from pprl.protocol.features import block_features, pair_features

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Matches:
    """Parallel arrays: pair t links A row rows_a[t] to B row rows_b[t] with scores[t]."""

    rows_a: np.ndarray
    rows_b: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.rows_a)


def _block_scores(unit_a_block: np.ndarray, unit_b: np.ndarray, model: Model) -> np.ndarray:
    """(k, n_b) float32 decision values for every pair of the block."""
    if model.kind == "linear":
        # b + sum_m w_m (1 - <u_m, v_m>) is a single product of weighted, concatenated vectors.
        weights = model.arrays["weights"].astype(np.float32)
        constant = np.float32(model.arrays["bias"] + model.arrays["weights"].sum())
        weighted = (unit_a_block * weights[None, :, None]).reshape(len(unit_a_block), -1)
        return constant - weighted @ unit_b.reshape(len(unit_b), -1).T
    features = block_features(unit_a_block, unit_b)
    k, n_b, m = features.shape
    return model.decision(features.reshape(k * n_b, m)).astype(np.float32).reshape(k, n_b)


def _select(scores: np.ndarray, first_row: int, top_k: int) -> Matches:
    """Positive pairs of a block, at most top_k per row; ties go to the lower B row."""
    keep = scores > 0
    n_b = scores.shape[1]
    if n_b > top_k:
        kth_best = np.partition(scores, n_b - top_k, axis=1)[:, n_b - top_k]
        keep &= scores >= kth_best[:, None]
    rows, cols = np.nonzero(keep)
    values = scores[rows, cols]
    order = np.lexsort((cols, -values, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    # Ties at the k-th value can leave more than top_k per row: cut by rank within the row.
    starts = np.searchsorted(rows, rows, side="left")
    within = np.arange(len(rows)) - starts < top_k
    return Matches(
        rows_a=rows[within].astype(np.int64) + first_row,
        rows_b=cols[within].astype(np.int64),
        scores=values[within].astype(np.float32),
    )


def _concat(parts: list[Matches]) -> Matches:
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return Matches(empty, empty.copy(), np.empty(0, dtype=np.float32))
    return Matches(
        rows_a=np.concatenate([p.rows_a for p in parts]),
        rows_b=np.concatenate([p.rows_b for p in parts]),
        scores=np.concatenate([p.scores for p in parts]),
    )


def candidate_pairs(
    unit_a: np.ndarray,
    unit_b: np.ndarray,
    model: Model,
    *,
    top_k: int = 10,
    block_bytes: int = 64 << 20,
    progress: Progress | None = None,
) -> Matches:
    """Pairs with decision > 0, at most top_k best per A row, sorted by A row then score."""
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    n_a, n_b = len(unit_a), len(unit_b)
    # block_bytes bounds a block's main array: per A row, the rbf path holds M features per
    # pair, the linear path one score per pair plus the row's weighted vectors.
    if model.kind == "rbf":
        bytes_per_row = 4 * max(1, n_b) * unit_a.shape[1]
    else:
        bytes_per_row = 4 * (max(1, n_b) + int(np.prod(unit_a.shape[1:])))
    block = max(1, block_bytes // bytes_per_row)
    parts = []
    for start in range(0, n_a, block):
        if n_b:
            scores = _block_scores(unit_a[start : start + block], unit_b, model)
            parts.append(_select(scores, start, top_k))
        if progress is not None:
            progress(min(start + block, n_a), n_a)
    return _concat(parts)


def one_to_one(matches: Matches) -> Matches:
    """Greedy by descending score, ties by (rows_a, rows_b): each row used at most once.

    Greedy is inherently sequential; it only walks the few pairs candidate_pairs kept.
    """
    order = np.lexsort((matches.rows_b, matches.rows_a, -matches.scores))
    used_a: set[int] = set()
    used_b: set[int] = set()
    chosen = []
    for t, a, b in zip(
        order.tolist(), matches.rows_a[order].tolist(), matches.rows_b[order].tolist(), strict=True
    ):
        if a not in used_a and b not in used_b:
            used_a.add(a)
            used_b.add(b)
            chosen.append(t)
    picked = np.asarray(chosen, dtype=np.int64)
    return Matches(matches.rows_a[picked], matches.rows_b[picked], matches.scores[picked])


def match(
    unit_a: np.ndarray,
    unit_b: np.ndarray,
    model: Model,
    *,
    top_k: int = 10,
    block_bytes: int = 64 << 20,
    progress: Progress | None = None,
) -> Matches:
    """Algorithm 3 end to end: candidate pairs, then the one-to-one step."""
    candidates = candidate_pairs(
        unit_a, unit_b, model, top_k=top_k, block_bytes=block_bytes, progress=progress
    )
    return one_to_one(candidates)


def exact_scores(unit_a: np.ndarray, unit_b: np.ndarray, model: Model) -> np.ndarray:
    """(n_a, n_b) decision values pair by pair: the slow oracle for tests on small inputs."""
    rows_a, rows_b = np.divmod(np.arange(len(unit_a) * len(unit_b)), len(unit_b))
    features = pair_features(unit_a[rows_a], unit_b[rows_b])
    return model.decision(features).reshape(len(unit_a), len(unit_b))
