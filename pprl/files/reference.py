"""Load the public reference set from its CSV file."""

from __future__ import annotations

from pathlib import Path

from pprl.files.tables import CsvTable, read_table
from pprl.protocol.data.records import normalise
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.errors import InputError


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
    return ReferenceSet(table.path, columns, tuple(line for line, _ in table.rows))


def _check_header(table: CsvTable) -> None:
    """Every reference column can be named in a mapping, so each needs one unique name."""
    for position, name in enumerate(table.header, start=1):
        if not name:
            message = f"column {position} of the header has no name"
            raise InputError(message, path=table.path, row=table.header_row)
        if table.header.count(name) > 1:
            message = "column appears more than once in the header"
            raise InputError(message, path=table.path, row=table.header_row, field=name)
