"""`pprl generate`: the built-in voter-like demo data, one side or both."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    generate = sub.add_parser("generate", help="write the built-in voter-like demo data")
    generate.add_argument("--out", required=True)
    generate.add_argument("--size", type=int, default=2000, help="records a side")
    generate.add_argument("--seed", type=int, default=7)
    generate.add_argument("--side", choices=["alice", "bob", "all"], default="all")
    generate.add_argument("--overlap", type=float, default=1.0, help="share of true matches")
    generate.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pprl.party.local import write_demo_data

    for path in write_demo_data(
        Path(args.out), args.size, args.seed, side=args.side, overlap=args.overlap
    ):
        print(path)
    return 0
