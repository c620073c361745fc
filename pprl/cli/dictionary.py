"""`pprl dictionary`: an attacker's name list for records from other countries than the
United States, whose census lists are the privacy gate's default: faker's first names and
surnames of the given locales, each with how often faker draws it (the form `[privacy]
dictionary` reads as two lists with frequencies; docs/research/privacy.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.bench.european_registers import LOCALES, name_lists, names_csv
from pprl.files.atomic import write_text_atomic
from pprl.protocol.errors import InputError, SettingError

EXAMPLE = """\
example:
  pprl dictionary --out names.csv --locales de_DE,fr_FR,it_IT,es_ES,tr_TR,pl_PL,nl_NL

Needs the optional extra: pip install 'pprl[registers]' (faker). A locale's lists are what
faker holds for it, not a census: a peer may hold better ones, so read the gate's figure as
this list's attacker's.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    dictionary = sub.add_parser(
        "dictionary",
        help="write an attacker's first names and surnames with their frequencies for "
        "faker's locales, for [privacy] dictionary",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dictionary.add_argument("--out", required=True, type=Path, help="the CSV file to write")
    dictionary.add_argument(
        "--locales",
        default=",".join(LOCALES),
        help="faker locales, separated by commas (default %(default)s)",
    )
    dictionary.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    locales = tuple(part.strip() for part in args.locales.split(",") if part.strip())
    try:
        from faker.config import AVAILABLE_LOCALES  # lazy: faker is an optional extra
    except ImportError:
        raise SettingError(
            "--locales needs the optional extra: pip install 'pprl[registers]' (faker)",
            setting="locales",
        ) from None
    unknown = [locale for locale in locales if locale not in AVAILABLE_LOCALES]
    if not locales or unknown:
        raise SettingError(
            f"--locales: unknown locale(s) {', '.join(unknown) or '(none given)'}; faker "
            "knows e.g. de_DE, fr_FR, pl_PL, en_GB",
            setting="locales",
        )
    out: Path = args.out
    if out.is_dir():
        raise InputError("is a directory; --out needs a file path", path=str(out))
    lists = name_lists(locales)
    try:
        write_text_atomic(out, names_csv(lists))
    except OSError as error:
        reason = error.strerror or str(error)
        raise InputError(f"cannot write the dictionary: {reason}", path=str(out)) from None
    print(out)
    print(f"first names: {len(lists['first'])}, surnames: {len(lists['surname'])}")
    return 0
