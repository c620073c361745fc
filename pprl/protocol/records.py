"""Load one party's records: the ids and the quasi-identifiers the method compares.

Values are normalised by their attribute's kind (pprl.protocol.kinds); a blank cell is a
missing value, held as the empty string from here on. Different people may share every
compared value (two John Smiths): such records are kept and counted, and each record knows
how many records share its values so the linkage output can mark them for review.
"""

from __future__ import annotations

import csv
import unicodedata
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pprl.protocol.errors import InputError
from pprl.protocol.kinds import Attribute, BadValue

BAD_VALUE_POLICIES = ("error", "missing")

_BOM = b"\xef\xbb\xbf"
_SHOWN_GROUPS = 3
_SHOWN_ROWS = 5


def normalise(value: str) -> str:
    """Upper-case, collapse internal whitespace, strip ends: case and spacing never count."""
    return " ".join(value.split()).upper()


@dataclass(frozen=True)
class CsvTable:
    """A parsed CSV file whose rows keep their line numbers, so later errors can point at them."""

    path: str
    header: list[str]
    header_row: int
    rows: list[tuple[int, list[str]]]


@dataclass(frozen=True)
class RecordTable:
    """One party's records; attribute values are normalised so both parties compare alike."""

    path: str
    ids: list[str]
    attributes: dict[str, list[str]]
    # Per attribute: cells its kind could not read, counted as missing (policy "missing").
    unreadable: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def missing(self) -> dict[str, int]:
        """Per attribute, how many records lack a value."""
        return {name: values.count("") for name, values in self.attributes.items()}

    def sharing(self) -> list[int]:
        """Per record, how many records (itself included) hold exactly its compared values:
        above 1, the values alone cannot tell those records apart."""
        rows = self.rows()
        counts = Counter(rows)
        return [counts[row] for row in rows]

    def repeated(self) -> tuple[int, int]:
        """(groups of records sharing all compared values, records in those groups)."""
        sizes = [size for size in Counter(self.rows()).values() if size > 1]
        return len(sizes), sum(sizes)

    def rows(self) -> list[tuple[str, ...]]:
        """Per record, the attribute values in attribute order."""
        return list(zip(*self.attributes.values(), strict=True))


def read_table(path: str | Path) -> CsvTable:
    """Read a UTF-8 CSV file, refusing anything that would make later row numbers wrong."""
    name = str(path)
    records = _parse(name, _decoded_lines(name, _read_bytes(name)))
    if not records:
        raise InputError("empty file: no header", path=name)
    header_row, header = records[0]
    header = [column.strip() for column in header]
    for line, fields in records[1:]:
        if len(fields) != len(header):
            message = f"has {len(fields)} fields but the header has {len(header)}"
            raise InputError(message, path=name, row=line)
        _refuse_control_characters(name, line, header, fields)
    return CsvTable(name, header, header_row, records[1:])


def _refuse_control_characters(path: str, line: int, header: list[str], fields: list[str]) -> None:
    """A NUL or another control character in a value is a damaged file, not a name: it
    would be compared as a letter. Tabs and line breaks are spacing and are normalised."""
    for column, value in zip(header, fields, strict=True):
        for char in value:
            if unicodedata.category(char) == "Cc" and char not in "\t\n\r":
                message = f"holds the control character U+{ord(char):04X}"
                raise InputError(message, path=path, row=line, field=column)


def _read_bytes(path: str) -> bytes:
    """Read the whole file, turning OS failures into errors that name it."""
    if Path(path).is_dir():
        raise InputError("is a directory, not a file", path=path)
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", path=path) from None


def _decoded_lines(path: str, data: bytes) -> list[str]:
    """Decode line by line so a bad byte is reported with its line number."""
    lines = data.splitlines(keepends=True)
    if lines and lines[0].startswith(_BOM):
        lines[0] = lines[0][len(_BOM) :]
    decoded = []
    for number, line in enumerate(lines, start=1):
        try:
            decoded.append(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            message = f"not valid UTF-8 (byte {error.start + 1} of the line)"
            raise InputError(message, path=path, row=number) from None
    return decoded


def _parse(path: str, lines: list[str]) -> list[tuple[int, list[str]]]:
    """Split CSV records, each with the line it starts on; blank lines are skipped."""
    reader = csv.reader(lines, strict=True)
    records = []
    start = 1
    try:
        for fields in reader:
            if fields:
                records.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as error:
        raise InputError(f"malformed CSV: {error}", path=path, row=start) from None
    return records


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
        raise ValueError(f"on_bad_value must be one of {BAD_VALUE_POLICIES}, got {on_bad_value!r}")
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
                    raise InputError(
                        f"{error}{hint}", path=table.path, row=line, field=attribute.name
                    ) from None
                column.append("")
                bad += 1
        values[attribute.name] = column
        if bad:
            unreadable[attribute.name] = bad
    return RecordTable(table.path, ids, values, unreadable)


def _check_configuration(id_column: str, attributes: tuple[str, ...]) -> None:
    """A repeated or missing configured column would silently drop a comparison."""
    if not attributes:
        raise ValueError("at least one attribute is needed")
    if len({id_column, *attributes}) != len(attributes) + 1:
        raise ValueError(f"configured columns repeat: {id_column!r}, {', '.join(attributes)}")


def _locate(table: CsvTable, names: Sequence[str]) -> dict[str, int]:
    """Find each configured column in the header, refusing missing or ambiguous ones."""
    missing = [name for name in names if name not in table.header]
    if missing:
        has = ", ".join(map(repr, table.header))
        wanted = ", ".join(map(repr, missing))
        message = f"missing column(s) {wanted}; the header has {has}"
        raise InputError(message, path=table.path, row=table.header_row, field=missing[0])
    for name in names:
        if table.header.count(name) > 1:
            message = "column appears more than once in the header"
            raise InputError(message, path=table.path, row=table.header_row, field=name)
    return {name: table.header.index(name) for name in names}


def _record_id(table: CsvTable, line: int, value: str, id_column: str) -> str:
    """Ids are kept as written (bar surrounding spaces) because they are only matched exactly."""
    stripped = value.strip()
    if not stripped:
        raise InputError("empty id", path=table.path, row=line, field=id_column)
    return stripped


def _refuse_duplicate_ids(path: str, id_column: str, ids: list[str], lines: list[int]) -> None:
    """A duplicated id would make the linkage result ambiguous."""
    groups = _duplicate_groups(ids, lines)
    if groups:
        shown = "; ".join(f"{key!r} in {_rows_text(rows)}" for key, rows in groups[:_SHOWN_GROUPS])
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
