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
    check = party_sub.add_parser(
        "check",
        help="check configuration, certificates, state directory, records and reference set, "
        "as start-up and AGREE would, without serving",
    )
    check.add_argument("--config", required=True, help="the party's TOML file")
    check.set_defaults(handler=run_check)


def run_serve(args: argparse.Namespace) -> int:
    from pprl.party.config import load_config
    from pprl.party.service.server import serve

    config = load_config(args.config)
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {config.identity} %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    serve(config)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from pprl.party.config import load_config
    from pprl.party.phases.agree import data_report
    from pprl.party.phases.context import resolve_agreement
    from pprl.party.phases.words import data_words
    from pprl.party.service.startup import check_startup
    from pprl.party.storage.inputs import load_inputs

    config = load_config(args.config)
    check_startup(config)
    inputs = load_inputs(config)
    agreement = resolve_agreement(config, inputs)
    print(
        f"{config.identity}: configuration, certificate and state directory are fine; "
        f"{len(inputs.records):,} records, {len(inputs.reference):,} reference rows, "
        f"{len(agreement.mapping)} mapping entries"
    )
    print(f"{config.identity}: {data_words(data_report(inputs, agreement))}")
    return 0
