"""Load one party's records from its CSV file: the ids and the quasi-identifiers the method
compares, refusing only what would break a run."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

from pprl.files.tables import CsvTable, read_table
from pprl.protocol.data.kinds import Attribute, BadValue
from pprl.protocol.data.record_ids import id_problem
from pprl.protocol.data.records import BAD_VALUE_POLICIES, RecordTable
from pprl.protocol.errors import InputError, SettingError

_SHOWN_GROUPS = 3
_SHOWN_ROWS = 5


def load_records(
    path: str | Path,
    id_column: str = "id",
    attributes: Sequence[str | Attribute] = ("first", "middle", "last"),
    on_bad_value: str = "error",
) -> RecordTable:
    """Load records for linkage, refusing only what would break a run: unreadable files,
    missing columns, duplicate ids, and (unless `on_bad_value` is "missing") cells their
    kind cannot read."""
    schema = tuple(a if isinstance(a, Attribute) else Attribute(a) for a in attributes)
    names = tuple(a.name for a in schema)
    if on_bad_value not in BAD_VALUE_POLICIES:
        raise SettingError(
            f"on_bad_value must be one of {BAD_VALUE_POLICIES}, got {on_bad_value!r}"
        )
    _check_configuration(id_column, names)
    table = read_table(path)
    index = _locate(table, (id_column, *names))
    if not table.rows:
        raise InputError("no data rows (only a header)", path=table.path)
    lines = [line for line, _ in table.rows]
    ids = [
        _record_id(table, line, fields[index[id_column]], id_column) for line, fields in table.rows
    ]
    _refuse_duplicate_ids(table.path, id_column, ids, lines)
    values: dict[str, list[str]] = {}
    unreadable: dict[str, int] = {}
    for attribute in schema:
        column, bad = [], 0
        for line, fields in table.rows:
            try:
                column.append(attribute.normalise(fields[index[attribute.name]]) or "")
            except BadValue as error:
                if on_bad_value == "error":
                    hint = ' (or set on_bad_value = "missing" to count such cells as missing)'
                    # The rule, not the cell: the error may reach the coordinator and the peer.
                    raise InputError(
                        f"the value {error.rule}{hint}",
                        path=table.path,
                        row=line,
                        field=attribute.name,
                    ) from None
                column.append("")
                bad += 1
        values[attribute.name] = column
        if bad:
            unreadable[attribute.name] = bad
    return RecordTable(table.path, ids, values, unreadable, table.sha256)


def _check_configuration(id_column: str, attributes: tuple[str, ...]) -> None:
    """A repeated or missing configured column would silently drop a comparison."""
    if not attributes:
        raise SettingError("at least one attribute is needed")
    if len({id_column, *attributes}) != len(attributes) + 1:
        raise SettingError(f"configured columns repeat: {id_column!r}, {', '.join(attributes)}")


def _locate(table: CsvTable, names: Sequence[str]) -> dict[str, int]:
    """Find each configured column in the header, refusing missing or ambiguous ones."""
    missing = [name for name in names if name not in table.header]
    if missing:
        has = ", ".join(map(repr, table.header))
        wanted = ", ".join(map(repr, missing))
        message = (
            f"missing column(s) {wanted}; the header has {has}. Name the columns to read with "
            "[records] id_column and attributes (in the daemon's configuration, or in a schema "
            "file for `pprl demo --schema FILE`)"
        )
        raise InputError(message, path=table.path, row=table.header_row, field=missing[0])
    for name in names:
        if table.header.count(name) > 1:
            message = "column appears more than once in the header"
            raise InputError(message, path=table.path, row=table.header_row, field=name)
    return {name: table.header.index(name) for name in names}


def _record_id(table: CsvTable, line: int, value: str, id_column: str) -> str:
    """Ids are kept as written (bar surrounding spaces) because they are only matched exactly."""
    stripped = value.strip()
    problem = id_problem(stripped)
    if problem is not None:
        raise InputError(problem, path=table.path, row=line, field=id_column)
    return stripped


def _refuse_duplicate_ids(path: str, id_column: str, ids: list[str], lines: list[int]) -> None:
    """A duplicated id would make the linkage result ambiguous."""
    groups = _duplicate_groups(ids, lines)
    if groups:
        # Rows, not the ids: an error may travel to the coordinator, and an id is a record's.
        shown = "; ".join(f"one id in {_rows_text(rows)}" for _, rows in groups[:_SHOWN_GROUPS])
        message = (
            f"duplicate ids: {shown}; ids must be unique ({len(groups)} duplicated ids in all)"
        )
        raise InputError(message, path=path, row=groups[0][1][1], field=id_column)


def _duplicate_groups(
    keys: Sequence[Hashable], lines: Sequence[int]
) -> list[tuple[Hashable, list[int]]]:
    """Each key seen more than once with its lines, earliest repetition first."""
    seen: dict[Hashable, list[int]] = {}
    for key, line in zip(keys, lines, strict=True):
        seen.setdefault(key, []).append(line)
    groups = [(key, rows) for key, rows in seen.items() if len(rows) > 1]
    return sorted(groups, key=lambda group: group[1][1])


def _rows_text(lines: Sequence[int]) -> str:
    """'rows 5 and 17' or 'rows 2, 3, 4, 5, 6 and 12 more', so messages stay one readable line."""
    if len(lines) > _SHOWN_ROWS + 1:
        return (
            f"rows {', '.join(map(str, lines[:_SHOWN_ROWS]))} and {len(lines) - _SHOWN_ROWS} more"
        )
    return f"rows {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
