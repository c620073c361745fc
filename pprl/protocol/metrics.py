"""Linkage quality, counted over all pairs (not over a sample or a partition of them)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

# Record pairs: (id, id) from files, or (row, row) inside a benchmark.
Pair = TypeVar("Pair", bound=Hashable)


@dataclass(frozen=True)
class Quality:
    precision: float
    recall: float
    f1: float
    true_positives: int
    false_positives: int
    false_negatives: int


def linkage_quality(predicted: Iterable[Pair], truth: Iterable[Pair]) -> Quality:
    """Set-based quality of predicted (id_a, id_b) pairs against the true ones.

    Every undefined ratio is 0.0: precision with nothing predicted, recall with nothing true,
    F1 when precision + recall is 0. A true pair never predicted is always a false negative.
    """
    predicted_set, truth_set = set(predicted), set(truth)
    tp = len(predicted_set & truth_set)
    fp = len(predicted_set) - tp
    fn = len(truth_set) - tp
    precision = tp / len(predicted_set) if predicted_set else 0.0
    recall = tp / len(truth_set) if truth_set else 0.0
    total = precision + recall
    f1 = 2 * precision * recall / total if total else 0.0
    return Quality(precision, recall, f1, tp, fp, fn)


def agreed(a: Iterable[Pair], b: Iterable[Pair]) -> set[Pair]:
    """Pairs both parties' classifiers accepted: the links the protocol reveals."""
    return set(a) & set(b)
