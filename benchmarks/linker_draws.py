"""The non-private linker's F1 over its own draws: the reference release without noise,
every pair scored, gate off (the configuration sealed linkage's quality target is measured
against), linked in one process at each seed of `--seeds`. A seed is both parties' training
draw and secret row order; on names alone records that share both names are tied, so which
of them pairs with which moves with the draw, and so does F1. A target "within 0.005 of that
configuration" compares the median of sealed runs with this median, not with one draw.

    python benchmarks/linker_draws.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml --seeds 1-9 --json out.json
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.in_process import (
    Outcome,
    add_table_arguments,
    link_tables,
    plain_agreement,
    run_command,
    schema_tables,
)
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.party.local import read_truth


def seeds_of(text: str) -> list[int]:
    """The seeds a text names, in order: a range "1-9", a list "1,4,7", or both "1-3,8"."""
    seeds: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Median and range of F1 over the draws."""
    f1 = [outcome.quality.f1 for outcome in outcomes]
    return {"f1_median": statistics.median(f1), "f1_min": min(f1), "f1_max": max(f1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--seeds", default="1-9", help='draws, e.g. "1-9" or "1,2,5"')
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    agreement = plain_agreement(read, load_reference(args.reference))
    truth = read_truth(args.truth)
    rows: list[dict[str, Any]] = []
    outcomes = []
    for seed in seeds_of(args.seeds):
        outcome = link_tables(read.tables, truth, agreement, seed)
        outcomes.append(outcome)
        q = outcome.quality
        rows.append(
            {
                "seed": seed,
                "precision": q.precision,
                "recall": q.recall,
                "f1": q.f1,
                "seconds": round(outcome.seconds, 1),
            }
        )
        print(f"seed {seed}: P {q.precision:.4f} R {q.recall:.4f} F1 {q.f1:.4f}", flush=True)
    total = summary(outcomes)
    print(
        f"F1 median {total['f1_median']:.4f} ({total['f1_min']:.4f}-{total['f1_max']:.4f}) "
        f"over {len(outcomes)} draws"
    )
    if args.json:
        result = {"command": run_command(args), "draws": rows, **total}
        write_result(args.json, result)


if __name__ == "__main__":
    main()
