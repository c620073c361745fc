"""Smashing: a record becomes its edit distances to every Reference Set value.

Only these distance vectors leave a party, never the values themselves. The distance suits
the attribute's kind (pprl.protocol.data.distances): Levenshtein on the canonical text, and for
dates the smaller of that and one more than the distance with day and month exchanged, so a
date and its day/month swap get vectors within one edit of each other; for quantities the
absolute difference in units of the attribute's scale, for coordinates the great-circle
distance in units of theirs (metres). A missing value (the empty string
after normalisation) is released as MISSING_CODE in every coordinate.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from pprl.protocol.data.distances import Metric
from pprl.protocol.data.kinds import DEFAULT_KIND, KINDS, Kind, kind_distances
from pprl.protocol.errors import SettingError
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.release import ProjectedRelease, Release

Key = TypeVar("Key", bound=Hashable)
Encoder = Release | ProjectedRelease


def distinct_codes(values: Iterable[Key]) -> tuple[list[Key], np.ndarray]:
    """The distinct values, and each value's index among them: names repeat a lot, so
    distances are computed once per distinct string."""
    index: dict[Key, int] = {}
    codes = [index.setdefault(value, len(index)) for value in values]
    return list(index), np.asarray(codes, dtype=np.intp)


def distance_table(
    values_a: Sequence[str],
    values_b: Sequence[str],
    clamp: int = 254,
    kind: str = DEFAULT_KIND,
    empty_is_missing: bool = True,
    scale: float | None = None,
    metric: Metric | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes_a, codes_b, table): distance(a[i], b[j]) = table[codes_a[i], codes_b[j]], uint8
    distances between distinct values; anything above `clamp` - 1 reads as `clamp`. A missing
    value of `values_a` (the empty string) gets MISSING_CODE in its whole row, unless
    `empty_is_missing` is False (the plain baseline compares the strings it is given).
    `scale` is a quantity's unit of distance, or coordinates' in metres; `metric` replaces
    the kind's distance.

    Clamping keeps the wire format one byte per distance; names are far shorter than 254, and
    255 is left for missing values.
    """
    if not 1 <= clamp < MISSING_CODE:
        raise SettingError(f"clamp must be in 1..{MISSING_CODE - 1} to fit uint8, got {clamp}")
    distinct_a, codes_a = distinct_codes(values_a)
    distinct_b, codes_b = distinct_codes(values_b)
    present = [i for i, value in enumerate(distinct_a) if value or not empty_is_missing]
    table = np.full((len(distinct_a), len(distinct_b)), MISSING_CODE, dtype=np.uint8)
    if present:
        values = [distinct_a[i] for i in present]
        table[present] = kind_distances(values, distinct_b, kind, clamp, scale, metric)
    return codes_a, codes_b, table


def smash_values(
    values: Sequence[str],
    reference_values: Sequence[str],
    clamp: int = 254,
    release: Encoder | None = None,
    rng: np.random.Generator | None = None,
    kind: str = DEFAULT_KIND,
    scale: float | None = None,
    key: NoiseKey | None = None,
    label: str = "",
    metric: Metric | None = None,
) -> np.ndarray:
    """(n, R) uint8 distances of each value to each reference value, or their released codes
    ((n, k) for a projected release): `release` noises each distinct value once (see
    pprl.protocol.vectors.release), with draws from `key` and `label` when a key is given
    (pprl.protocol.vectors.keyed_noise), else from `rng`. Missing values stay MISSING_CODE: there is
    no distance to noise."""
    codes, ref_codes, table = distance_table(
        values, reference_values, clamp, kind, scale=scale, metric=metric
    )
    if release is None:
        return table[np.ix_(codes, ref_codes)]
    missing = table[:, 0] == MISSING_CODE if table.size else np.zeros(0, dtype=bool)
    draws = None
    if key is not None and release.noise > 0:
        # One draw per released coordinate: per distinct reference value, or per component.
        width = release.width if isinstance(release, ProjectedRelease) else table.shape[1]
        draws = key.draws(label, distinct_codes(values)[0], width)
    if isinstance(release, ProjectedRelease):
        # The projection needs every coordinate, repeated reference values included.
        released = release.encode(table[:, ref_codes], rng, draws)
        released[missing] = MISSING_CODE
        return released[codes]
    table = release.encode(table, rng, draws)
    table[missing] = MISSING_CODE
    return table[np.ix_(codes, ref_codes)]


@dataclass(frozen=True)
class Entry:
    """How one mapping entry is smashed, built once by the agreement (Agreement.entries): the
    attribute and the reference column it is compared with, the attribute's kind and scale,
    what releases its distances and the label its keyed noise is drawn under, and the distance
    that replaces the kind's own (the Bloom filters' Hamming distance), if any."""

    attribute: str
    column: str
    kind: Kind = KINDS[DEFAULT_KIND]
    scale: float | None = None
    release: Encoder | None = None
    label: str = ""
    metric: Metric | None = None

    @classmethod
    def of(cls, entry: Entry | tuple[str, str]) -> Entry:
        """An entry as given, or a plain (attribute, column) pair: a name, raw distances."""
        return entry if isinstance(entry, Entry) else cls(*entry)


def smash(
    attributes: Mapping[str, Sequence[str]],
    reference_columns: Mapping[str, Sequence[str]],
    entries: Sequence[Entry | tuple[str, str]],
    clamp: int = 254,
    progress: Progress | None = None,
    rng: np.random.Generator | None = None,
    key: NoiseKey | None = None,
) -> np.ndarray:
    """(n, |M|, R) uint8: one distance vector (or its released codes) per record and entry.

    `attributes` and `reference_columns` are column-oriented (name -> values per row).
    `progress(done, total)` is called after each mapping entry, the unit of work that
    deduplicates repeated names. An entry's release noises its distances (a projected release
    makes the last axis k wide): with a noise `key`, keyed by the entry's label, else drawn
    from `rng`.
    """
    sizes = {len(values) for values in reference_columns.values()}
    if len(sizes) != 1:
        raise ValueError(f"reference columns differ in length: {sorted(sizes)}")
    specs = [Entry.of(entry) for entry in entries]
    for spec in specs:
        if spec.attribute not in attributes:
            raise SettingError(f"mapping names attribute {spec.attribute!r} the records lack")
        if spec.column not in reference_columns:
            raise ValueError(f"mapping names reference column {spec.column!r} the set lacks")
    if key is not None and not all(spec.label for spec in specs):
        raise ValueError("keyed noise needs a label for every mapping entry")
    slices = []
    for spec in specs:
        slices.append(
            smash_values(
                attributes[spec.attribute],
                reference_columns[spec.column],
                clamp,
                spec.release,
                rng,
                spec.kind.name,
                spec.scale,
                key,
                spec.label,
                spec.metric,
            )
        )
        if progress is not None:
            progress(len(slices), len(specs))
    return np.stack(slices, axis=1)
