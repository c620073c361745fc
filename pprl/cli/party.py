"""`pprl party serve`: one organisation's daemon, until stopped."""

from __future__ import annotations

import argparse
import logging
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    party = sub.add_parser("party", help="one organisation's daemon")
    party_sub = party.add_subparsers(dest="party_command", required=True)
    serve = party_sub.add_parser("serve", help="serve until stopped")
    serve.add_argument("--config", required=True, help="the party's TOML file")
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from pprl.party.config import load_config
    from pprl.party.server import serve

    config = load_config(args.config)
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {config.identity} %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    serve(config)
    return 0
