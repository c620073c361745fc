"""MATCH's peak memory against the peer's row count, the peer matched in slices (the
default) and in one pass, in the same run: own rows fixed, the peer's first n rows.

    python benchmarks/match_memory.py --records-a A.csv --records-b B.csv \\
        --reference REF.csv --schema SCHEMA.toml --own 5000 --sizes 10000,20000,40000 \\
        --sigma 0 --json out.json

Peak memory is the process's high-water mark (VmHWM, reset before each pass) over its
resident memory just before; Linux only.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import add_table_arguments, run_command, schema_tables
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.linkage import candidates, matching
from pprl.protocol.method import method_params
from pprl.protocol.vectors.randomness import Randomness


def _status(field: str) -> float:
    """A /proc/self/status figure in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _peak(measure: Any) -> tuple[Any, float, float]:
    """What `measure()` returns, its peak memory over the resident memory before (MiB), and
    its seconds."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
        refs.write("5")  # resets VmHWM to the current resident memory
    before = _status("VmRSS")
    began = time.perf_counter()
    result = measure()
    return result, _status("VmHWM") - before, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--own", type=int, default=5000, help="own rows")
    parser.add_argument("--sizes", default="10000,20000,40000", help="peer rows to match")
    parser.add_argument("--sigma", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    method = method_params(**{**read.method, "noise_sigma": args.sigma})
    agreement = Agreement(
        load_reference(args.reference), read.mapping, method, read.kinds, read.scales
    )
    alice, bob = read.tables
    own_randomness, peer_randomness = Randomness(args.seed, "alice"), Randomness(args.seed, "bob")
    model, _ = pipeline.train(agreement, alice.attributes, own_randomness)
    own_rows = {name: values[: args.own] for name, values in alice.attributes.items()}
    own = pipeline.release(agreement, own_rows, own_randomness).tensor
    peer_all = pipeline.release(agreement, bob.attributes, peer_randomness).tensor
    selection = matching.Selection(model, agreement.method.top_k)
    rows: list[dict[str, Any]] = []
    for size in (int(s) for s in args.sizes.split(",")):
        peer = np.ascontiguousarray(peer_all[:size])
        row: dict[str, Any] = {"peer_rows": size, "slice_rows": candidates.peer_slice_rows(peer)}
        found = {}
        for label, slice_rows in (("one_pass", size), ("sliced", None)):
            outcome, mib, seconds = _peak(
                lambda s=slice_rows, p=peer: candidates.accepted_pairs(
                    own, p, selection, standardise=agreement.standardise, slice_rows=s
                )
            )
            found[label] = outcome.matches
            row[label] = {"peak_mib": round(mib), "seconds": round(seconds, 1)}
        row["same_pairs"] = bool(
            np.array_equal(found["one_pass"].rows_a, found["sliced"].rows_a)
            and np.array_equal(found["one_pass"].rows_b, found["sliced"].rows_b)
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        result = {"command": run_command(args), "own_rows": len(own), "rows": rows}
        write_result(args.json, result)


if __name__ == "__main__":
    main()
