"""`pprl coordinate`: drive the daemons through the phases, or resume a run.

Two parties (--alice and --bob, or two --party) make one run. Three or more make a session:
one run for every pair (pprl.party.coordination.sessions)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.summary import print_summary, write_json
from pprl.party.coordination.coordinator import DEFAULT_PHASE_TIMEOUT, Coordinator, Endpoint
from pprl.party.coordination.sessions import Session, pair_run_id
from pprl.party.storage.run_ids import BadRunId, check_run_id
from pprl.party.tls_files import TlsFiles
from pprl.protocol.phases import LAST_PHASE, Phase


def add_parser(sub: argparse._SubParsersAction) -> None:
    coord = sub.add_parser("coordinate", help="drive the daemons through Algorithm 1")
    coord.add_argument("--alice", metavar="HOST:PORT", help="the first party's daemon")
    coord.add_argument("--bob", metavar="HOST:PORT", help="the second party's daemon")
    coord.add_argument(
        "--alice-identity", default="alice", help="its certificate identity (default: alice)"
    )
    coord.add_argument(
        "--bob-identity", default="bob", help="its certificate identity (default: bob)"
    )
    coord.add_argument(
        "--party",
        action="append",
        default=[],
        type=_party,
        metavar="NAME=HOST:PORT[=IDENTITY]",
        help="a party (repeat it; its certificate identity is NAME unless given); three or "
        "more parties link every pair, one run each",
    )
    coord.add_argument(
        "--primary",
        metavar="NAME",
        help="with three or more parties: the one holding the labels, linked last with each "
        "of the others (default: the first party)",
    )
    coord.add_argument("--cert", required=True, metavar="PEM", help="the coordinator's certificate")
    coord.add_argument("--key", required=True, metavar="PEM", help="its private key")
    coord.add_argument(
        "--ca", required=True, metavar="PEM", help="the CA that issued every party's certificate"
    )
    coord.add_argument(
        "--wait",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for the daemons to answer before giving up (default 30)",
    )
    coord.add_argument(
        "--run-id",
        type=run_id_type,
        help="resume this run, or with three or more parties this session (default: the "
        "unfinished one, if any)",
    )
    coord.add_argument(
        "--new",
        action="store_true",
        help="start a new run (refused while a daemon still has another run open)",
    )
    coord.add_argument(
        "--abandon",
        type=run_id_type,
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
    coord.add_argument(
        "--threshold",
        type=float,
        metavar="CUT",
        help="each party keeps the pairs its classifier accepts at or above this (at least the "
        "party's own [matching] threshold): in sealed linkage, the default, a match "
        "probability from 0 to 1; in the other modes a score. With --run-id of a finished run, "
        "cut it again: sealed linkage sends and links the pairs MATCH kept again (no new "
        "encrypted comparison); the other modes run MATCH, REVEAL and LINK again",
    )
    coord.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    coord.set_defaults(handler=run)


def _party(text: str) -> tuple[str, str, str]:
    name, _, rest = text.partition("=")
    address, _, identity = rest.partition("=")
    if not name or not address:
        raise argparse.ArgumentTypeError(f"expected NAME=HOST:PORT[=IDENTITY], got {text!r}")
    return name, address, identity or name


def _parties(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """--alice and --bob first, then every --party, in the order given."""
    parties = [
        (name, address, identity)
        for name, address, identity in (
            ("alice", args.alice, args.alice_identity),
            ("bob", args.bob, args.bob_identity),
        )
        if address
    ]
    parties += args.party
    if len(parties) < 2:
        raise SystemExit(
            "pprl coordinate: error: give two parties or more (--alice and --bob, or --party "
            "NAME=HOST:PORT for each)"
        )
    return parties


def run_id_type(text: str) -> str:
    try:
        return check_run_id(text)
    except BadRunId as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    if args.phase_timeout <= 0:
        raise SystemExit("pprl coordinate: error: --phase-timeout must be positive")
    parties = [Endpoint(*party) for party in _parties(args)]
    if args.primary and len(parties) < 3:
        raise SystemExit("pprl coordinate: error: --primary needs three parties or more")
    tls = TlsFiles(Path(args.cert), Path(args.key), Path(args.ca))
    coordinator = Coordinator(parties, tls, phase_timeout=args.phase_timeout)
    until = Phase[args.until.upper()]
    try:
        session = (
            Session(coordinator, args.primary or parties[0].name) if len(parties) > 2 else None
        )
        coordinator.wait_ready(args.wait)
        if args.abandon:
            run_ids = (
                [pair_run_id(args.abandon, k) for k in range(len(session.pairs))]
                if session
                else [args.abandon]
            )
            for run_id in run_ids:
                for name, what in coordinator.abandon(run_id).items():
                    print(f"run {run_id}: {name}: {what}")
            return 0
        if session and args.threshold is not None:
            raise SystemExit("pprl coordinate: error: --threshold links two parties, not more")
        if session:
            summary = session.run(session_id=args.run_id, new=args.new, until=until)
        else:
            summary = coordinator.run(
                run_id=args.run_id, new=args.new, until=until, threshold=args.threshold
            )
    finally:
        coordinator.close()
    print_summary(summary)
    write_json(args.json, summary)
    return 0
