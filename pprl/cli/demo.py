"""`pprl demo`: both daemons and the coordinator on one machine, on built-in or given data."""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.cli.summary import print_summary, write_json
from pprl.party.config import DEFAULT_REIDENTIFICATION_LIMIT
from pprl.protocol.encodings.registry import DEFAULT_ENCODING, ENCODINGS
from pprl.protocol.errors import InputError
from pprl.protocol.expectation import DEFAULT_MIN_EXPECTED_F1
from pprl.protocol.model.classifier import TRAINERS
from pprl.protocol.model.features import FEATURES

# More reference rows leave a peer less per coordinate at the noise the gate needs.
DEMO_REFERENCE_ROWS = 2000
# The gate limit the reference release needs to link the built-in data: at the daemons'
# default of 10% the gate's noise leaves an expected F1 near 0.13 and TRAIN stops the run
# (POOR_LINKAGE). At 80% the chosen noise links with F1 about 0.99 (docs/research/privacy.md,
# "Against a careful attacker"). Sealed linkage, the default, has no gate: it sends no vectors.
DEMO_GATE_LIMIT = 0.8


def add_parser(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="both daemons and the coordinator on one machine")
    demo.add_argument("--size", type=int, default=2000, help="generated records a side")
    demo.add_argument(
        "--seed", type=int, default=7, help="the built-in data's draw (not the daemons')"
    )
    demo.add_argument("--records-a", metavar="CSV", help="Alice's records instead of built-in")
    demo.add_argument("--records-b", metavar="CSV", help="Bob's records instead of built-in")
    demo.add_argument("--truth", metavar="CSV", help="alice_id,bob_id of the true matches")
    demo.add_argument("--reference", metavar="CSV", help="reference set (header names columns)")
    demo.add_argument(
        "--schema",
        metavar="TOML",
        help="[records] attributes, kinds, date_formats, scales; [reference] mapping; [method] "
        "keys, as in a party's configuration, for records with other columns than "
        "first/middle/last",
    )
    demo.add_argument(
        "--date-format-b",
        action="append",
        default=[],
        type=_date_format,
        metavar="ATTRIBUTE=FORMAT",
        help="the format Bob's file writes a date attribute in, over the schema's (repeat it; "
        "e.g. dob=%%d.%%m.%%Y): two registers rarely write dates alike",
    )
    demo.add_argument(
        "--reference-rows",
        type=int,
        default=DEMO_REFERENCE_ROWS,
        help="rows of the built-in reference set (2,000: with the gate's noise, F1 0.97 where "
        "1,000 gives 0.95; docs/research/privacy.md)",
    )
    demo.add_argument(
        "--encoding",
        choices=tuple(ENCODINGS),
        help=f'what each party sends the peer (default: the daemons\', "{DEFAULT_ENCODING}": '
        'blinded blocking keys and encrypted vectors; "reference": the paper\'s noisy '
        "distances, with its privacy gate)",
    )
    demo.add_argument(
        "--classifier",
        choices=TRAINERS,
        help="default: the daemon's for the error model (linear SVM for one error per record)",
    )
    demo.add_argument(
        "--noise-sigma",
        type=noise_sigma,
        help='noise on released distances (standardised), or "auto" (the reference release\'s '
        "default with the gate on): the smallest at which each party's release passes its "
        "own gate; --encoding reference only",
    )
    demo.add_argument(
        "--feature", choices=FEATURES, help="pair features (default: the daemon's for the noise)"
    )
    demo.add_argument(
        "--max-reidentification",
        type=float,
        help=f"the reference release's privacy gate limit (default: {DEMO_GATE_LIMIT:g} on the "
        f"built-in data, which it needs to link; on your own records the daemons' default, "
        f"{DEFAULT_REIDENTIFICATION_LIMIT:g}; 1 only reports what the attack finds); "
        "--encoding reference only",
    )
    demo.add_argument(
        "--min-expected-f1",
        type=float,
        help="stop before sending when a party expects a worse F1 (default: the daemons' "
        f"{DEFAULT_MIN_EXPECTED_F1:g})",
    )
    demo.add_argument(
        "--workdir",
        metavar="DIR",
        help="keep the run's files here (default: a new directory demo-run/<start time> "
        "under the current one)",
    )
    demo.add_argument(
        "--threshold",
        type=float,
        default=0.0,
        help="each party accepts a pair scoring above this ([matching] threshold; default 0: "
        "the classifier's boundary; higher trades recall for precision)",
    )
    demo.add_argument(
        "--review-band",
        type=float,
        default=0.0,
        metavar="SCORE",
        help="mark agreed pairs scoring within this much above the threshold for review "
        "([matching] review_band; default 0: none)",
    )
    demo.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="tcp://HOST:PORT of a Dask scheduler both parties' heavy steps run on ([matching] "
        "scheduler; pip install 'pprl[distributed]'): sealed linkage's blinding, the "
        "reference release's matching blocks (default: the daemons and their local workers)",
    )
    demo.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    demo.set_defaults(handler=run)


