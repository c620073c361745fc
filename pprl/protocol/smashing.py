"""Smashing: a record becomes its edit distances to every Reference Set value.

Only these distance vectors leave a party, never the names themselves.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pprl.protocol.progress import Progress
from pprl.protocol.release import Release

Key = TypeVar("Key", bound=Hashable)


def distinct_codes(values: Iterable[Key]) -> tuple[list[Key], np.ndarray]:
    """The distinct values, and each value's index among them: names repeat a lot, so
    distances are computed once per distinct string."""
    index: dict[Key, int] = {}
    codes = [index.setdefault(value, len(index)) for value in values]
    return list(index), np.asarray(codes, dtype=np.intp)


def distance_table(
    values_a: Sequence[str], values_b: Sequence[str], clamp: int = 255
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes_a, codes_b, table): distance(a[i], b[j]) = table[codes_a[i], codes_b[j]], uint8
    Levenshtein distances between distinct values; anything above `clamp` - 1 reads as `clamp`.

    Clamping keeps the wire format one byte per distance; names are far shorter than 255.
    """
    if not 1 <= clamp <= 255:
        raise ValueError(f"clamp must be in 1..255 to fit uint8, got {clamp}")
    distinct_a, codes_a = distinct_codes(values_a)
    distinct_b, codes_b = distinct_codes(values_b)
    table = process.cdist(
        distinct_a,
        distinct_b,
        scorer=Levenshtein.distance,
        dtype=np.uint8,
        workers=-1,
        score_cutoff=clamp - 1,
    )
    return codes_a, codes_b, table


def smash_values(
    values: Sequence[str],
    reference_values: Sequence[str],
    clamp: int = 255,
    release: Release | None = None,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """(n, R) uint8 Levenshtein distances of each value to each reference value, or their
    released codes: `release` noises each distinct value once (see pprl.protocol.release)."""
    codes, ref_codes, table = distance_table(values, reference_values, clamp)
    if release is not None:
        table = release.encode(table, rng)
    return table[np.ix_(codes, ref_codes)]


def smash(
    attributes: Mapping[str, Sequence[str]],
    reference_columns: Mapping[str, Sequence[str]],
    mapping: Sequence[tuple[str, str]],
    clamp: int = 255,
    progress: Progress | None = None,
    release: Release | None = None,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """(n, |M|, R) uint8: one distance vector (or its released codes) per record and entry.

    `attributes` and `reference_columns` are column-oriented (name -> values per row).
    `progress(done, total)` is called after each mapping entry, the unit of work that
    deduplicates repeated names.
    """
    sizes = {len(values) for values in reference_columns.values()}
    if len(sizes) != 1:
        raise ValueError(f"reference columns differ in length: {sorted(sizes)}")
    for attribute, column in mapping:
        if attribute not in attributes:
            raise ValueError(f"mapping names attribute {attribute!r} the records lack")
        if column not in reference_columns:
            raise ValueError(f"mapping names reference column {column!r} the set lacks")
    slices = []
    for attribute, column in mapping:
        slices.append(
            smash_values(attributes[attribute], reference_columns[column], clamp, release, rng)
        )
        if progress is not None:
            progress(len(slices), len(mapping))
    return np.stack(slices, axis=1)
