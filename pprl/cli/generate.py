"""`pprl generate`: the built-in voter-like demo data, one side or both."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.bench import errors_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    generate = sub.add_parser("generate", help="write the built-in voter-like demo data")
    generate.add_argument(
        "--out", required=True, metavar="DIR", help="directory for the CSV files (made if absent)"
    )
    generate.add_argument("--size", type=int, default=2000, help="records a side")
    generate.add_argument(
        "--seed", type=int, default=7, help="the draw: the same seed writes the same files"
    )
    generate.add_argument(
        "--side",
        choices=["alice", "bob", "carol", "all"],
        default="all",
        help="write one party's records only (default: every party's, the truth and the "
        "reference set)",
    )
    generate.add_argument(
        "--parties", type=int, choices=[2, 3], default=2, help="3 adds Carol's register"
    )
    generate.add_argument("--overlap", type=float, default=1.0, help="share of true matches")
    generate.add_argument(
        "--errors",
        type=errors_argument,
        default=1,
        help="Bob's copies: N or LOW-HIGH single edits per row, or an error model "
        "(registers, or one phenomenon alone: nickname, middle, swap, ...; "
        "docs/research/error-model.md)",
    )
    generate.add_argument(
        "--namesakes",
        type=float,
        default=0.0,
        help="share of Bob's people Alice lacks who share first and last name with one of hers",
    )
    generate.add_argument(
        "--reference-rows", type=int, default=1000, help="rows of the built-in reference set"
    )
    generate.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pprl.party.local import write_demo_data  # lazy: the deployment, only when run

    model = args.errors if isinstance(args.errors, str) else None
    for path in write_demo_data(
        Path(args.out),
        args.size,
        args.seed,
        side=args.side,
        overlap=args.overlap,
        errors_per_row=1 if model else args.errors,
        error_model=model,
        namesakes=args.namesakes,
        reference_rows=args.reference_rows,
        parties=args.parties,
    ):
        print(path)
    return 0