def noise_sigma(text: str) -> float | str:
    """A sigma >= 0, or "auto"."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f'expected a number >= 0 or "auto", got {text!r}')
    return value


def sealed_words(built_in: bool) -> str:
    """The first thing a sealed demo says: what the peer gets, in one line, and where the
    measured figures are."""
    measured = (
        "on these records a peer holding a list of everyone re-identified 0.0% of the 589 "
        "people without a partner"
        if built_in
        else "what a peer learns, measured: docs/security.md"
    )
    return (
        "sealed linkage (the default): blinded blocking keys and encrypted vectors are sent, "
        f"each party learns its own classifier's decisions; {measured}"
    )


def gate_words(limit: float, built_in: bool) -> str:
    """The first thing the demo says: how far its gate is from the daemons' default."""
    if limit <= DEFAULT_REIDENTIFICATION_LIMIT:
        return (
            f"privacy gate at {limit:.0%}: each daemon refuses to send a release of which its "
            f"dictionary attack re-identifies more than {limit:.0%} of sampled records"
        )
    if not built_in:
        return (
            f"privacy gate at {limit:.0%}, above the daemons' default of "
            f"{DEFAULT_REIDENTIFICATION_LIMIT:.0%}: a peer holding public name lists may "
            f"recover every name of up to {limit:.0%} of the records (SMASH below and the "
            "summary give the measured share; docs/research/privacy.md)."
        )
    return (
        f"privacy gate at {limit:.0%}, NOT the daemons' default of "
        f"{DEFAULT_REIDENTIFICATION_LIMIT:.0%}: at the default, the noise the gate needs leaves "
        "these records linking so badly that TRAIN stops the run before anything is sent. At "
        f"{limit:.0%}, a peer holding the census name lists recovers every name of most records "
        "(SMASH below and the summary give the measured share): this demo shows the linkage, "
        "not privacy (docs/research/privacy.md)."
    )


def _encoding(args: argparse.Namespace) -> str:
    """--encoding, else the schema's [method] encoding, else the daemons' default."""
    if args.encoding:
        return str(args.encoding)
    if args.schema:
        from pprl.party.local import load_schema  # lazy: the deployment, only with --schema

        named = load_schema(Path(args.schema)).get("method", {}).get("encoding")
        if named in ENCODINGS:
            return str(named)
    return DEFAULT_ENCODING


def _date_format(text: str) -> tuple[str, str]:
    attribute, equals, date_format = text.partition("=")
    if not equals or not attribute.strip() or not date_format:
        raise argparse.ArgumentTypeError(
            f"expected ATTRIBUTE=FORMAT, e.g. dob=%d.%m.%Y; got {text!r}"
        )
    return attribute.strip(), date_format


def run(args: argparse.Namespace) -> int:
    # lazy: the local deployment (gRPC, the daemon) loads only when a demo runs
    from pprl.party.local import DemoOptions, Privacy, run_demo

    if (args.records_a is None) != (args.records_b is None):
        raise InputError("--records-a and --records-b go together")
    built_in = args.records_a is None
    encoding = ENCODINGS[_encoding(args)]
    limit = args.max_reidentification
    if encoding.sealed:
        for option in ("noise_sigma", "max_reidentification", "feature"):
            if getattr(args, option) is not None:
                flag = "--" + option.replace("_", "-")
                raise InputError(
                    f"{flag} applies to the reference release: sealed linkage (the default) "
                    "sends no vectors; add --encoding reference to release noisy distances"
                )
        limit = DEFAULT_REIDENTIFICATION_LIMIT  # no gate runs: nothing released to attack
    elif limit is None:
        limit = DEMO_GATE_LIMIT if built_in else DEFAULT_REIDENTIFICATION_LIMIT
    options = DemoOptions(
        size=args.size,
        data_seed=args.seed,
        records_a=Path(args.records_a) if args.records_a else None,
        records_b=Path(args.records_b) if args.records_b else None,
        truth=Path(args.truth) if args.truth else None,
        reference=Path(args.reference) if args.reference else None,
        classifier=args.classifier,
        workdir=Path(args.workdir) if args.workdir else None,
        reference_rows=args.reference_rows,
        privacy=Privacy(
            args.noise_sigma,
            args.feature,
            limit,
            min_expected_f1=args.min_expected_f1,
            encoding=args.encoding,
        ),
        schema=Path(args.schema) if args.schema else None,
        date_formats_b=dict(args.date_format_b),
        matching={
            key: value
            for key, value in (
                ("threshold", args.threshold),
                ("review_band", args.review_band),
                ("scheduler", args.scheduler),
            )
            if value
        },
    )
    print(sealed_words(built_in) if encoding.sealed else gate_words(limit, built_in))
    summary = run_demo(options)
    print_summary(summary)
    print(
        f"\nkept in {summary['workdir']}: both state directories (the results and reports "
        "above), the daemons' configurations and logs, and summary.json"
    )
    write_json(args.json, summary)
    return 0
