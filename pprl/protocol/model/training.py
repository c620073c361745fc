"""Training data (Algorithm 2): each party labels pairs of its own records only.

A record and its corrupted copy are a match; a record and another record's copy are not.
Negatives are random others (as in the paper) or, optionally, the nearest others ("hard"
negatives): at matching time the classifier must tell a record's true partner from its
closest look-alikes, not from a random stranger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.error_model import (
    MODEL_NAMES,
    ONE_ERROR,
    ErrorModel,
    error_model,
    has_address,
    spread_edits,
)
from pprl.protocol.errors import SettingError
from pprl.protocol.model.features import Standardise, feature_count, pair_features, unit_vectors

Columns = dict[str, list[str]]

# "spread" is the paper's single edit ("one-error" of the error model is the same); every
# other error model name (pprl.protocol.data.error_model) corrupts as registers do.
CORRUPTIONS = ("spread", "prototype", *MODEL_NAMES)
# Fewer own records than this cannot give each match its non-matching partners: a party
# with fewer is told at AGREE instead of failing inside TRAIN.
MIN_TRAINING_RECORDS = 10
_SIMILARITY_BLOCK_ROWS = 1024
_FEATURE_ROWS = 2048


def corrupt_sample(
    attributes: Mapping[str, Sequence[str]],
    names: Sequence[str],
    *,
    size: int,
    rng: np.random.Generator,
    corruption: str | ErrorModel = "spread",
    errors_per_record: int = 1,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
) -> tuple[Columns, Columns]:
    """Up to `size` own records (sampled without replacement, among those with any value) and
    their corrupted copies (see corrupt_records)."""
    if isinstance(corruption, str) and corruption not in CORRUPTIONS:
        raise SettingError(f"unknown corruption {corruption!r}; expected one of {CORRUPTIONS}")
    own = sample_records(attributes, names, size, rng)
    corrupted = corrupt_records(
        own,
        names,
        rng=rng,
        corruption=corruption,
        errors_per_record=errors_per_record,
        kinds=kinds,
        scales=scales,
    )
    return own, corrupted


def sample_records(
    attributes: Mapping[str, Sequence[str]],
    names: Sequence[str],
    size: int,
    rng: np.random.Generator,
) -> Columns:
    """Up to `size` own records, sampled without replacement among those with any value in
    `names`."""
    n = len(attributes[names[0]])
    # A record with no value at all has nothing to corrupt and teaches nothing.
    usable = np.flatnonzero([any(attributes[name][i] for name in names) for i in range(n)])
    if not len(usable):
        raise SettingError("no record has a value in any compared attribute")
    if len(usable) == n:
        sample = rng.choice(n, size=min(size, n), replace=False)
    else:
        sample = rng.choice(usable, size=min(size, len(usable)), replace=False)
    return {name: [attributes[name][i] for i in sample.tolist()] for name in names}


def corrupt_records(
    own: Mapping[str, Sequence[str]],
    names: Sequence[str],
    *,
    rng: np.random.Generator,
    corruption: str | ErrorModel = "spread",
    errors_per_record: int = 1,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
) -> Columns:
    """A corrupted copy of every record of `own` (columns `names`).

    "spread" puts real edits (keyboard, OCR, phonetic, insert, delete, transpose) on any field
    but a quantity or coordinates (see error_model.spread_edits); "prototype" appends "!" to
    the last field only, as the published prototype did; it exists to measure what that
    mistake costs. An error model (or its name) corrupts with that model, which reads the name
    parts from `names` and the attribute kinds from `kinds` (default: names), and moves
    coordinates within their `scales` (the stated tolerance); "one-error" is "spread".
    `errors_per_record` applies to "spread" only, as a model draws its own count.
    """
    rows = [list(values) for values in zip(*(own[name] for name in names), strict=True)]
    field_kinds = [(kinds or {}).get(name, "name") for name in names]
    field_scales = [(scales or {}).get(name) for name in names]
    if corruption == "prototype":
        corrupted = [[*values[:-1], values[-1] + "!"] for values in rows]
    elif corruption in ("spread", ONE_ERROR):
        corrupter = Corrupter(rng)
        corrupted = [
            spread_edits(corrupter, v, field_kinds, errors_per_record, field_scales) for v in rows
        ]
    else:
        model = corruption if isinstance(corruption, ErrorModel) else error_model(corruption)
        # Where a record can move, its new address is another record's (drawn only then, so
        # models without movers, and records without an address, corrupt as they always did).
        donors = (
            [rows[k] for k in rng.integers(len(rows), size=len(rows))]
            if rows and model.moves and has_address(names)
            else [None] * len(rows)
        )
        corrupted = [
            model.corrupt(v, rng, names=names, kinds=field_kinds, scales=field_scales, donor=donor)
            for v, donor in zip(rows, donors, strict=True)
        ]
    return {name: [row[j] for row in corrupted] for j, name in enumerate(names)}


def negative_partners(
    similarity: np.ndarray | None,
    n: int,
    rng: np.random.Generator,
    negatives_per_positive: int,
    hard_negatives: int = 0,
) -> np.ndarray:
    """(n, negatives_per_positive) partner k != i for each record i.

    The first `hard_negatives` columns are the k with the highest similarity[i, k]; the rest
    are drawn uniformly among the other records.
    """
    if negatives_per_positive < 0:
        raise SettingError(f"negatives_per_positive must be >= 0, got {negatives_per_positive}")
    if not 0 <= hard_negatives <= negatives_per_positive:
        raise SettingError(
            f"hard_negatives must be within 0..{negatives_per_positive}, got {hard_negatives}"
        )
    if negatives_per_positive and n < 2:
        raise SettingError("negative pairs need at least two training records")
    if hard_negatives and hard_negatives > n - 1:
        raise SettingError(f"{hard_negatives} hard negatives need more than {n} training records")
    rows = np.arange(n)
    columns = []
    if hard_negatives:
        if similarity is None or similarity.shape != (n, n):
            raise ValueError(f"hard negatives need an ({n}, {n}) similarity matrix")
        masked = similarity.astype(np.float64, copy=True)
        masked[rows, rows] = -np.inf
        nearest = np.argpartition(-masked, hard_negatives - 1, axis=1)[:, :hard_negatives]
        columns.append(nearest)
    for _ in range(negatives_per_positive - hard_negatives):
        # An offset in 1..n-1 draws k uniformly among the other records, never i itself.
        columns.append(((rows + rng.integers(1, n, size=n)) % n)[:, None])
    if not columns:
        return np.empty((n, 0), dtype=np.int64)
    return np.concatenate(columns, axis=1).astype(np.int64)


def smashed_similarity(unit_own: np.ndarray, unit_corrupted: np.ndarray) -> np.ndarray:
    """(n, n) sum over mapping entries of cosine similarities, own i against copy k."""
    flat_own = unit_own.reshape(len(unit_own), -1)
    flat_corrupted = unit_corrupted.reshape(len(unit_corrupted), -1)
    out = np.empty((len(flat_own), len(flat_corrupted)), dtype=np.float32)
    for start in range(0, len(flat_own), _SIMILARITY_BLOCK_ROWS):
        stop = start + _SIMILARITY_BLOCK_ROWS
        out[start:stop] = flat_own[start:stop] @ flat_corrupted.T
    return out


def training_features(
    own: np.ndarray,
    corrupted: np.ndarray,
    rng: np.random.Generator,
    negatives_per_positive: int = 1,
    hard_negatives: int = 0,
    similarity: np.ndarray | None = None,
    standardise: Standardise | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """X (n + negatives, 3M) float32 (pprl.protocol.model.features.pair_features) and y int8:
    positives first, then negatives.

    `own` and `corrupted` are smashed tensors whose row i describe the same record. A negative
    pair with identical tensors (the two look the same through the reference set) would be a
    contradictory label and is dropped. `similarity` (smashed_similarity of the
    two) may be passed in when several training sets share one sample. `standardise` gives
    the agreed features (None: the paper's raw cosine).
    """
    if own.shape != corrupted.shape:
        raise ValueError(f"tensors differ in shape: {own.shape} vs {corrupted.shape}")
    n = len(own)
    unit_own, unit_corrupted = unit_vectors(own, standardise), unit_vectors(corrupted, standardise)
    if hard_negatives and similarity is None:
        similarity = smashed_similarity(unit_own, unit_corrupted)
    partners = negative_partners(similarity, n, rng, negatives_per_positive, hard_negatives)
    positives = pair_features(unit_own, unit_corrupted)
    rows, others = np.repeat(np.arange(n), partners.shape[1]), partners.reshape(-1)
    distinct = np.array(
        [not np.array_equal(own[i], corrupted[k]) for i, k in zip(rows, others, strict=True)],
        dtype=bool,
    )
    rows, others = rows[distinct], others[distinct]
    # In slices: gathering every negative pair's vectors at once would take ~1 GiB at 5,000.
    negatives = np.empty((len(rows), feature_count(own.shape[1])), dtype=np.float32)
    for start in range(0, len(rows), _FEATURE_ROWS):
        part = slice(start, start + _FEATURE_ROWS)
        negatives[part] = pair_features(unit_own[rows[part]], unit_corrupted[others[part]])
    labels = np.zeros(n + len(negatives), dtype=np.int8)
    labels[:n] = 1
    return np.concatenate([positives, negatives]), labels
