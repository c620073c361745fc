"""The public reference set and the mapping of record attributes onto its columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pprl.protocol.errors import InputError
from pprl.protocol.records import CsvTable, normalise, read_table

MappingEntry = tuple[str, str]
DEFAULT_MAPPING: tuple[MappingEntry, ...] = (
    ("first", "first"),
    ("last", "last"),
    ("middle", "first"),
    ("middle", "last"),
)


@dataclass(frozen=True)
class ReferenceSet:
    """Public names both parties compare their records against; values are normalised."""

    path: str
    columns: dict[str, list[str]]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))


def load_reference(path: str | Path) -> ReferenceSet:
    """Load the reference set; duplicate rows are allowed, unusable columns are not."""
    table = read_table(path)
    _check_header(table)
    if not table.rows:
        raise InputError("no data rows (only a header)", path=table.path)
    columns = {
        name: [normalise(fields[i]) for _, fields in table.rows]
        for i, name in enumerate(table.header)
    }
    for name, values in columns.items():
        if not any(values):
            raise InputError("every value in this column is empty", path=table.path, field=name)
    return ReferenceSet(table.path, columns)


def _check_header(table: CsvTable) -> None:
    """Every reference column can be named in a mapping, so each needs one unique name."""
    for position, name in enumerate(table.header, start=1):
        if not name:
            message = f"column {position} of the header has no name"
            raise InputError(message, path=table.path, row=table.header_row)
        if table.header.count(name) > 1:
            message = "column appears more than once in the header"
            raise InputError(message, path=table.path, row=table.header_row, field=name)


def validate_mapping(
    mapping: Sequence[MappingEntry], attributes: Sequence[str], reference: ReferenceSet
) -> None:
    """Refuse a mapping the method cannot compute, before any data is exchanged."""
    if not mapping:
        raise InputError("the mapping is empty; it needs at least one attribute->column entry")
    for attribute, column in mapping:
        if attribute not in attributes:
            message = (
                f"mapping entry {attribute}->{column} names an attribute that is not configured "
                f"(attributes: {', '.join(attributes)})"
            )
            raise InputError(message, field=attribute)
        if column not in reference.columns:
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
    attributes: dict[str, list[str]], reference: ReferenceSet, mapping: Sequence[MappingEntry]
) -> dict[str, int]:
    """Shared values mean the reference is not disjoint from the data, which the method needs."""
    validate_mapping(mapping, list(attributes), reference)
    overlap = {}
    for attribute, column in mapping:
        values = {value for value in attributes[attribute] if value}
        overlap[f"{attribute}->{column}"] = len(values & set(reference.columns[column]))
    return overlap
