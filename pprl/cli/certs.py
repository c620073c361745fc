"""`pprl certs`: a development CA and a certificate per identity."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    certs = sub.add_parser("certs", help="make a development CA and a certificate per identity")
    certs.add_argument(
        "--out", default="certs", help="directory for the PEM files (default: certs)"
    )
    certs.add_argument(
        "--days",
        type=int,
        default=365,
        help="how long the certificates are valid, in days (default: 365; a leaf never "
        "outlives the CA it was issued by)",
    )
    certs.add_argument("names", nargs="+", help="identities, e.g. alice bob coordinator")
    certs.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pprl.party.credentials import certs  # lazy: cryptography, only when certs are made

    written = certs.make_development_pki(Path(args.out), args.names, days=args.days)
    for name, (cert, key) in written.items():
        print(f"{name}: {cert} {key}")
    return 0
