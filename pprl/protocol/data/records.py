"""One party's records as the method holds them: ids and normalised quasi-identifiers.

Values are normalised by their attribute's kind (pprl.protocol.data.kinds); a blank cell is a
missing value, held as the empty string. Different people may share every compared value
(two John Smiths): such records are kept and counted, and each record knows how many records
share its values so the linkage output can mark them for review. Reading them from a file is
pprl.files.records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pprl.protocol.data.canonical import composed

BAD_VALUE_POLICIES = ("error", "missing")


def normalise(value: str) -> str:
    """Upper-case, collapse internal whitespace, strip ends, one Unicode form: case, spacing
    and how an accent was typed never count."""
    return " ".join(composed(value).split()).upper()


def sharing_of(columns: Mapping[str, Sequence[str]]) -> list[int]:
    """Per row of `columns`, how many rows (itself included) hold exactly its values."""
    rows = list(zip(*columns.values(), strict=True))
    counts = Counter(rows)
    return [counts[row] for row in rows]


@dataclass(frozen=True)
class RecordTable:
    """One party's records; attribute values are normalised so both parties compare alike."""

    path: str
    ids: list[str]
    attributes: dict[str, list[str]]
    # Per attribute: cells its kind could not read, counted as missing (policy "missing").
    unreadable: dict[str, int] = field(default_factory=dict)
    # SHA-256 (hex) of the bytes these records were read from ("" when not from a file).
    sha256: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    def missing(self) -> dict[str, int]:
        """Per attribute, how many records lack a value."""
        return {name: values.count("") for name, values in self.attributes.items()}

    def sharing(self) -> list[int]:
        """Per record, how many records (itself included) hold exactly its compared values:
        above 1, the values alone cannot tell those records apart."""
        return sharing_of(self.attributes)

    def repeated(self) -> tuple[int, int]:
        """(groups of records sharing all compared values, records in those groups)."""
        sizes = [size for size in Counter(self.rows()).values() if size > 1]
        return len(sizes), sum(sizes)

    def rows(self) -> list[tuple[str, ...]]:
        """Per record, the attribute values in attribute order."""
        return list(zip(*self.attributes.values(), strict=True))
