"""`pprl coordinate`: drive both daemons through the phases, or resume a run."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.summary import print_summary, write_json
from pprl.party.config import TlsFiles
from pprl.party.coordinator import DEFAULT_PHASE_TIMEOUT
from pprl.party.run_ids import BadRunId, check_run_id
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
    coord.add_argument(
        "--run-id", type=_run_id, help="resume this run (default: the unfinished one, if any)"
    )
    coord.add_argument(
        "--new",
        action="store_true",
        help="start a new run (refused while a daemon still has another run open)",
    )
    coord.add_argument(
        "--abandon",
        type=_run_id,
        metavar="RUN_ID",
        help="abandon this run on both daemons, so a new one may begin, and stop",
    )
    coord.add_argument(
        "--phase-timeout",
        type=float,
        default=DEFAULT_PHASE_TIMEOUT,
        metavar="SECONDS",
        help=f"give a phase up after this long (default {DEFAULT_PHASE_TIMEOUT:g})",
    )
    coord.add_argument(
        "--until",
        choices=[p.name.lower() for p in Phase if p],
        default=LAST_PHASE.name.lower(),
        help="stop after this phase; a later call resumes the run",
    )
    coord.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    coord.set_defaults(handler=run)


def _run_id(text: str) -> str:
    try:
        return check_run_id(text)
    except BadRunId as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    from pprl.party.coordinator import Coordinator, Endpoint

    if args.phase_timeout <= 0:
        raise SystemExit("pprl coordinate: error: --phase-timeout must be positive")
    tls = TlsFiles(Path(args.cert), Path(args.key), Path(args.ca))
    coordinator = Coordinator(
        [
            Endpoint("alice", args.alice, args.alice_identity),
            Endpoint("bob", args.bob, args.bob_identity),
        ],
        tls,
        phase_timeout=args.phase_timeout,
    )
    try:
        coordinator.wait_ready(args.wait)
        if args.abandon:
            for name, what in coordinator.abandon(args.abandon).items():
                print(f"run {args.abandon}: {name}: {what}")
            return 0
        summary = coordinator.run(run_id=args.run_id, new=args.new, until=Phase[args.until.upper()])
    finally:
        coordinator.close()
    print_summary(summary)
    write_json(args.json, summary)
    return 0
