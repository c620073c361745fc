"""Inputs of the quality benchmark: a reference set from a file, and seeded voter-like data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pprl.files.reference import load_reference
from pprl.protocol.data.records import normalise
from pprl.protocol.data.synthetic import default_reference, generate
from pprl.protocol.errors import InputError

ATTRIBUTES = ("first", "middle", "last")
Columns = dict[str, list[str]]


def read_reference(path: str | Path | None, rows: int | None) -> Columns:
    """The first `rows` rows of a reference set (None: every row of a file) as
    {"first": [...], "last": [...]}.

    Accepts the project's CSV (a header with first and last) or the paper's file: one
    FIRST_LAST name per line, no header. None means the built-in held-out census names.
    """
    if path is None:
        if rows is None:
            raise ValueError("the built-in reference set needs a number of rows")
        return default_reference(rows)
    path = Path(path)
    try:
        first_line = path.read_text(encoding="utf-8").splitlines()[:1]
    except FileNotFoundError:
        raise InputError("reference file not found", path=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(path)) from None
    if first_line and "," in first_line[0]:
        columns = load_reference(path).columns
        for name in ("first", "last"):
            if name not in columns:
                raise InputError("the reference set lacks this column", path=str(path), field=name)
        columns = {"first": columns["first"], "last": columns["last"]}
    else:
        columns = _read_underscore_names(path)
    available = len(columns["first"])
    if rows is None:
        return columns
    if rows > available:
        raise InputError(
            f"asked for {rows} reference rows, the file has {available}", path=str(path)
        )
    return {name: values[:rows] for name, values in columns.items()}


def _read_underscore_names(path: Path) -> Columns:
    first, last = [], []
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split("_")
        if len(parts) != 2 or not all(parts):
            raise InputError(
                f"expected FIRST_LAST (one underscore), got {line.strip()!r}",
                path=str(path),
                row=row,
            )
        first.append(normalise(parts[0]))
        last.append(normalise(parts[1]))
    if not first:
        raise InputError("no names in the file", path=str(path))
    return {"first": first, "last": last}


@dataclass(frozen=True)
class LinkageTask:
    """Both parties' columns and the true pairs as (Alice row, Bob row)."""

    alice: Columns
    bob: Columns
    truth: set[tuple[int, int]]


def make_task(
    size: int,
    seed: int,
    *,
    errors_per_row: int | tuple[int, int] = 1,
    missing_rate: float = 0.0,
    middle_missing: float = 0.15,
    overlap: float = 1.0,
    error_model: str | None = None,
    namesakes: float = 0.0,
) -> LinkageTask:
    """Generated data as columns; `error_model` and `namesakes` as in synthetic.generate."""
    data = generate(
        size,
        seed,
        overlap=overlap,
        errors_per_row=errors_per_row,
        missing_rate=missing_rate,
        middle_missing=middle_missing,
        errors=error_model,
        namesakes=namesakes,
    )

    def columns(people: list) -> Columns:
        return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}

    alice_row = {p.id: i for i, p in enumerate(data.alice)}
    bob_row = {p.id: i for i, p in enumerate(data.bob)}
    truth = {(alice_row[a], bob_row[b]) for a, b in data.truth}
    return LinkageTask(columns(data.alice), columns(data.bob), truth)
