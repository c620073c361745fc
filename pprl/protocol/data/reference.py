"""The public reference set and the mapping of record attributes onto its columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pprl.protocol.data.canonical import BadValue
from pprl.protocol.data.combined import parts, with_combined
from pprl.protocol.data.error_model import ONE_ERROR
from pprl.protocol.data.kinds import (
    DEFAULT_KIND,
    REFERENCE_DATE_FORMAT,
    kind_named,
    normalise_value,
)
from pprl.protocol.errors import InputError

MappingEntry = tuple[str, str]
DEFAULT_MAPPING: tuple[MappingEntry, ...] = (
    ("first", "first"),
    ("last", "last"),
    ("middle", "first"),
    ("middle", "last"),
)
# With register errors (any error model but the paper's one-error), the combined entry
# compares the sorted words of the three names, which finds values written in the wrong
# field; the paper's middle->last entry then only adds a second vote for a middle name that
# differs, and cost namesake data 0.025 of F1 (docs/research/results.md, "Each phenomenon"). The
# initials tell a middle name cut to its initial from a namesake's other middle name, and
# keep a nickname that shares the first name's initial (JIM, JAMES) close (combined.py).
REGISTER_MAPPING: tuple[MappingEntry, ...] = (
    ("first", "first"),
    ("last", "last"),
    ("middle", "first"),
    ("first+middle+last", "first+last"),
    ("middle:initial", "first"),
    ("first:initial", "first"),
)


def default_mapping(error_model: str) -> tuple[MappingEntry, ...]:
    """The mapping a configuration without one gets, for its error model."""
    return DEFAULT_MAPPING if error_model == ONE_ERROR else REGISTER_MAPPING


@dataclass(frozen=True)
class ReferenceSet:
    """Public names both parties compare their records against; values are normalised."""

    path: str
    columns: dict[str, list[str]]
    # The file line of each row, so a value its kind cannot read is reported where it is.
    lines: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))


def typed_reference(
    reference: ReferenceSet,
    mapping: Sequence[MappingEntry],
    kinds: Mapping[str, str],
    scales: Mapping[str, float] | None = None,
) -> ReferenceSet:
    """The reference set with each mapped column in its kind's canonical form (dates written
    as YYYY-MM-DD become YYYYMMDD), refusing a column two kinds (or two quantities or
    coordinates of different scales) share, since its statistics are one per column, or a
    value its kind cannot read."""
    column_kinds: dict[str, str] = {}
    column_scales: dict[str, float | None] = {}
    for attribute, column in mapping:
        kind = kinds.get(attribute, DEFAULT_KIND)
        if column_kinds.setdefault(column, kind) != kind:
            message = (
                f"reference column {column!r} is mapped from attributes of kinds "
                f"{column_kinds[column]!r} and {kind!r}; a column holds values of one kind"
            )
            raise InputError(message, path=reference.path, field=column)
        scale = (scales or {}).get(attribute)
        if column_scales.setdefault(column, scale) != scale:
            message = (
                f"reference column {column!r} is mapped from {kind} attributes of scales "
                f"{column_scales[column]!r} and {scale!r}; a column has one scale"
            )
            raise InputError(message, path=reference.path, field=column)
    for column, kind in column_kinds.items():
        for part in parts(column):
            _check_distinct(reference, part, kind)
    columns = dict(reference.columns)
    for column, kind in column_kinds.items():
        for part in parts(column):  # a combined entry's columns, each read as its kind
            if part in reference.columns:
                columns[part] = _typed_column(reference, part, kind)
    return ReferenceSet(reference.path, columns, reference.lines)


def _check_distinct(reference: ReferenceSet, column: str, kind: str) -> None:
    if column not in reference.columns:
        return  # validate_mapping names a missing column
    least = kind_named(kind).min_reference_values
    distinct = len({value for value in reference.columns[column] if value})
    if distinct < least:
        message = (
            f"has {distinct} distinct value(s); a column mapped from a {kind} attribute needs "
            f"at least {least} to tell records apart (the paper used 200 to 2,000 names; "
            "see docs/research/reference-sets.md)"
        )
        raise InputError(message, path=reference.path, field=column)


def _typed_column(reference: ReferenceSet, column: str, kind: str) -> list[str]:
    lines = reference.lines or tuple(range(2, len(reference) + 2))
    values = []
    for line, raw in zip(lines, reference.columns[column], strict=True):
        try:
            value = normalise_value(kind, raw, REFERENCE_DATE_FORMAT)
        except BadValue as error:
            message = f"{error}: the column is mapped from a {kind} attribute"
            message += kind_named(kind).reference_form
            raise InputError(message, path=reference.path, row=line, field=column) from None
        blank = kind_named(kind).blank_reference() if value is None else None
        if blank is not None:
            raise InputError(blank, path=reference.path, row=line, field=column)
        values.append(value or "")
    return values


def validate_mapping(
    mapping: Sequence[MappingEntry], attributes: Sequence[str], reference: ReferenceSet
) -> None:
    """Refuse a mapping the method cannot compute, before any data is exchanged."""
    if not mapping:
        raise InputError("the mapping is empty; it needs at least one attribute->column entry")
    for attribute, column in mapping:
        if not set(parts(attribute)) <= set(attributes):
            message = (
                f"mapping entry {attribute}->{column} names an attribute that is not configured "
                f"(attributes: {', '.join(attributes)})"
            )
            raise InputError(message, field=attribute)
        if not set(parts(column)) <= set(reference.columns):
            message = (
                f"mapping entry {attribute}->{column} names a column the reference set lacks "
                f"(columns: {', '.join(reference.columns)})"
            )
            raise InputError(message, path=reference.path, field=column)
    repeated = [entry for entry in mapping if list(mapping).count(entry) > 1]
    if repeated:
        attribute, column = repeated[0]
        raise InputError(f"mapping entry {attribute}->{column} appears more than once")


def reference_overlap(
    attributes: dict[str, list[str]],
    reference: ReferenceSet,
    mapping: Sequence[MappingEntry],
) -> dict[str, int]:
    """Distinct values each mapping entry shares with its reference column. Any public list
    shares common values with real records; this is reported, not refused: a shared value
    has a zero in its vector, which the privacy gate's attack on the release takes into
    account (docs/research/privacy.md)."""
    validate_mapping(mapping, list(attributes), reference)
    records = with_combined(attributes, [attribute for attribute, _ in mapping])
    columns = with_combined(reference.columns, [column for _, column in mapping])
    overlap = {}
    for attribute, column in mapping:
        values = {value for value in records[attribute] if value}
        overlap[f"{attribute}->{column}"] = len(values & set(columns[column]))
    return overlap
