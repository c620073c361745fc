"""Linkage by phenomenon on European-style registers (pprl.bench.european_registers): pprl
beside Splink (the best non-private linker, Fellegi-Sunter trained by EM without labels)
and the anonlink stack (CLKs, Dice, greedy one-to-one), in one run, on the same files.

    python benchmarks/european_phenomena.py --size 10000 --overlap 0.8 --seed 1 --out eu \\
        --json docs/research/results/european_phenomena_all.json [--fields names] \\
        [--variant "" --variant error_model=registers-movers] \\
        [--extra first_name+last_name=first_name+last_name]

pprl runs in one process through the daemon's pipeline functions, with privacy switched off
(no noise; the gate only matters for the release, and this measures the method's
linkage) and the defaults a party's own schema gets (benchmarks/european/schema*.toml; the
register error model), each file read with its own date format. The peers get B's dates
rewritten in one form (they have no per-file formats) and are reported at the threshold
that maximises their F1, chosen with the truth: their best case. Every true pair not linked
is a false negative. Recall per phenomenon is over the true pairs carrying it.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lab.in_process import link_tables, method_choices
from lab.result_file import write_result
from pprl.bench import european_registers
from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.party.config import records_schema
from pprl.party.local import load_schema
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.kinds import kinds_of, scales_of
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality

SCHEMAS = Path(__file__).parent / "european"


def read_truth(path: Path) -> dict[tuple[str, str], str]:
    """Each true pair's phenomenon; "all" where the file names none (a truth file of `pprl
    generate` or FEBRL4), so that the peers below run on those files too."""
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            (r["alice_id"], r["bob_id"]): r.get("phenomenon") or "all"
            for r in csv.DictReader(handle)
        }


def _by_phenomenon(found: frozenset[tuple[str, str]], truth: dict) -> dict[str, float]:
    """Recall over the true pairs of each phenomenon."""
    total, linked = Counter(truth.values()), Counter(truth[p] for p in found if p in truth)
    return {name: round(linked[name] / total[name], 4) for name in sorted(total)}


def _summary(found: frozenset[tuple[str, str]], truth: dict, seconds: float) -> dict[str, Any]:
    q = linkage_quality(set(found), set(truth))
    return {
        "precision": round(q.precision, 4),
        "recall": round(q.recall, 4),
        "f1": round(q.f1, 4),
        "seconds": round(seconds, 1),
        "recall_by_phenomenon": _by_phenomenon(found, truth),
    }


def run_pprl(
    data: Path,
    fields: str,
    variant: str,
    truth: dict,
    seed: int,
    extra: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    schema_path = SCHEMAS / ("schema.toml" if fields == "all" else "schema_names.toml")
    schema = load_schema(schema_path)
    formats = european_registers.DATE_FORMATS
    tables = []
    for side in ("a", "b"):
        records = dict(schema["records"])
        if "date_formats" in records:
            records["date_formats"] = {"date_of_birth": formats[side]}
        attributes = records_schema(records, schema_path)
        tables.append(load_records(data / f"records_{side}.csv", "id", attributes, "missing"))
    mapping = [(attribute, column) for attribute, column in schema["reference"]["mapping"]]
    mapping.extend(extra)
    with tempfile.TemporaryDirectory() as work:
        reference = load_reference(european_registers.write_reference(Path(work)))
    base = {"error_model": "registers", **schema.get("method", {})}
    method = method_params(**method_choices(base, variant))
    agreement = Agreement(reference, mapping, method, kinds_of(attributes), scales_of(attributes))
    outcome = link_tables((tables[0], tables[1]), set(truth), agreement, seed)
    return _summary(outcome.found, truth, outcome.seconds)


PEER_DATE_FORMAT = "%Y%m%d"  # as FEBRL writes dates, which the anonlink schema reads as numbers


def peer_files(data: Path, work: Path) -> tuple[Path, Path]:
    """Both files with their dates in one form (the peers have no per-file formats)."""
    written = []
    for side in ("a", "b"):
        with (data / f"records_{side}.csv").open(newline="", encoding="utf-8") as source:
            rows = list(csv.DictReader(source))
        written_format = european_registers.DATE_FORMATS[side]
        for row in rows:
            if row["date_of_birth"]:
                born = datetime.strptime(row["date_of_birth"], written_format)
                row["date_of_birth"] = born.strftime(PEER_DATE_FORMAT)
        out = work / f"records_{side}.csv"
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["id", *european_registers.FIELDS])
            writer.writeheader()
            writer.writerows(rows)
        written.append(out)
    return written[0], written[1]


def run_anonlink(
    files: tuple[Path, Path], fields: Sequence[str], truth: dict, floor: float | None = None
) -> dict[str, Any]:
    """The best threshold from `floor` up; None: 0.5 on two fields, else 0.7 (a third field
    here is not a name: three names alone may take 0.5)."""
    from pprl.bench.peer import ENCODINGS, TEXT, THRESHOLDS, run_peer

    # FEBRL's postcodes are numbers; these are written with letters and dashes too.
    encodings = {**ENCODINGS, "postcode": TEXT, "city": TEXT, "street": TEXT}
    # On all fields most pairs share a sex, a year or a town's bigrams: below a Dice of 0.7 the
    # candidate pairs of 10,000 x 10,000 did not fit in 24 GiB (its best was 0.82 at 2,000).
    if floor is None:
        floor = 0.5 if len(fields) <= 2 else 0.7
    thresholds = [t for t in THRESHOLDS if t >= floor]
    began = time.perf_counter()
    result = run_peer(files[0], files[1], set(truth), fields, thresholds, encodings=encodings)
    summary = _summary(result.linked, truth, time.perf_counter() - began)
    return {**summary, "threshold": result.best.threshold}


def run_splink(files: tuple[Path, Path], fields: Sequence[str], truth: dict) -> dict[str, Any]:
    from lab.splink_peer import best_one_to_one, splink_scores

    # Splink's comparisons are chosen by the kinds pprl reads the fields as.
    kinds = load_schema(SCHEMAS / "schema.toml")["records"]["kinds"]
    began = time.perf_counter()
    scored = splink_scores(
        files[0],
        files[1],
        fields,
        kinds={name: kinds.get(name, "name") for name in fields},
        date_formats_a={"date_of_birth": PEER_DATE_FORMAT},
        date_formats_b={"date_of_birth": PEER_DATE_FORMAT},
    )
    best = best_one_to_one(scored, set(truth))
    summary = _summary(frozenset(best["linked"]), truth, time.perf_counter() - began)
    return {**summary, "threshold": best["threshold"]}


def _entries(text: str) -> tuple[tuple[str, str], ...]:
    """ATTRIBUTE=COLUMN[,ATTRIBUTE=COLUMN] as mapping entries."""
    entries = []
    for item in text.split(","):
        attribute, equals, column = item.partition("=")
        if not equals or not attribute or not column:
            raise argparse.ArgumentTypeError(f"expected ATTRIBUTE=COLUMN, got {item!r}")
        entries.append((attribute, column))
    return tuple(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--overlap", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="data directory (reused)")
    parser.add_argument("--fields", choices=("all", "names"), default="all")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="KEY=VALUE[,KEY=VALUE] of pprl's [method]; repeat it for a pprl row per variant",
    )
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        type=_entries,
        help="ATTRIBUTE=COLUMN[,...]: also a pprl row per variant with these mapping entries "
        "added (e.g. first_name+last_name=first_name+last_name); repeat it for more rows",
    )
    parser.add_argument("--systems", default="pprl,splink,anonlink")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    logging.getLogger("splink").setLevel(logging.ERROR)  # its training notes, on every run
    if not (args.out / "truth.csv").exists():
        registers = european_registers.generate(args.size, args.overlap, args.seed)
        european_registers.write(registers, args.out)
    truth = read_truth(args.out / "truth.csv")
    fields = (
        list(european_registers.FIELDS) if args.fields == "all" else ["first_name", "last_name"]
    )
    results: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "size": args.size,
        "overlap": args.overlap,
        "seed": args.seed,
        "fields": args.fields,
        "true_pairs": len(truth),
        "phenomena": dict(sorted(Counter(truth.values()).items())),
        "systems": {},
    }
    with tempfile.TemporaryDirectory() as work:
        files = peer_files(args.out, Path(work))
        for system in args.systems.split(","):
            runs = {
                "pprl": lambda v: run_pprl(args.out, args.fields, v, truth, args.seed),
                "splink": lambda _: run_splink(files, fields, truth),
                "anonlink": lambda _: run_anonlink(files, fields, truth),
            }
            for variant in (args.variant or [""]) if system == "pprl" else [""]:
                name = f"{system} {variant}".strip()
                results["systems"][name] = runs[system](variant)
                print(name, json.dumps(results["systems"][name]), flush=True)
                for extra in args.extra if system == "pprl" else []:
                    added = f"{name} " + " ".join(f"+{attribute}" for attribute, _ in extra)
                    results["systems"][added] = run_pprl(
                        args.out, args.fields, variant, truth, args.seed, extra
                    )
                    print(added, json.dumps(results["systems"][added]), flush=True)
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
