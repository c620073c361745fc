"""`pprl coordinate`: drive both daemons through the phases, or resume a run."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.summary import print_summary, write_json
from pprl.party.config import TlsFiles
from pprl.protocol.phases import LAST_PHASE, Phase


def add_parser(sub: argparse._SubParsersAction) -> None:
    coord = sub.add_parser("coordinate", help="drive both daemons through Algorithm 1")
    coord.add_argument("--alice", required=True, metavar="HOST:PORT")
    coord.add_argument("--bob", required=True, metavar="HOST:PORT")
    coord.add_argument("--alice-identity", default="alice")
    coord.add_argument("--bob-identity", default="bob")
    coord.add_argument("--cert", required=True)
    coord.add_argument("--key", required=True)
    coord.add_argument("--ca", required=True)
    coord.add_argument("--wait", type=float, default=30.0, help="seconds to wait for daemons")
    coord.add_argument("--run-id", help="resume this run (default: the unfinished one, if any)")
    coord.add_argument("--new", action="store_true", help="start a new run even if one is open")
    coord.add_argument(
        "--until",
        choices=[p.name.lower() for p in Phase if p],
        default=LAST_PHASE.name.lower(),
        help="stop after this phase; a later call resumes the run",
    )
    coord.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    coord.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pprl.party.coordinator import Coordinator, Endpoint

    tls = TlsFiles(Path(args.cert), Path(args.key), Path(args.ca))
    coordinator = Coordinator(
        [
            Endpoint("alice", args.alice, args.alice_identity),
            Endpoint("bob", args.bob, args.bob_identity),
        ],
        tls,
    )
    try:
        coordinator.wait_ready(args.wait)
        summary = coordinator.run(run_id=args.run_id, new=args.new, until=Phase[args.until.upper()])
    finally:
        coordinator.close()
    print_summary(summary)
    write_json(args.json, summary)
    return 0
