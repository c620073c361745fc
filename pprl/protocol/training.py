"""Training data (Algorithm 2): each party labels pairs of its own records only.

A record and its corrupted copy are a match; a record and another record's copy are not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.corruption import Corrupter
from pprl.protocol.features import pair_features, unit_vectors
from pprl.protocol.smashing import smash


def training_features(
    own: np.ndarray,
    corrupted: np.ndarray,
    rng: np.random.Generator,
    negatives_per_positive: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """X (n * (1 + negatives), M) float32 and y int8: positives first, then negatives.

    `own` and `corrupted` are smashed tensors whose row i describe the same record.
    """
    if own.shape != corrupted.shape:
        raise ValueError(f"tensors differ in shape: {own.shape} vs {corrupted.shape}")
    n = len(own)
    if negatives_per_positive < 0:
        raise ValueError(f"negatives_per_positive must be >= 0, got {negatives_per_positive}")
    if negatives_per_positive and n < 2:
        raise ValueError("negative pairs need at least two training records")
    unit_own, unit_corrupted = unit_vectors(own), unit_vectors(corrupted)
    parts = [pair_features(unit_own, unit_corrupted)]
    rows = np.arange(n)
    for _ in range(negatives_per_positive):
        # An offset in 1..n-1 draws k uniformly among the other records, never i itself.
        others = (rows + rng.integers(1, n, size=n)) % n
        parts.append(pair_features(unit_own, unit_corrupted[others]))
    labels = np.zeros(n * (1 + negatives_per_positive), dtype=np.int8)
    labels[:n] = 1
    return np.concatenate(parts), labels


def build_training_set(
    attributes: Mapping[str, Sequence[str]],
    reference_columns: Mapping[str, Sequence[str]],
    mapping: Sequence[tuple[str, str]],
    *,
    training_records: int,
    negatives_per_positive: int,
    rng: np.random.Generator,
    clamp: int = 255,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample own records, corrupt each with exactly one error, and label their pairs."""
    names = list(dict.fromkeys(attribute for attribute, _ in mapping))
    n = len(attributes[names[0]])
    sample = rng.choice(n, size=min(training_records, n), replace=False)
    own = [[attributes[name][i] for name in names] for i in sample.tolist()]
    corrupter = Corrupter(rng)
    corrupted = [corrupter.corrupt_record(values, n_errors=1) for values in own]
    own_columns = {name: [row[j] for row in own] for j, name in enumerate(names)}
    corrupted_columns = {name: [row[j] for row in corrupted] for j, name in enumerate(names)}
    return training_features(
        smash(own_columns, reference_columns, mapping, clamp),
        smash(corrupted_columns, reference_columns, mapping, clamp),
        rng,
        negatives_per_positive,
    )
