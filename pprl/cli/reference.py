"""`pprl reference`: build a reference set for a schema from a spec and a seed both sides share.

Both operators run the same command; it prints the SHA-256 the agreement digest covers, so
they can compare the two sets by eye (over the phone, say) before a run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.files.atomic import write_text_atomic
from pprl.files.reference import load_reference
from pprl.protocol.data.reference_builder import (
    DEFAULT_YEARS,
    GENERATORS,
    build_reference,
    parse_column,
    parse_years,
    reference_csv,
)
from pprl.protocol.errors import InputError
from pprl.protocol.method import reference_sha256

EXAMPLE = """\
generators (NAME=GENERATOR[:PARAMETER]):
{generators}

example:
  pprl reference --out ref.csv --rows 2000 --seed 7 \\
    --column first=first-name --column last=surname --column dob=date \\
    --column postcode=number:4 --column ssn=number:7-9 --column street=street \\
    --column suburb=suburb --column sex=category:F,M

The same command (columns, rows, seed, years) gives the same file, byte for byte, anywhere;
adding or removing a column leaves the other columns' values as they were.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    generators = "\n".join(
        f"  {name:<12} {generator.kind:<12} {generator.help}"
        for name, generator in GENERATORS.items()
    )
    reference = sub.add_parser(
        "reference",
        help="build a reference set for a schema from census names and seeded values",
        epilog=EXAMPLE.format(generators=generators),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reference.add_argument("--out", required=True, type=Path, help="the CSV file to write")
    reference.add_argument("--rows", type=int, default=2000, help="rows R (default 2000)")
    reference.add_argument(
        "--seed", type=int, required=True, help="agreed with the peer; the set is public"
    )
    reference.add_argument(
        "--years",
        default=f"{DEFAULT_YEARS[0]}-{DEFAULT_YEARS[1]}",
        help="year range of date columns without their own (default %(default)s)",
    )
    reference.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="NAME=GENERATOR",
        required=True,
        help="one column; repeat for each, in the order the file should have",
    )
    reference.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    years = parse_years(args.years)
    specs = [parse_column(text, years) for text in args.column]
    columns = build_reference(specs, args.rows, args.seed)
    out: Path = args.out
    if out.is_dir():
        raise InputError("is a directory; --out needs a file path", path=str(out))
    try:
        write_text_atomic(out, reference_csv(columns))
    except OSError as error:
        reason = error.strerror or str(error)
        raise InputError(f"cannot write the reference set: {reason}", path=str(out)) from None
    reference = load_reference(out)
    print(out)
    print(f"rows: {len(reference)}")
    print(f"columns: {' '.join(spec.describe() for spec in specs)}")
    print(f"sha256: {reference_sha256(reference)}")
    return 0
