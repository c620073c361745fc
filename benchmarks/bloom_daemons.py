"""The Bloom-filter release against the reference-set release end to end: two daemons and the
coordinator over loopback mutual TLS on the same generated records, one deployment per
release, sizes in turn. Both without noise and with the gate only measuring (the Bloom release
has no noise yet), so the two differ only in what is released and how pairs are scored.

    python benchmarks/bloom_daemons.py --sizes 5000 20000 \\
        --json docs/research/results/bloom_daemons.json
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from lab.result_file import write_result
from pprl.bench.grid import machine
from pprl.party.local import (
    Deployment,
    Privacy,
    evaluate,
    prepare,
    read_truth,
    running,
    write_demo_data,
)

NAMES = ("alice", "bob")


def use_bloom(deployment: Deployment, key: str) -> None:
    """encoding = "bloom" in both configurations, with one shared key file."""
    path = deployment.workdir / "bloom.key"
    path.write_text(key + "\n", encoding="ascii")
    for party in deployment.parties.values():
        text = party.config.read_text(encoding="utf-8")
        text = text.replace("[method]\n", '[method]\nencoding = "bloom"\n', 1)
        text = text.replace("[privacy]\n", f'[privacy]\nbloom_key = "{path}"\n', 1)
        party.config.write_text(text, encoding="utf-8")


def run(workdir: Path, data: Path, release: str) -> dict[str, Any]:
    records = {n: data / f"{n}.csv" for n in NAMES}
    privacy = Privacy(noise_sigma=0.0, max_reidentification=1.0)
    deployment = prepare(workdir, records, data / "reference.csv", privacy=privacy, built_in=True)
    if release == "bloom":
        use_bloom(deployment, secrets.token_hex(32))
    with running(deployment) as coordinator:
        summary = coordinator.run(new=True)
    quality = evaluate(deployment, summary["run_id"], read_truth(data / "truth.csv"))["linkage"]
    return {
        "seconds": summary["seconds"],
        "phases": summary["phases"],
        "f1": quality["f1"],
        "precision": quality["precision"],
        "recall": quality["recall"],
        "bytes_sent": summary["bytes_sent"],
        "reidentified": {n: p["privacy"]["reidentified"] for n, p in summary["parties"].items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="pprl-bloom-") as tmp:
            data = Path(tmp) / "data"
            write_demo_data(data, size, args.seed, reference_rows=args.reference_rows)
            for release in ("reference", "bloom"):
                began = time.perf_counter()
                row = {"size": size, "release": release, **run(Path(tmp) / release, data, release)}
                print(
                    f"n={size} {release:<9} {row['seconds']:7.1f} s  F1 {row['f1']:.4f}  "
                    f"match {row['phases'].get('match', 0):.1f} s  sent "
                    f"{row['bytes_sent']['alice'] / 1e6:.1f} MB  re-identified "
                    f"{row['reidentified']['alice']:.1%} ({time.perf_counter() - began:.0f} s)",
                    flush=True,
                )
                rows.append(row)
    if args.json:
        document = {
            "command": "python benchmarks/bloom_daemons.py --sizes "
            + " ".join(map(str, args.sizes))
            + f" --seed {args.seed} --reference-rows {args.reference_rows}",
            "machine": machine(),
            "rows": rows,
        }
        write_result(args.json, document)


if __name__ == "__main__":
    main()
