"""`pprl report`: write a run's report again, from a party's state directory, optionally
measured against a truth file.

LINK writes the report beside the result; this rebuilds it (after installing the plots
extra, say) and adds the precision and recall against the truth, which the daemon never has.
It reads the state directory without taking it over, so its daemon may keep running.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.coordinate import run_id_type


def add_parser(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser(
        "report",
        help="write a run's report (scores, expected and measured precision and recall, privacy)",
    )
    report.add_argument(
        "run_id",
        nargs="?",
        type=run_id_type,
        metavar="RUN_ID",
        help="the run (default: the latest finished one)",
    )
    report.add_argument(
        "--state-dir",
        required=True,
        metavar="DIR",
        help="the party's state directory (its config's state_dir)",
    )
    report.add_argument(
        "--truth",
        metavar="CSV",
        help="the true pairs, with the columns <you>_id and <peer>_id: adds precision and "
        "recall measured against them",
    )
    report.add_argument(
        "--out",
        metavar="DIR",
        help="write the report here (default: beside the result, in the run's directory)",
    )
    report.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the run report's readers and figures load only when a report is written
    from pprl.party.reporting.facts import read_facts, read_truth
    from pprl.party.reporting.render import write_report

    facts = read_facts(Path(args.state_dir), args.run_id)
    truth = read_truth(Path(args.truth), facts) if args.truth else None
    out = Path(args.out) if args.out else facts.directory
    out.mkdir(parents=True, exist_ok=True)
    for path in write_report(facts, out, truth):
        print(f"wrote {path}")
    return 0
