"""The `pprl` command: certificates, demo data, a party daemon, the coordinator, the demo."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from pprl import __version__
from pprl.party.config import TlsFiles
from pprl.protocol.errors import InputError, PprlError
from pprl.protocol.features import FEATURES
from pprl.protocol.phases import LAST_PHASE, Phase
from pprl.summary import print_summary


def _certs(args: argparse.Namespace) -> int:
    from pprl.party.certs import make_development_pki

    written = make_development_pki(Path(args.out), args.names)
    for name, (cert, key) in written.items():
        print(f"{name}: {cert} {key}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from pprl.demo import write_demo_data

    for path in write_demo_data(
        Path(args.out), args.size, args.seed, side=args.side, overlap=args.overlap
    ):
        print(path)
    return 0


def _serve(args: argparse.Namespace) -> int:
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


def _write_json(path: str | None, summary: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        print(f"summary written to {path}")


def _audit(args: argparse.Namespace) -> int:
    from pprl.audit_command import GATED, AuditOptions, print_audit, run_audit

    options = AuditOptions(
        records=Path(args.records),
        config=Path(args.config),
        dictionary=Path(args.dictionary) if args.dictionary else None,
        sample=args.sample,
        seed=args.seed,
    )
    report = run_audit(options)
    print_audit(report)
    _write_json(args.json, report)
    sent = report["results"][-1]
    if sent[GATED[report["measure"]]] > report["limit"]:
        print(
            f"pprl: the {sent['release']} release this configuration sends is over the limit; "
            "the daemon's privacy gate would refuse it",
            file=sys.stderr,
        )
        return 1
    return 0


def _coordinate(args: argparse.Namespace) -> int:
    from pprl.party.coordinator import Coordinator, Endpoint

    tls = TlsFiles(Path(args.cert), Path(args.key), Path(args.ca))
    coordinator = Coordinator(
        [
            Endpoint("alice", args.alice, args.alice_identity),
            Endpoint("bob", args.bob, args.bob_identity),
        ],
        tls,
    )
    try:
        coordinator.wait_ready(args.wait)
        summary = coordinator.run(run_id=args.run_id, new=args.new, until=Phase[args.until.upper()])
    finally:
        coordinator.close()
    print_summary(summary)
    _write_json(args.json, summary)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from pprl.demo import DemoOptions, Privacy, run_demo

    if (args.records_a is None) != (args.records_b is None):
        raise InputError("--records-a and --records-b go together")
    options = DemoOptions(
        size=args.size,
        seed=args.seed,
        records_a=Path(args.records_a) if args.records_a else None,
        records_b=Path(args.records_b) if args.records_b else None,
        truth=Path(args.truth) if args.truth else None,
        reference=Path(args.reference) if args.reference else None,
        classifier=args.classifier,
        workdir=Path(args.workdir) if args.workdir else None,
        reference_rows=args.reference_rows,
        privacy=Privacy(args.noise_sigma, args.feature, args.max_reidentification),
    )
    summary = run_demo(options)
    _write_json(args.json, summary)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pprl",
        description="Privacy-preserving record linkage between two parties by split learning.",
    )
    parser.add_argument("--version", action="version", version=f"pprl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    certs = sub.add_parser("certs", help="make a development CA and a certificate per identity")
    certs.add_argument("--out", required=True, help="directory for the PEM files")
    certs.add_argument("names", nargs="+", help="identities, e.g. alice bob coordinator")
    certs.set_defaults(handler=_certs)

    generate = sub.add_parser("generate", help="write the built-in voter-like demo data")
    generate.add_argument("--out", required=True)
    generate.add_argument("--size", type=int, default=2000, help="records a side")
    generate.add_argument("--seed", type=int, default=7)
    generate.add_argument("--side", choices=["alice", "bob", "all"], default="all")
    generate.add_argument("--overlap", type=float, default=1.0, help="share of true matches")
    generate.set_defaults(handler=_generate)

    party = sub.add_parser("party", help="one organisation's daemon")
    party_sub = party.add_subparsers(dest="party_command", required=True)
    serve = party_sub.add_parser("serve", help="serve until stopped")
    serve.add_argument("--config", required=True, help="the party's TOML file")
    serve.set_defaults(handler=_serve)

    coord = sub.add_parser("coordinate", help="drive both daemons through Algorithm 1")
    coord.add_argument("--alice", required=True, metavar="HOST:PORT")
    coord.add_argument("--bob", required=True, metavar="HOST:PORT")
    coord.add_argument("--alice-identity", default="alice")
    coord.add_argument("--bob-identity", default="bob")
    coord.add_argument("--cert", required=True)
    coord.add_argument("--key", required=True)
    coord.add_argument("--ca", required=True)
    coord.add_argument("--wait", type=float, default=30.0, help="seconds to wait for daemons")
    coord.add_argument("--run-id", help="resume this run (default: the unfinished one, if any)")
    coord.add_argument("--new", action="store_true", help="start a new run even if one is open")
    coord.add_argument(
        "--until",
        choices=[p.name.lower() for p in Phase if p],
        default=LAST_PHASE.name.lower(),
        help="stop after this phase; a later call resumes the run",
    )
    coord.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    coord.set_defaults(handler=_coordinate)

    demo = sub.add_parser("demo", help="both daemons and the coordinator on one machine")
    demo.add_argument("--size", type=int, default=2000, help="generated records a side")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--records-a", metavar="CSV", help="Alice's records instead of built-in")
    demo.add_argument("--records-b", metavar="CSV", help="Bob's records instead of built-in")
    demo.add_argument("--truth", metavar="CSV", help="alice_id,bob_id of the true matches")
    demo.add_argument("--reference", metavar="CSV", help="reference set (header names columns)")
    demo.add_argument(
        "--reference-rows", type=int, default=1000, help="rows of the built-in reference set"
    )
    demo.add_argument("--classifier", choices=["linear", "rbf"], default="linear")
    demo.add_argument(
        "--noise-sigma", type=float, default=0.0, help="noise on released distances (standardised)"
    )
    demo.add_argument(
        "--feature", choices=FEATURES, help="pair features (default: the daemon's for the noise)"
    )
    demo.add_argument(
        "--max-reidentification",
        type=float,
        default=1.0,
        help="privacy gate limit (the demo only reports by default; daemons default to 0.1)",
    )
    demo.add_argument("--workdir", help="keep the run's files here (default: a temp dir)")
    demo.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    demo.set_defaults(handler=_demo)

    audit = sub.add_parser(
        "audit", help="attack the tensors this party would send, as its peer could"
    )
    audit.add_argument("--records", required=True, metavar="CSV", help="the records to audit")
    audit.add_argument("--config", required=True, help="the party's TOML file")
    audit.add_argument(
        "--dictionary", metavar="CSV", help="public names (every value after the header row)"
    )
    audit.add_argument("--sample", type=int, default=1000, help="records attacked")
    audit.add_argument("--seed", type=int, help="sample and noise seed (default: secret)")
    audit.add_argument("--json", metavar="PATH", help="also write the report as JSON")
    audit.set_defaults(handler=_audit)

    from pprl.bench.command import add_parser as add_bench

    add_bench(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except PprlError as error:
        print(f"pprl: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
