"""Sealed linkage at the defaults through two real daemons at growing sizes, names and date of
birth (the European registers' generator): each phase's time, time, bytes and memory per
record, MATCH's time per candidate pair, the linkage's F1, and from the rates of the largest
run the projected time of a larger linkage.

    python benchmarks/scale.py --data scale-data --sizes 25000,50000,100000 \\
        --json docs/research/results/scale_rates.json [--project 10000000] [--workers 1,8,32]

Each size is generated once under --data (`pprl bench data european`, B's dates written
its own way and read with --date-format-b) and run in turn on the same machine, so the rates
of the sizes compare within one run. The daemons share the machine: on 2 cores each party
has about one. A phase's rate is its slower party's seconds over the records a side (MATCH's
also over the candidate pairs scored). The projection keeps each phase's rate per record,
MATCH's per candidate pair, and the candidates per record of the largest size; divided by
the workers only for the phases that run in workers (today none of the sealed phases: the
projection for more than one worker is what spreading them would give, not what runs now).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.result_file import write_result
from pprl.bench import european_registers

BENCHMARKS = Path(__file__).resolve().parent
SCHEMA = BENCHMARKS / "european" / "schema_names_dob.toml"
PHASES = ("agree", "smash", "train", "exchange", "match", "reveal", "link")
# Phases whose work could be spread over a party's workers (item 1 of the scale issue);
# AGREE, REVEAL and LINK stay in the daemon.
SPREADABLE = ("smash", "train", "exchange", "match")


def _pprl(*arguments: str, **run: Any) -> subprocess.CompletedProcess[str]:
    """`python -m pprl ...` with this interpreter (and so this tree's pprl)."""
    return subprocess.run([sys.executable, "-m", "pprl", *arguments], text=True, **run)


def data_set(data: Path, size: int) -> Path:
    """The European registers at `size` a side under `data`, generated once."""
    out = data / f"eu-{size}"
    if not (out / "truth.csv").exists():
        _pprl("bench", "data", "european", "--out", str(out), "--size", str(size), check=True)
    if not (out / "reference.csv").exists():
        european_registers.write_reference(out)
    return out


def run_size(data: Path, size: int) -> dict[str, Any]:
    """`pprl demo` at the defaults on one size; the summary's figures and the rates."""
    files = data_set(data, size)
    runs = data / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    workdir, summary_path = runs / f"scale-{size}", runs / f"scale-{size}.json"
    shutil.rmtree(workdir, ignore_errors=True)
    summary_path.unlink(missing_ok=True)
    dates = f"date_of_birth={european_registers.DATE_FORMATS['b']}"
    arguments = [
        "demo",
        *("--records-a", str(files / "records_a.csv")),
        *("--records-b", str(files / "records_b.csv")),
        *("--truth", str(files / "truth.csv"), "--reference", str(files / "reference.csv")),
        *("--schema", str(SCHEMA), "--date-format-b", dates),
        *("--workdir", str(workdir), "--json", str(summary_path)),
    ]
    began = time.perf_counter()
    done = _pprl(*arguments, capture_output=True)
    seconds = time.perf_counter() - began
    (runs / f"scale-{size}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0 or not summary_path.exists():
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return {"size": size, "status": "failed", "message": tail, "seconds": round(seconds, 1)}
    return outcome(size, json.loads(summary_path.read_text()), seconds)


def outcome(size: int, summary: dict[str, Any], seconds: float) -> dict[str, Any]:
    """One run's figures and rates from the demo's summary."""
    parties = summary["parties"]
    slowest = {
        phase: max(party["phase_seconds"].get(phase, 0.0) for party in parties.values())
        for phase in PHASES
    }
    candidates = max(party.get("scored_pairs", 0) for party in parties.values())
    sent = max(summary["bytes_sent"].values())
    return {
        "size": size,
        "status": "linked",
        "f1": round(summary["linkage"]["f1"], 4),
        "precision": round(summary["linkage"]["precision"], 4),
        "recall": round(summary["linkage"]["recall"], 4),
        "phase_seconds": {phase: round(value, 2) for phase, value in slowest.items()},
        "protocol_seconds": round(summary["seconds"], 1),
        "demo_seconds": round(seconds, 1),
        "candidates": candidates,
        "bytes_sent": sent,
        "peak_rss_gib": round(max(p["peak_rss_bytes"] for p in parties.values()) / 2**30, 2),
        "rates": rates(size, slowest, candidates, sent, summary["seconds"]),
    }


def rates(
    size: int, phases: dict[str, float], candidates: int, sent: int, total: float
) -> dict[str, float]:
    """Per record a side: milliseconds in all and per phase, bytes a party sends, candidates;
    MATCH's milliseconds per candidate pair."""
    out = {"ms_per_record": round(1000 * total / size, 4)}
    out.update({f"{p}_ms_per_record": round(1000 * s / size, 4) for p, s in phases.items()})
    out["match_ms_per_candidate"] = round(1000 * phases["match"] / max(candidates, 1), 4)
    out["candidates_per_record"] = round(candidates / size, 4)
    out["bytes_per_record"] = round(sent / size, 1)
    return out


def projection(run: dict[str, Any], records: int, workers: int) -> dict[str, float]:
    """`records` a side from one run's rates: each phase per record, MATCH per candidate at
    the run's candidates per record; the spreadable phases divided by `workers`."""
    measured = run["rates"]
    candidates = measured["candidates_per_record"] * records
    seconds = {}
    for phase in PHASES:
        if phase == "match":
            value = measured["match_ms_per_candidate"] * candidates / 1000
        else:
            value = measured[f"{phase}_ms_per_record"] * records / 1000
        seconds[phase] = value / workers if phase in SPREADABLE else value
    return {
        "records": records,
        "workers": workers,
        "hours": round(sum(seconds.values()) / 3600, 2),
        "phase_hours": {phase: round(value / 3600, 3) for phase, value in seconds.items()},
    }


def growth(runs: list[dict[str, Any]]) -> float | None:
    """The largest over the smallest time per record among the linked runs: 1 is linear."""
    linked = [run for run in runs if run["status"] == "linked"]
    if len(linked) < 2:
        return None
    first, last = min(linked, key=lambda r: r["size"]), max(linked, key=lambda r: r["size"])
    return round(last["rates"]["ms_per_record"] / first["rates"]["ms_per_record"], 3)


def table(runs: list[dict[str, Any]]) -> str:
    """A markdown table: one row a size."""
    lines = [
        "| a side | F1 | s in all | " + " | ".join(PHASES) + " | ms/record | "
        "candidates/record | MATCH ms/candidate | MB sent | peak GiB |",
        "|---" * (len(PHASES) + 8) + "|",
    ]
    for run in runs:
        if run["status"] != "linked":
            lines.append(f"| {run['size']:,} | {run['status']}: {run['message']} |")
            continue
        r = run["rates"]
        phases = " | ".join(f"{run['phase_seconds'][p]:.0f}" for p in PHASES)
        lines.append(
            f"| {run['size']:,} | {run['f1']:.4f} | {run['protocol_seconds']:.0f} | {phases} | "
            f"{r['ms_per_record']:.2f} | {r['candidates_per_record']:.2f} | "
            f"{r['match_ms_per_candidate']:.3f} | {run['bytes_sent'] / 1e6:.0f} | "
            f"{run['peak_rss_gib']:.2f} |"
        )
    return "\n".join(lines)


def _counts(least: int):
    """A parser of comma-separated whole numbers of at least `least`."""

    def parse(text: str) -> list[int]:
        try:
            counts = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"comma-separated numbers, got {text!r}") from None
        if not counts or min(counts) < least:
            raise argparse.ArgumentTypeError(f"numbers of at least {least}, got {text!r}")
        return counts

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="data directory (reused)")
    parser.add_argument("--sizes", type=_counts(100), default=[25_000, 50_000, 100_000])
    parser.add_argument("--project", type=int, default=10_000_000, help="records a side")
    parser.add_argument("--workers", type=_counts(1), default=[1, 8, 32])
    parser.add_argument("--json", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    runs = []
    for size in sorted(args.sizes):
        runs.append(run_size(args.data, size))
        print(json.dumps(runs[-1]), flush=True)
    print(table(runs))
    linked = [run for run in runs if run["status"] == "linked"]
    projected = (
        [projection(max(linked, key=lambda r: r["size"]), args.project, n) for n in args.workers]
        if linked
        else []
    )
    for one in projected:
        print(f"{one['records']:,} a side on {one['workers']} worker(s): {one['hours']} h")
    print(f"time per record, largest over smallest size: {growth(runs)}")
    if args.json:
        write_result(
            args.json,
            {
                "command": " ".join(["python", "benchmarks/scale.py", *argv]),
                "runs": runs,
                "growth": growth(runs),
                "projection": projected,
                "table": table(runs),
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
