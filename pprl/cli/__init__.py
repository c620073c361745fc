"""The `pprl` command; each subcommand lives in a module of its own."""

from __future__ import annotations

import argparse
import sys

from pprl import __version__
from pprl.cli import (
    assess,
    audit,
    bench,
    certs,
    coordinate,
    demo,
    dictionary,
    generate,
    party,
    reference,
    report,
)
from pprl.protocol.errors import PprlError

COMMANDS = (
    certs,
    generate,
    reference,
    dictionary,
    assess,
    party,
    coordinate,
    demo,
    report,
    audit,
    bench,
)

EXIT_CODES = """exit codes:
  0    done
  1    the work could not be done (a phase failed, a peer refused, a gate or check failed)
  2    bad input or usage: a file, row, field, setting or argument, named in the message
  130  interrupted (Ctrl-C); a run resumes where it stopped"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pprl",
        description="Privacy-preserving record linkage between two parties by split learning.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pprl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; only a PprlError becomes a message, so a bug keeps its traceback."""
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except PprlError as error:
        print(f"pprl: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
