"""Runs the quality benchmark over a grid, keeps every row on disk as it goes, and summarises
repetitions as mean and spread."""

from __future__ import annotations

import csv
import json
import os
import platform
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pprl.bench.data import make_task, read_reference
from pprl.bench.quality import Log, Row, Variant, run_cell
from pprl.files.atomic import atomic_file, write_text_atomic
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams

ROLES = ("alice", "bob", "agreed", "plain")
METRICS = ("precision", "recall", "f1")
TIMES = ("alice_match_seconds", "bob_match_seconds", "plain_match_seconds")


@dataclass(frozen=True)
class Grid:
    sizes: Sequence[int]
    reference_rows: Sequence[int]
    variants: Sequence[Variant]
    repetitions: int = 3
    first_seed: int = 1
    reference_path: str | None = None
    errors_per_row: int | tuple[int, int] = 1
    missing_rate: float = 0.0
    overlap: float = 1.0
    # Bob's copies corrupted by this error model instead of errors_per_row single edits.
    error_model: str | None = None
    # Share of Bob's people Alice lacks who are namesakes of hers (another middle name).
    namesakes: float = 0.0
    with_plain: bool = True
    # What every cell's agreement fixes (noise, features); None: the daemon's defaults.
    method: MethodParams | None = None
    matching: str = "all-pairs"


def flatten(row: Row) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            flat.update({f"{key}_{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def write_rows(out: Path, stem: str, rows: list[Row], settings: dict[str, Any]) -> None:
    """<stem>.json (settings, rows, summary) and <stem>.csv (one flat line per row)."""
    out.mkdir(parents=True, exist_ok=True)
    document = {"settings": settings, "rows": rows, "summary": summarise(rows)}
    write_text_atomic(out / f"{stem}.json", json.dumps(document, indent=1) + "\n")
    flat = [flatten(row) for row in rows]
    columns = list(dict.fromkeys(key for row in flat for key in row))
    path = out / f"{stem}.csv"
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(flat)


def _key(row: Row) -> tuple:
    return (
        row["size"],
        row["reference_rows"],
        row["variant_training_records"],
        row["variant_kernel"],
        row["variant_name"],
    )


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def summarise(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One entry per grid point and variant: mean, sd, min, max over the repetitions."""
    groups: dict[tuple, list[Row]] = {}
    for row in rows:
        groups.setdefault(_key(row), []).append(row)
    summary = []
    for (size, ref_rows, training, kernel, name), group in groups.items():
        entry: dict[str, Any] = {
            "size": size,
            "reference_rows": ref_rows,
            "training_records": training,
            "kernel": kernel,
            "variant": name,
            "repetitions": len(group),
        }
        for role in ROLES:
            if role in group[0]:
                entry[role] = {m: _spread([r[role][m] for r in group]) for m in METRICS}
        for name_ in TIMES:
            if name_ in group[0]:
                entry[name_] = _spread([r[name_] for r in group])
        summary.append(entry)
    return summary


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
    }


def run_grid(grid: Grid, out: Path, stem: str, command: str, log: Log) -> list[Row]:
    """Every (size, reference rows, repetition) cell in turn; results are rewritten after each
    cell, so an interrupted run keeps what it finished."""
    settings = {
        "command": command,
        "machine": machine(),
        "sizes": list(grid.sizes),
        "reference_rows": list(grid.reference_rows),
        "reference": grid.reference_path or "built-in held-out census names",
        "repetitions": grid.repetitions,
        "errors_per_row": grid.errors_per_row,
        "missing_rate": grid.missing_rate,
        "overlap": grid.overlap,
        "error_model": grid.error_model,
        "namesakes": grid.namesakes,
        "variants": [v.__dict__ for v in grid.variants],
        "method": (grid.method or method_params()).to_dict(),
        "matching": grid.matching,
    }
    rows: list[Row] = []
    references = {r: read_reference(grid.reference_path, r) for r in grid.reference_rows}
    for size in grid.sizes:
        for repetition in range(grid.repetitions):
            seed = grid.first_seed + repetition
            task = make_task(
                size,
                seed,
                errors_per_row=grid.errors_per_row,
                missing_rate=grid.missing_rate,
                overlap=grid.overlap,
                error_model=grid.error_model,
                namesakes=grid.namesakes,
            )
            for ref_rows, reference in references.items():
                log(f"size {size:,}, reference {ref_rows:,} rows, seed {seed}")
                cell = run_cell(
                    task,
                    reference,
                    grid.variants,
                    seed,
                    method=grid.method,
                    matching_mode=grid.matching,
                    with_plain=grid.with_plain,
                    log=log,
                )
                for row in cell:
                    row["repetition"] = repetition
                rows.extend(cell)
                write_rows(out, stem, rows, settings)
    return rows
