"""The non-private baseline (the paper's "Plain" rows): one classifier on direct comparisons of
both sides' strings, the edit distance per field.

It sees what no party of the protocol may see (both plaintexts), so its quality is what the
method would reach without privacy; the gap to it is the price of privacy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.linkage.matching import Matches, PassTimes, Selection, scan
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.training import negative_partners
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.smashing import distance_table


@dataclass(frozen=True)
class FieldTable:
    """Edit distances between the distinct values of one field on each side, and each row's
    index into them: distance(i, j) = table[codes_a[i], codes_b[j]]."""

    codes_a: np.ndarray
    codes_b: np.ndarray
    table: np.ndarray


def field_tables(
    columns_a: Mapping[str, Sequence[str]],
    columns_b: Mapping[str, Sequence[str]],
    fields: Sequence[str],
) -> list[FieldTable]:
    """Plain Levenshtein between distinct values (an empty value is the empty string here:
    the plain baseline compares what it is given)."""
    return [
        FieldTable(*distance_table(columns_a[name], columns_b[name], empty_is_missing=False))
        for name in fields
    ]


def pair_distances(
    tables: Sequence[FieldTable], rows_a: np.ndarray, rows_b: np.ndarray
) -> np.ndarray:
    """(n, F) float32 edit distances of the pairs (rows_a[t], rows_b[t])."""
    return np.stack([t.table[t.codes_a[rows_a], t.codes_b[rows_b]] for t in tables], axis=1).astype(
        np.float32
    )


def training_features(
    own: Mapping[str, Sequence[str]],
    corrupted: Mapping[str, Sequence[str]],
    fields: Sequence[str],
    rng: np.random.Generator,
    negatives_per_positive: int = 1,
    hard_negatives: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2 on strings: the same pairs the private training builds, compared directly.

    Hard negatives are the copies with the smallest summed edit distance to the record.
    """
    tables = field_tables(own, corrupted, fields)
    n = len(own[fields[0]])
    similarity = None
    if hard_negatives:
        summed = np.zeros((n, n), dtype=np.float32)
        for t in tables:
            summed += t.table[np.ix_(t.codes_a, t.codes_b)]
        similarity = -summed
    partners = negative_partners(similarity, n, rng, negatives_per_positive, hard_negatives)
    rows = np.arange(n)
    positives = pair_distances(tables, rows, rows)
    negatives = pair_distances(tables, np.repeat(rows, partners.shape[1]), partners.reshape(-1))
    negatives = negatives[negatives.any(axis=1)]  # identical strings cannot be a non-match
    labels = np.zeros(n + len(negatives), dtype=np.int8)
    labels[:n] = 1
    return np.concatenate([positives, negatives]), labels


def _block_distances(tables: Sequence[FieldTable], start: int, stop: int) -> np.ndarray:
    """(F, k, n_b) uint8 distances of every pair of the block, looked up per distinct value."""
    return np.stack([t.table[t.codes_a[start:stop]][:, t.codes_b] for t in tables])


def _scores(distances: np.ndarray, model: Model) -> np.ndarray:
    if model.kind == "linear":
        weights = model.arrays["weights"]
        scores = np.full(distances.shape[1:], model.arrays["bias"], dtype=np.float32)
        for entry, weight in enumerate(weights.tolist()):
            scores += np.float32(weight) * distances[entry]
        return scores
    f, k, n_b = distances.shape
    flat = distances.transpose(1, 2, 0).reshape(k * n_b, f).astype(np.float64)
    return model.decision(flat).astype(np.float32).reshape(k, n_b)


def score_pairs(
    columns_a: Mapping[str, Sequence[str]],
    columns_b: Mapping[str, Sequence[str]],
    fields: Sequence[str],
    selections: Sequence[Selection],
    *,
    block_bytes: int = 64 << 20,
    progress: Progress | None = None,
    times: PassTimes | None = None,
) -> list[Matches]:
    """Every pair scored by each selection's classifier, kept as the private matching keeps
    them (same selection rules), so the two differ only in what the features are."""
    tables = field_tables(columns_a, columns_b, fields)
    n_a, n_b = len(tables[0].codes_a), len(tables[0].codes_b)
    per_pair = len(fields) * (9 if any(s.model.kind == "rbf" for s in selections) else 1) + 8
    return scan(
        n_a,
        n_b,
        selections,
        block_rows=max(1, block_bytes // (per_pair * max(1, n_b))),
        prepare=lambda start, stop: _block_distances(tables, start, stop),
        score=_scores,  # type: ignore[arg-type]
        progress=progress,
        times=times,
    )
