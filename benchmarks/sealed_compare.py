"""Sealed linkage beside the other ways of linking the same two files, in one run: two
daemons over loopback mutual TLS for each of the project's releases, and the anonlink stack
(which needs a linkage unit) at its best threshold. Per row: quality against the truth, wall
time, bytes each party sent, and what the row's own measure says a peer learns.

- sealed: `[method] encoding = "sealed"`, the schema's recipes or the default ones; the
  leakage figure is the list-of-people attack (`benchmarks/sealed_bucket_attack.py`), run
  here on the same files.
- reference release at the default gate: the daemons' defaults (10% limit, automatic noise),
  but with `min_expected_f1 = 0` (its linkage measured whatever TRAIN estimates);
  the leakage figure is its gate's, on the attacked records.
- Bloom filters, gate off (the default gate refuses them): one shared key; the gate's figure.
- anonlink: CLKs, Dice, greedy one-to-one at the best threshold; not private from the
  linkage unit, which sees every CLK.

    python benchmarks/sealed_compare.py --records-a records_a.csv --records-b records_b.csv \
        --truth truth.csv --reference ref_all.csv --schema benchmarks/febrl4/schema_all.toml \
        --json docs/research/results/sealed_compare_febrl4_all.json
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lab.in_process import run_command, schema_error_model, schema_kernel_features
from lab.result_file import write_result
from pprl.bench.grid import machine
from pprl.bench.peer import run_peer
from pprl.party.local import (
    Deployment,
    Privacy,
    evaluate,
    load_schema,
    prepare,
    read_truth,
    running,
)
from pprl.protocol.sealed import session
from pprl.protocol.sealed.joins import default_join, join_named

NAMES = ("alice", "bob")
SYSTEMS = ("sealed", "reference", "bloom", "anonlink")


def with_bloom(deployment: Deployment) -> None:
    """encoding = "bloom" in both configurations, with one shared key file."""
    path = deployment.workdir / "bloom.key"
    path.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
    for party in deployment.parties.values():
        text = party.config.read_text(encoding="utf-8")
        text = text.replace("[method]\n", '[method]\nencoding = "bloom"\n', 1)
        text = text.replace("[privacy]\n", f'[privacy]\nbloom_key = "{path}"\n', 1)
        party.config.write_text(text, encoding="utf-8")


def linked(
    workdir: Path,
    args: argparse.Namespace,
    schema: dict[str, dict[str, Any]],
    privacy: Privacy,
    bloom: bool = False,
) -> dict[str, Any]:
    records = {"alice": args.records_a, "bob": args.records_b}
    deployment = prepare(workdir, records, args.reference, privacy=privacy, schema=schema)
    if bloom:
        with_bloom(deployment)
    began = time.perf_counter()
    with running(deployment) as coordinator:
        summary = coordinator.run(new=True)
    seconds = time.perf_counter() - began
    quality = evaluate(deployment, summary["run_id"], read_truth(args.truth))["linkage"]
    return {
        "precision": quality["precision"],
        "recall": quality["recall"],
        "f1": quality["f1"],
        "seconds": seconds,
        "bytes_sent": summary["bytes_sent"],
        "gate_reidentified": {
            n: p["privacy"]["reidentified"] for n, p in summary["parties"].items()
        },
    }


def bucket_attack(
    args: argparse.Namespace, sealed: dict[str, Any], kinds: dict[str, str], out: Path
) -> dict[str, Any]:
    """The list-of-people attack on what sealed linkage hands a party, on the same files: the
    keys, join and model the daemons ran (`sealed`: their [method] table, the kinds' defaults
    for what it leaves out)."""
    script = Path(__file__).with_name("sealed_bucket_attack.py")
    command = [sys.executable, str(script), "--records-a", str(args.records_a)]
    command += ["--records-b", str(args.records_b), "--truth", str(args.truth)]
    command += ["--reference", str(args.reference), "--schema", str(args.schema)]
    command += ["--recipes", ",".join(sealed["sealed_keys"]), "--json", str(out)]
    if join_named(sealed.get("sealed_join", default_join(kinds))).hidden:
        command.append("--hidden-join")
    command += ["--kernel-features", str(schema_kernel_features(sealed, kinds))]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("records-a", "records-b", "truth", "reference", "schema"):
        parser.add_argument(f"--{name}", type=Path, required=True)
    parser.add_argument("--recipes", default="", help="sealed_keys (default: the schema's)")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help="which to run, comma-separated (at 50,000 a side: sealed,reference)",
    )
    parser.add_argument(
        "--min-expected-f1",
        type=float,
        default=None,
        help="sealed linkage's [privacy] min_expected_f1 (default: the daemon's)",
    )
    parser.add_argument(
        "--no-attack",
        action="store_true",
        help="skip the list-of-people attack on sealed linkage (it is slow at 50,000 a side)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    systems = set(args.systems.split(","))
    if not systems <= set(SYSTEMS):
        parser.error(f"--systems takes some of {', '.join(SYSTEMS)}")
    schema = load_schema(args.schema)
    records = schema.get("records", {})
    attributes = records.get("attributes", ["first", "middle", "last"])
    kinds = {a: records.get("kinds", {}).get(a, "name") for a in attributes}
    method = schema.get("method", {})
    default = session.default_recipes(kinds, schema_error_model(method))
    recipes = args.recipes or ",".join(method.get("sealed_keys", [])) or default
    rows: list[dict[str, Any]] = []

    def show(row: dict[str, Any]) -> None:
        rows.append(row)
        sent = row.get("bytes_sent", {}).get("alice", 0) / 1e6
        print(
            f"{row['system']:<44} P {row['precision']:.4f} R {row['recall']:.4f} "
            f"F1 {row['f1']:.4f}  {row['seconds']:7.1f} s  {sent:8.1f} MB  {row['leakage']}",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="pprl-compare-") as tmp:
        base = Path(tmp)
        sealed_schema = {**schema, "method": {**schema.get("method", {}), "encoding": "sealed"}}
        sealed_schema["method"]["sealed_keys"] = recipes.split(",")
        if "sealed" in systems:
            # At its default minimum expected F1 unless told (names alone stop at TRAIN).
            privacy = Privacy(min_expected_f1=args.min_expected_f1)
            row = linked(base / "sealed", args, sealed_schema, privacy)
            row |= {"system": "sealed linkage", "recipes": recipes}
            row["leakage"] = "list-of-people attack not run (--no-attack)"
            if not args.no_attack:
                attack = bucket_attack(args, sealed_schema["method"], kinds, base / "attack.json")
                alone = attack["without_a_partner"]
                row["attack"] = attack
                row["leakage"] = (
                    f"list-of-people attack: {alone['reidentified_keys_and_buckets']:.1%} of "
                    f"people without a partner ("
                    f"{alone['reidentified_keys_buckets_and_peer_links']:.1%} with REVEAL's links)"
                )
            show(row)

        if "reference" in systems:
            # No minimum expected F1: its linkage is measured whatever TRAIN estimates (on
            # FEBRL4's ten fields 0.87-0.90, where the minimum was 0.9).
            gate = Privacy(
                noise_sigma="auto",
                max_reidentification=0.1,
                min_expected_f1=0.0,
                audit_records=200,
                encoding="reference",  # named: sealed is the daemons' default
            )
            row = linked(base / "reference", args, schema, gate)
            rate = max(row["gate_reidentified"].values())
            row |= {"system": "reference release, default 10% gate, min_expected_f1 0"}
            row["leakage"] = f"its gate: {rate:.1%} of attacked records re-identified"
            show(row)

        if "bloom" in systems:
            row = linked(base / "bloom", args, schema, Privacy(), bloom=True)
            rate = max(row["gate_reidentified"].values())
            row |= {"system": "Bloom filters, gate off"}
            row["leakage"] = f"its gate: {rate:.1%} of attacked records re-identified"
            show(row)

    if "anonlink" not in systems:
        if args.json:
            document = {"command": run_command(args), "machine": machine(), "rows": rows}
            write_result(args.json, document)
        return
    began = time.perf_counter()
    peer = run_peer(args.records_a, args.records_b, read_truth(args.truth), attributes)
    best = peer.best
    show(
        {
            "system": "anonlink stack (needs a linkage unit)",
            "precision": best.quality.precision,
            "recall": best.quality.recall,
            "f1": best.quality.f1,
            "seconds": time.perf_counter() - began,
            "threshold": best.threshold,
            "leakage": "the linkage unit sees every CLK (not measured here)",
        }
    )
    if args.json:
        document = {"command": run_command(args), "machine": machine(), "rows": rows}
        write_result(args.json, document)


if __name__ == "__main__":
    main()
