"""Time `pprl demo` end to end (real daemons, mutual TLS) and report medians per classifier.

    .venv/bin/python benchmarks/demo_bench.py --repeats 5 --classifiers linear rbf

Each repeat is a fresh `pprl demo` process: data generation, certificates, daemon start-up
and all seven phases count. Prints a Markdown table for docs/research/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ["agree", "smash", "train", "exchange", "match", "reveal", "link"]


# The demo's defaults before it ran private by default: no gate (so no noise), 1,000 rows.
FORMER_DEFAULTS = ("--max-reidentification", "1", "--reference-rows", "1000")


def run_once(
    size: int, classifier: str, out: Path, extra: tuple[str, ...] = ()
) -> tuple[dict, float]:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pprl",
            "demo",
            "--size",
            str(size),
            "--classifier",
            classifier,
            "--json",
            str(out),
            "--workdir",
            str(out.with_suffix("")),  # in the benchmark's temporary directory, not here
            *extra,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(out.read_text()), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--classifiers", nargs="+", default=["linear", "rbf"])
    parser.add_argument(
        "--former-defaults",
        action="store_true",
        help="no gate and 1,000 reference rows, as the demo ran before it was private by default",
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for classifier in args.classifiers:
            runs = [
                run_once(
                    args.size,
                    classifier,
                    Path(tmp) / f"{classifier}-{i}.json",
                    FORMER_DEFAULTS if args.former_defaults else (),
                )
                for i in range(args.repeats)
            ]
            rows.append((classifier, runs))
    median = statistics.median
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {args.size} records a side, "
        f"{args.repeats} repeats, medians\n"
    )
    header = [
        "classifier",
        "process wall (s)",
        "protocol (s)",
        *PHASES,
        "alice F1",
        "bob F1",
        "linkage P",
        "linkage R",
        "linkage F1",
        "bytes sent per party",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for classifier, runs in rows:
        summaries = [s for s, _ in runs]
        cells = [
            classifier,
            f"{median(w for _, w in runs):.2f}",
            f"{median(s['seconds'] for s in summaries):.2f}",
            *(f"{median(s['phases'][p] for s in summaries):.2f}" for p in PHASES),
            f"{median(s['alice']['f1'] for s in summaries):.4f}",
            f"{median(s['bob']['f1'] for s in summaries):.4f}",
            f"{median(s['linkage']['precision'] for s in summaries):.4f}",
            f"{median(s['linkage']['recall'] for s in summaries):.4f}",
            f"{median(s['linkage']['f1'] for s in summaries):.4f}",
            f"{median(b for s in summaries for b in s['bytes_sent'].values()):,.0f}",
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
