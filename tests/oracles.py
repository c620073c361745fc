"""Slow, obviously correct references that tests compare the fast matching code against."""

from __future__ import annotations

from typing import Any

import numpy as np

from pprl.protocol.agreement import Agreement
from pprl.protocol.linkage.matching import (
    DEFAULT_TOP_K,
    Matches,
    Selection,
    one_to_one,
    score_pairs,
)
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import pair_features, unit_vectors
from pprl.protocol.own_training import training_pairs, training_sample
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
    from pprl.protocol.data.reference import ReferenceSet
    from pprl.protocol.method_settings import MethodParams

    params = MethodParams(**{"hard_negatives": 0, **method})
    agreement = Agreement(ReferenceSet("reference", reference), mapping, params)
    return training_pairs(agreement, training_sample(agreement, attributes, rng), rng)


def all_pair_features(tensor_a: np.ndarray, tensor_b: np.ndarray) -> np.ndarray:
    """(n_a * n_b, 3M) float64 features of every pair of two released tensors, A's rows
    outer: what scoring all pairs reads, for oracles of candidate generation."""
    unit_a, unit_b = unit_vectors(tensor_a), unit_vectors(tensor_b)
    ia, ib = np.meshgrid(np.arange(len(unit_a)), np.arange(len(unit_b)), indexing="ij")
    return pair_features(unit_a[ia.ravel()], unit_b[ib.ravel()]).astype(np.float64)
