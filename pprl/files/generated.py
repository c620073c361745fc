"""Generated data written as the CSV files a party reads: records, truth and reference."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

from pprl.files.atomic import atomic_file
from pprl.protocol.data.synthetic import Person
from pprl.protocol.errors import SettingError


def _write_csv_atomic(path: Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    with atomic_file(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def write_records_csv(path: Path, people: Sequence[Person]) -> None:
    _write_csv_atomic(
        path, ("id", "first", "middle", "last"), ((p.id, p.first, p.middle, p.last) for p in people)
    )


def write_truth_csv(
    path: Path, truth: Sequence[tuple[str, str]], parties: tuple[str, str] = ("alice", "bob")
) -> None:
    _write_csv_atomic(path, tuple(f"{name}_id" for name in parties), truth)


def write_reference_csv(path: Path, reference: dict[str, list[str]]) -> None:
    if len(reference["first"]) != len(reference["last"]):
        raise SettingError("reference columns 'first' and 'last' differ in length")
    _write_csv_atomic(
        path, ("first", "last"), zip(reference["first"], reference["last"], strict=True)
    )
