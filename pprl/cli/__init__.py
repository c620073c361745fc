"""The `pprl` command; each subcommand lives in a module of its own."""

from __future__ import annotations

import argparse
import importlib
import sys

from pprl import __version__
from pprl.protocol.errors import PprlError

# Each command and its module here, which adds the command's parser.
COMMANDS = {
    "certs": "certs",
    "generate": "generate",
    "reference": "reference",
    "dictionary": "dictionary",
    "assess-reference": "assess",
    "party": "party",
    "coordinate": "coordinate",
    "demo": "demo",
    "report": "report",
    "audit": "audit",
    "bench": "bench",
}

EXIT_CODES = """exit codes:
  0    done
  1    the work could not be done (a phase failed, a peer refused, a gate or check failed)
  2    bad input or usage: a file, row, field, setting or argument, named in the message
  130  interrupted (Ctrl-C); a run resumes where it stopped"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or with `only` that command's alone (and only its module
    imported)."""
    parser = argparse.ArgumentParser(
        prog="pprl",
        description="Privacy-preserving record linkage between two parties by split learning.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pprl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"pprl.cli.{COMMANDS[name]}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; only a PprlError becomes a message, so a bug keeps its traceback."""
    words = list(sys.argv[1:] if argv is None else argv)
    # A command named first imports only its own module: importing them all (the gate's and
    # the benchmarks' libraries) took half a second of every coordinator's start.
    only = words[0] if words and words[0] in COMMANDS else None
    args = build_parser(only).parse_args(words)
    args.argv = words
    try:
        return args.handler(args)
    except PprlError as error:
        print(f"pprl: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
