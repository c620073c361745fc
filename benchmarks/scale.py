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
MATCH's per candidate pair, and the candidates and keys per record of the largest size; on N
workers it divides the blinding (the keys times X25519's time, measured here) among them, as
the daemons do today, and, labelled, every spreadable phase, as they would if all were
spread. A size can also be read from a summary already run (--summary SIZE=JSON=LOG).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.result_file import write_result
from pprl.bench import european_registers
from pprl.protocol.sealed.blinding import Blinder

BENCHMARKS = Path(__file__).resolve().parent
SCHEMA = BENCHMARKS / "european" / "schema_names_dob.toml"
PHASES = ("agree", "smash", "train", "exchange", "match", "reveal", "link")
# Phases whose work could all be spread over a party's workers; AGREE, REVEAL and LINK stay
# in the daemon. Today only the blinding is (SMASH's own keys, EXCHANGE's peer keys).
SPREADABLE = ("smash", "train", "exchange", "match")
# SMASH's line: "smashed 400,000 records (...); 3,598,614 blocking keys from 7 recipes".
_KEYS = re.compile(r"^\s+(alice|bob)\s+smashed [\d,]+ records .*?; ([\d,]+) blocking keys", re.M)


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
    return outcome(size, json.loads(summary_path.read_text()), seconds, blocking_keys(done.stdout))


def summarised(text: str) -> tuple[int, Path, Path]:
    """SIZE=JSON=LOG: a size run before, its `pprl demo --json` summary and its output."""
    size, summary, log = text.split("=", 2) if text.count("=") >= 2 else ("", "", "")
    if not size.isdigit():
        raise argparse.ArgumentTypeError(f"SIZE=SUMMARY.json=OUTPUT.log, got {text!r}")
    return int(size), Path(summary), Path(log)


def from_summary(size: int, summary: Path, log: Path) -> dict[str, Any]:
    """A size run before (`pprl demo --json`, its output kept) read as `run_size` reads one."""
    document = json.loads(summary.read_text())
    return outcome(size, document, document["demo_seconds"], blocking_keys(log.read_text()))


def blocking_keys(stdout: str) -> int:
    """The most blocking keys a party blinded, as its SMASH line says (0: none said)."""
    return max((int(count.replace(",", "")) for _, count in _KEYS.findall(stdout)), default=0)


def blinding_seconds(values: int = 20_000) -> float:
    """Seconds to blind one key here (X25519 through cryptography), measured on `values`."""
    keys = [f"key {n}" for n in range(values)]
    began = time.perf_counter()
    Blinder().blind_keys(b"scale benchmark", keys)
    return (time.perf_counter() - began) / values


def outcome(size: int, summary: dict[str, Any], seconds: float, keys: int = 0) -> dict[str, Any]:
    """One run's figures and rates from the demo's summary; `keys`: the blocking keys a
    party blinded (SMASH's line)."""
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
        "blocking_keys": keys,
        "rates": rates(size, slowest, candidates, sent, summary["seconds"])
        | {"keys_per_record": round(keys / size, 4)},
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


def projection(
    run: dict[str, Any], records: int, workers: int, blind: float, every_step: bool = False
) -> dict[str, Any]:
    """`records` a side from one run's rates: each phase per record, MATCH per candidate at
    the run's candidates per record. On `workers` workers the blinding (two X25519 a key a
    party, `blind` seconds each, from SMASH and EXCHANGE) is divided among them, as it runs
    today; with `every_step`, every spreadable phase is, as it would if all were spread."""
    measured = run["rates"]
    candidates = measured["candidates_per_record"] * records
    blinding = measured.get("keys_per_record", 0.0) * records * blind  # a phase's share
    seconds = {}
    for phase in PHASES:
        if phase == "match":
            value = measured["match_ms_per_candidate"] * candidates / 1000
        else:
            value = measured[f"{phase}_ms_per_record"] * records / 1000
        if every_step and phase in SPREADABLE:
            value /= workers
        elif phase in ("smash", "exchange"):
            share = min(blinding, value)
            value = value - share + share / workers
        seconds[phase] = value
    return {
        "records": records,
        "workers": workers,
        "every_step": every_step,
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
    parser.add_argument(
        "--summary",
        type=summarised,
        action="append",
        default=[],
        metavar="SIZE=JSON=LOG",
        help="a size run before: its demo summary and output (for sizes too long to rerun)",
    )
    parser.add_argument("--json", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    runs = []
    for size in sorted(args.sizes):
        runs.append(run_size(args.data, size))
        print(json.dumps(runs[-1]), flush=True)
    runs += [from_summary(*given) for given in args.summary]
    print(table(runs))
    linked = [run for run in runs if run["status"] == "linked"]
    blind = blinding_seconds()
    largest = max(linked, key=lambda r: r["size"]) if linked else None
    projected = [
        projection(largest, args.project, n, blind, every)
        for every in (False, True)
        for n in args.workers
        if largest is not None
    ]
    for one in projected:
        how = "every heavy step spread" if one["every_step"] else "the blinding spread"
        print(f"{one['records']:,} a side on {one['workers']} worker(s), {how}: {one['hours']} h")
    print(f"time per record, largest over smallest size: {growth(runs)}")
    if args.json:
        write_result(
            args.json,
            {
                "command": " ".join(["python", "benchmarks/scale.py", *argv]),
                "runs": runs,
                "growth": growth(runs),
                "blinding_us_per_key": round(blind * 1e6, 1),
                "projection": projected,
                "table": table(runs),
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
