"""What the size R of a reference set costs: SMASH time and bytes per record, by R.

    nice -n 19 .venv/bin/python benchmarks/reference_size.py --records 5000 \
        --rows 500 1000 2000 4000 --repeats 3

The records are Alice's side of the built-in demo data (first, middle, last) plus a random
date of birth per record; the reference sets come from `pprl reference`'s builder
(first=first-name, last=surname, dob=date) with the given seed. Two mappings are timed with
`pprl.protocol.vectors.smashing.smash`: the demo's four name entries (first->first, last->last,
middle->first, middle->last), and one date entry (dob->dob), whose values are nearly all
distinct; smash computes each distinct value once, so repeated names cost less than dates.
Bytes per record are the uint8 tensor's: mapping entries x R. The last columns count the
values each set shares with the records, which AGREE's disjointness gate would refuse.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from datetime import date

import numpy as np

from pprl.protocol.data.reference import DEFAULT_MAPPING
from pprl.protocol.data.reference_builder import build_reference, parse_column
from pprl.protocol.data.synthetic import generate
from pprl.protocol.vectors.smashing import smash

DATE_MAPPING = (("dob", "dob"),)


def records(size: int, seed: int) -> dict[str, list[str]]:
    """Alice's demo records with a date of birth in 1920-2010 (ISO, as the reference writes)."""
    people = generate(size, seed).alice
    rng = np.random.default_rng(seed)
    start, end = date(1920, 1, 1).toordinal(), date(2010, 12, 31).toordinal()
    days = rng.integers(start, end + 1, size=size).tolist()
    return {
        "first": [p.first for p in people],
        "middle": [p.middle for p in people],
        "last": [p.last for p in people],
        "dob": [date.fromordinal(day).isoformat() for day in days],
    }


def smash_seconds(
    data: dict[str, list[str]],
    reference: dict[str, list[str]],
    mapping: Sequence[tuple[str, str]],
    repeats: int,
) -> tuple[float, float]:
    """Median (wall, CPU) seconds of smash over repeats. It runs on every core through
    rapidfuzz; the CPU time (all threads) is the steadier figure on a busy machine."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        smash(data, reference, mapping)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def shared(
    data: dict[str, list[str]], reference: dict[str, list[str]], mapping: Sequence[tuple[str, str]]
) -> int:
    return sum(len({v for v in data[a] if v} & set(reference[c])) for a, c in mapping)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--rows", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    data = records(args.records, args.seed)
    specs = [parse_column(text) for text in ("first=first-name", "last=surname", "dob=date")]
    print(
        f"{args.records:,} records; distinct values: "
        + ", ".join(f"{name} {len(set(values)):,}" for name, values in data.items())
    )
    print(
        "| R | smash 4 name entries: wall s | CPU s | smash 1 date entry: wall s | CPU s "
        "| bytes per record, 4 entries | tensor, 4 entries | shared with records: names | dates |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for rows in args.rows:
        reference = build_reference(specs, rows, args.seed)
        names = smash_seconds(data, reference, DEFAULT_MAPPING, args.repeats)
        dates = smash_seconds(data, reference, DATE_MAPPING, args.repeats)
        per_record = len(DEFAULT_MAPPING) * rows
        megabytes = per_record * args.records / 1e6
        print(
            f"| {rows:,} | {names[0]:.3f} | {names[1]:.3f} | {dates[0]:.3f} | {dates[1]:.3f} "
            f"| {per_record:,} | {megabytes:.1f} MB "
            f"| {shared(data, reference, DEFAULT_MAPPING):,} "
            f"| {shared(data, reference, DATE_MAPPING):,} |"
        )


if __name__ == "__main__":
    main()
