"""How likely the scorer's checks miss an evaluator that replaces its results, in each
direction of a finished run of two daemons (`pprl demo ... --workdir W --json J`): the check
units, and for reading N = 8192 bits of the scorer's actions the units an evaluator must
replace, largest first, and the chance that or any such slots go unnoticed
(lab.check_power).

    python benchmarks/sealed_check_power.py --workdir W --run-json J \\
        --json docs/research/results/sealed_check_power_febrl4_names.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from lab import check_power
from lab.in_process import run_command
from lab.result_file import write_result
from pprl.party.storage.artifacts import OWN_ENTRIES, OWN_KEYS_TWICE, PEER_JOIN, PEER_KEYS_TWICE
from pprl.protocol.sealed import graph_checks, hidden_join, session


def _run(workdir: Path, party: str, run_id: str) -> Path:
    (found,) = (workdir / "state" / party).glob(f"**/runs/{run_id}")
    return found


def _keys(path: Path) -> list:
    with np.load(path) as data:
        return session.grouped(data["counts"], data["values"].tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="the demo's --workdir")
    parser.add_argument("--run-json", type=Path, required=True, help="the demo's --json")
    parser.add_argument("--signs", type=int, nargs="+", default=[check_power.RING, 2048])
    parser.add_argument(
        "--hidden-share",
        type=float,
        nargs=2,
        default=[hidden_join.CHECK_SHARE, hidden_join.CHECK_MOST_SHARE],
        help="the hidden join's check share and its cap, to read a run made with others",
    )
    parser.add_argument("--seed", type=int, default=1, help="the graph's draw of check rows")
    parser.add_argument(
        "--alike",
        action="store_true",
        help="the hidden join's checks as if drawn with equal chances, as first built",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    run_id = json.loads(args.run_json.read_text())["run_id"]
    rows = []
    for scorer, evaluator in (("alice", "bob"), ("bob", "alice")):
        own, peer = _run(args.workdir, scorer, run_id), _run(args.workdir, evaluator, run_id)
        if (peer / PEER_JOIN).exists():
            with np.load(own / OWN_ENTRIES) as entries, np.load(peer / PEER_JOIN) as join:
                counts = np.diff(join["starts"])
                rows_ = entries["rows"]
                draws = hidden_join.CheckDraws(entries["check_uniforms"], entries["check_buckets"])
            made = hidden_join.checks(rows_, counts, draws, *args.hidden_share)
            join_kind = "hidden"
            powers = [
                check_power.hidden(rows_, counts, made, signs, args.alike) for signs in args.signs
            ]
        else:
            pairs = session.candidates(_keys(own / OWN_KEYS_TWICE), _keys(own / PEER_KEYS_TWICE))
            # The graph's checks are drawn in MATCH and not kept: one draw as the scorer's.
            made_rows = graph_checks.drawn(
                pairs, check_power.BUCKETS, np.random.default_rng(args.seed)
            ).rows
            join_kind = "graph"
            powers = [check_power.graph(pairs, made_rows, signs) for signs in args.signs]
        for power in powers:
            rows.append({"scorer": scorer, "join": join_kind, **dataclasses.asdict(power)})
            print(
                f"{scorer} scoring ({join_kind}): {power.checks:,} check units of "
                f"{power.units:,} ({power.check_slots:,} check slots of {power.slots:,}); "
                f"{power.signs:,} bits: the {power.replaced:,} largest units replaced go "
                f"unnoticed with a chance of {power.unnoticed_largest_first:.1e}"
                + (
                    ""
                    if power.unnoticed_any_slots is None
                    else f", any such slots {power.unnoticed_any_slots:.1e}"
                ),
                flush=True,
            )
    if args.json:
        write_result(args.json, {"command": run_command(args), "directions": rows})


if __name__ == "__main__":
    main()
