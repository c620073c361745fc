"""CSV files read so that every later error can name the file, the row and the field."""

from __future__ import annotations

import csv
import hashlib
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from pprl.protocol.errors import InputError

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class CsvTable:
    """A parsed CSV file whose rows keep their line numbers, so later errors can point at them."""

    path: str
    header: list[str]
    header_row: int
    rows: list[tuple[int, list[str]]]
    # SHA-256 (hex) of exactly the bytes parsed: what a run that uses these rows stands on.
    sha256: str = ""


def read_table(path: str | Path) -> CsvTable:
    """Read a UTF-8 CSV file, refusing anything that would make later row numbers wrong."""
    name = str(path)
    data = _read_bytes(name)
    records = _parse(name, _decoded_lines(name, data))
    if not records:
        raise InputError("empty file: no header", path=name)
    header_row, header = records[0]
    header = [column.strip() for column in header]
    for line, fields in records[1:]:
        if len(fields) != len(header):
            message = f"has {len(fields)} fields but the header has {len(header)}"
            raise InputError(message, path=name, row=line)
        _refuse_control_characters(name, line, header, fields)
    return CsvTable(name, header, header_row, records[1:], hashlib.sha256(data).hexdigest())


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
