"""`pprl assess-reference`: what a reference set of first and last names would cost in
privacy and in linkage, before any run.

For a candidate set (the project's CSV with first and last columns, or the paper's one
FIRST_LAST per line) it reports sigma0, the noise a 10% gate (or --limit) would choose on
generated census-like records, the gate's attack at each sigma asked for (the stronger of
its two attackers; surnames recovered beside it), and the F1 the two parties' pipeline
reaches on generated data with one error per record at that sigma. Generated data are not
your data: `pprl audit` measures the attack on your own records.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from pprl.cli.summary import write_json
from pprl.protocol.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    assess = sub.add_parser(
        "assess-reference",
        help="privacy and linkage a first/last-name reference set would give, before a run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    assess.add_argument("--reference", required=True, type=Path, help="the candidate set")
    assess.add_argument("--rows", type=int, help="use its first ROWS rows (default: all)")
    assess.add_argument(
        "--sigma", type=float, action="append", default=[], help="a noise to assess; repeat"
    )
    assess.add_argument("--limit", type=float, default=0.10, help="the gate's limit (0.10)")
    assess.add_argument("--size", type=int, default=2000, help="generated records a side")
    assess.add_argument("--audit-records", type=int, default=200, help="records attacked")
    assess.add_argument("--seed", type=int, default=11, help="of the generated data")
    assess.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")
    assess.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    report = assess(args)
    print(
        f"{report['reference']}: {report['rows']:,} rows, sigma0 {report['sigma0']:.3g} edits; "
        f"{report['size']:,} generated records a side"
    )
    print(f"automatic noise at a {args.limit:.0%} gate: {report['automatic']['words']}")
    print(
        f"\n{'sigma':>6} {'edits':>6} {'re-identified':>13} {'attacker':>9} "
        f"{'surnames':>9} {'F1':>7}"
    )
    for row in report["points"]:
        print(
            f"{row['sigma']:>6g} {row['noise_edits']:>6.2f} {row['reidentified']:>13.1%} "
            f"{row['attack']:>9} {row['surnames']:>9.1%} {row['f1']:>7.4f}"
        )
    write_json(args.json, report)
    return 0


def assess(args: argparse.Namespace) -> dict[str, Any]:
    # The pipeline loads only for this command, not for every other `pprl` command.
    from pprl.bench.data import read_reference
    from pprl.protocol import pipeline
    from pprl.protocol.agreement import Agreement
    from pprl.protocol.data import synthetic
    from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
    from pprl.protocol.gate import audit_rows, calibrate_noise, gate_sample
    from pprl.protocol.method import method_params
    from pprl.protocol.metrics import linkage_quality
    from pprl.protocol.privacy.audit import census_dictionary
    from pprl.protocol.privacy.noise import CalibrationError
    from pprl.protocol.vectors.randomness import Randomness

    if args.size < 2 or args.audit_records < 1 or not 0 < args.limit <= 1:
        raise InputError("--size needs at least 2, --audit-records 1, --limit within (0, 1]")
    if any(sigma < 0 for sigma in args.sigma):
        raise InputError("--sigma must be >= 0")
    if args.rows is not None and args.rows < 2:
        raise InputError(f"--rows must be at least 2, got {args.rows}")
    columns = read_reference(args.reference, args.rows)
    reference = ReferenceSet(str(args.reference), columns)
    base = Agreement(reference, DEFAULT_MAPPING, method_params(noise_sigma=1.0))
    data = synthetic.generate(args.size, args.seed)
    names = ("first", "middle", "last")
    alice = {name: [getattr(p, name) for p in data.alice] for name in names}
    bob = {name: [getattr(p, name) for p in data.bob] for name in names}
    dictionary = census_dictionary(columns)
    randomness = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
    records = gate_sample(args.size, args.audit_records, randomness[0])
    try:
        choice = calibrate_noise(
            base, alice, records, dictionary, randomness[0], args.limit, "every-name"
        )
    except CalibrationError as exc:
        message = f"{exc}; this set cannot pass such a gate"
        raise InputError(message, path=str(args.reference)) from None
    ids_a, ids_b = [p.id for p in data.alice], [p.id for p in data.bob]
    points = []
    for sigma in sorted({*args.sigma, choice.sigma}):
        agreement = base.with_noise(sigma)
        linkage = pipeline.link_in_process(agreement, alice, bob, randomness)
        agreed = {(ids_a[a], ids_b[b]) for a, b in linkage.agreed}
        released = linkage.alice.released
        position = np.empty(len(released.order), dtype=np.int64)
        position[released.order] = np.arange(len(released.order))
        gate = audit_rows(agreement, released, np.sort(position[records]), alice, dictionary)
        surnames = next(a.recovered for a in gate.attributes if a.attribute == "last")
        points.append(
            {
                "sigma": sigma,
                "noise_edits": agreement.release.noise,
                "reidentified": gate.record_reidentified,
                "attack": gate.attack,
                "surnames": surnames,
                "f1": linkage_quality(agreed, data.truth).f1,
            }
        )
    return {
        "reference": str(args.reference),
        "rows": len(reference),
        "sigma0": base.sigma0,
        "size": args.size,
        "limit": args.limit,
        "automatic": {"sigma": choice.sigma, "words": choice.words()},
        "points": points,
    }
