"""Three parties end to end over loopback mutual TLS: a session (one run per pair, FedSim's
secondaries first, then the primary with each) on three daemons, each pair's quality against
its truth; and, in the same run, the Alice-Bob pair as a two-party deployment on the same
data, the time a session's pair is compared with.

    python benchmarks/three_parties.py --size 5000 --json three.json

By default the daemons run with their own privacy gate (10% re-identification, noise chosen at
AGREE), as the compose file's three-party profile does; --max-reidentification 1 measures
without noise.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from lab.result_file import write_result
from pprl.party.config import DEFAULT_REIDENTIFICATION_LIMIT
from pprl.party.coordination.sessions import Session
from pprl.party.local import (
    Deployment,
    Privacy,
    evaluate,
    prepare,
    read_truth,
    running,
    write_demo_data,
)

NAMES = ("alice", "bob", "carol")


def pair_truth(data: Path, pair: tuple[str, str]) -> set[tuple[str, str]]:
    if pair == ("alice", "bob"):
        return read_truth(data / "truth.csv")
    return read_truth(data / f"truth_{pair[0]}_{pair[1]}.csv", pair)


def _deployed(workdir: Path, data: Path, names: tuple[str, ...], limit: float) -> Deployment:
    privacy = Privacy(max_reidentification=limit)
    records = {n: data / f"{n}.csv" for n in names}
    return prepare(workdir, records, data / "reference.csv", privacy=privacy, built_in=True)


def _pair_row(deployment: Deployment, data: Path, run: dict[str, Any]) -> dict[str, Any]:
    pair = (run["pair"][0], run["pair"][1])
    quality = evaluate(deployment, run["run_id"], pair_truth(data, pair), pair)["linkage"]
    return {
        "pair": list(pair),
        "seconds": run["seconds"],
        "precision": quality["precision"],
        "recall": quality["recall"],
        "f1": quality["f1"],
        "bytes_sent": sum(run["bytes_sent"].values()),
        "noise_sigma": max(p["privacy"]["noise_sigma"] for p in run["parties"].values()),
        "reidentified": max(p["privacy"]["reidentified"] for p in run["parties"].values()),
        "peak_rss_gib": max(p["peak_rss_bytes"] for p in run["parties"].values()) / 2**30,
    }


def session(workdir: Path, data: Path, limit: float) -> dict[str, Any]:
    deployment = _deployed(workdir / "three", data, NAMES, limit)
    with running(deployment) as coordinator:
        summary = Session(coordinator, "alice").run(new=True)
    return {
        "seconds": summary["seconds"],
        "pairs": [_pair_row(deployment, data, run) for run in summary["pairs"]],
    }


def two_party(workdir: Path, data: Path, limit: float) -> dict[str, Any]:
    """Alice and Bob alone, as a two-party deployment: the baseline of a session's pair."""
    deployment = _deployed(workdir / "two", data, ("alice", "bob"), limit)
    with running(deployment) as coordinator:
        summary = coordinator.run(new=True)
    return _pair_row(deployment, data, {"pair": ["alice", "bob"], **summary})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="records of each party")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--overlap", type=float, default=0.9)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument(
        "--max-reidentification",
        type=float,
        default=DEFAULT_REIDENTIFICATION_LIMIT,
        help="the daemons' gate (default theirs, with noise chosen at AGREE; 1: no noise)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pprl-three-") as tmp:
        workdir = Path(tmp)
        data = workdir / "data"
        write_demo_data(
            data,
            args.size,
            args.seed,
            overlap=args.overlap,
            reference_rows=args.reference_rows,
            parties=3,
        )
        began = time.perf_counter()
        three = session(workdir, data, args.max_reidentification)
        baseline = two_party(workdir, data, args.max_reidentification)
        wall = time.perf_counter() - began
    result = {
        "command": "python benchmarks/three_parties.py "
        f"--size {args.size} --seed {args.seed} --overlap {args.overlap} "
        f"--reference-rows {args.reference_rows} --max-reidentification "
        f"{args.max_reidentification}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "session": three,
        "two_party_alice_bob": baseline,
        "wall_seconds": round(wall, 1),
    }
    print(f"{'pair':<14} {'s':>7} {'P':>7} {'R':>7} {'F1':>7} {'MB':>7} {'sigma':>6}")
    rows = [*three["pairs"], {**baseline, "pair": ["alice", "bob (2-party)"]}]
    for row in rows:
        print(
            f"{'-'.join(row['pair']):<14} {row['seconds']:7.1f} {row['precision']:7.4f} "
            f"{row['recall']:7.4f} {row['f1']:7.4f} {row['bytes_sent'] / 1e6:7.1f} "
            f"{row['noise_sigma']:6.2f}"
        )
    print(f"session of {len(three['pairs'])} pairs: {three['seconds']:.1f} s")
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
