"""pprl at its defaults, through two real daemons, beside Splink and the anonlink stack at
their best thresholds, on several data sets: what an operator who sets nothing gets, and
whether the daemons' estimate before sending says so.

    python benchmarks/registers_at_defaults.py --data bench-data --size 5000 \\
        --json docs/research/results/registers_at_defaults_before.json \\
        [--sets febrl4-names,european-all,european-names,namesakes,nicknames] \\
        [--min-expected-f1 0.8] [--systems pprl,splink,anonlink]

The sets, written under --data once and reused (the generated ones per --size):
febrl4-names (FEBRL4's 5,000 a side, names alone, the README's reference set),
european-all and european-names (`pprl bench data european`, its reference set and the
schemas of benchmarks/european), namesakes and nicknames (`pprl generate`, no schema: the
daemons' own first/middle/last). pprl is `pprl demo` with no --min-expected-f1 unless one is
given: a party that expects too poor a linkage refuses (POOR_LINKAGE), and the row says so
with each party's estimate. The peers see the same records (B's European dates rewritten in
A's form, as they have no per-file formats) and are reported at the threshold that maximises
their F1, chosen with the truth: their best case, as in benchmarks/european_phenomena.py,
whose runs they are. Prints a markdown table; --json writes every figure; each demo's
output and working directory stay under DATA/runs.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from european_phenomena import peer_files, read_truth, run_anonlink, run_splink

from lab.result_file import write_result
from pprl.bench import european_registers

BENCHMARKS = Path(__file__).resolve().parent
# The README's reference set for FEBRL4: every FEBRL field, drawn at random.
FEBRL4_REFERENCE = (
    "given_name=first-name",
    "surname=surname",
    "street_number=number:1-4",
    "address_1=street",
    "address_2=suburb",
    "suburb=suburb",
    "postcode=number:4",
    "state=category:NSW,VIC,QLD,SA,WA,TAS,NT,ACT",
    "date_of_birth=date:1900-2010",
    "soc_sec_id=number:7",
)
NAMES = ("first", "middle", "last")  # what `pprl generate` writes and the daemons compare
SYSTEMS = ("pprl", "splink", "anonlink")
# A party's estimate as the demo prints it: its TRAIN line on stdout when it passed, its
# error on stderr ("alice: FAILED_PRECONDITION [POOR_LINKAGE]: ...") when it refused.
_PASSED = re.compile(r"^\s+(alice|bob)\s.*?expected F1 about (\d+\.\d+)", re.MULTILINE)
_REFUSED = re.compile(r"\b(alice|bob): [^;]*?expected F1 about (\d+\.\d+)")
# A failed phase as the coordinator words it: "run ID: TRAIN failed: alice: CODE [REASON]: ...".
_PHASE = re.compile(r": ([A-Z]+) failed: ")
_PARTY_REASON = re.compile(r"\b(alice|bob): [A-Z_]+ \[([A-Z_]+)\]")


@dataclass(frozen=True)
class DataSet:
    """One set's files and how each linker reads them."""

    records: tuple[Path, Path]
    truth: Path
    reference: Path
    fields: tuple[str, ...]  # what the peers compare
    schema: Path | None = None
    date_formats_b: tuple[str, ...] = ()  # `pprl demo --date-format-b` values
    european: bool = False  # B writes its dates its own way: the peers get them rewritten
    dice_floor: float | None = None  # anonlink's lowest threshold (None: run_anonlink's rule)


def _pprl(*arguments: str, **run: Any) -> subprocess.CompletedProcess[str]:
    """`python -m pprl ...` with this interpreter (and so this tree's pprl)."""
    return subprocess.run([sys.executable, "-m", "pprl", *arguments], text=True, **run)


def febrl4_names(data: Path, _size: int) -> DataSet:
    """FEBRL4 (its own 5,000 a side, whatever --size says), given name and surname."""
    out = data / "febrl4"
    if not (out / "truth.csv").exists():
        _pprl("bench", "data", "febrl4", "--out", str(out), check=True)
    reference = out / "reference.csv"
    if not reference.exists():
        columns = [word for column in FEBRL4_REFERENCE for word in ("--column", column)]
        rows = ("--rows", "1000", "--seed", "7")
        _pprl("reference", "--out", str(reference), *rows, *columns, check=True)
    return DataSet(
        (out / "records_a.csv", out / "records_b.csv"),
        out / "truth.csv",
        reference,
        ("given_name", "surname"),
        BENCHMARKS / "febrl4" / "schema_names.toml",
    )


def european(fields: str) -> Callable[[Path, int], DataSet]:
    """The European registers on all their fields ("all") or their names alone."""

    def prepare(data: Path, size: int) -> DataSet:
        out = data / f"eu-{size}"
        if not (out / "truth.csv").exists():
            _pprl("bench", "data", "european", "--out", str(out), "--size", str(size), check=True)
        reference = out / "reference.csv"
        if not reference.exists():
            european_registers.write_reference(out)
        every = fields == "all"
        return DataSet(
            (out / "records_a.csv", out / "records_b.csv"),
            out / "truth.csv",
            reference,
            european_registers.FIELDS if every else ("first_name", "last_name"),
            BENCHMARKS / "european" / ("schema.toml" if every else "schema_names.toml"),
            (f"date_of_birth={european_registers.DATE_FORMATS['b']}",) if every else (),
            european=True,
        )

    return prepare


def generated(name: str, seed: int, *options: str) -> Callable[[Path, int], DataSet]:
    """`pprl generate` at 70% overlap with these options; no schema, the daemons' own."""

    def prepare(data: Path, size: int) -> DataSet:
        out = data / f"{name}-{size}"
        if not (out / "truth.csv").exists():
            drawn = ("--size", str(size), "--overlap", "0.7", *options, "--seed", str(seed))
            _pprl("generate", "--out", str(out), *drawn, check=True, stdout=subprocess.DEVNULL)
        files = (out / "alice.csv", out / "bob.csv")
        # Three names alone: a pair may share one name in three and still be true.
        return DataSet(files, out / "truth.csv", out / "reference.csv", NAMES, dice_floor=0.5)

    return prepare


SETS: dict[str, Callable[[Path, int], DataSet]] = {
    "febrl4-names": febrl4_names,
    "european-all": european("all"),
    "european-names": european("names"),
    "namesakes": generated("namesakes", 3, "--errors", "registers", "--namesakes", "0.3"),
    "nicknames": generated("nicknames", 4, "--errors", "variants"),
}


def estimates(stdout: str, stderr: str) -> dict[str, float]:
    """Each party's expected F1 as the demo printed it, passed or refused."""
    found = {party: float(f1) for party, f1 in _PASSED.findall(stdout)}
    found.update((party, float(f1)) for party, f1 in _REFUSED.findall(stderr))
    return dict(sorted(found.items()))


def demo_outcome(
    returncode: int, stdout: str, stderr: str, summary: dict[str, Any] | None, seconds: float
) -> dict[str, Any]:
    """What one `pprl demo` gave: the linkage against the truth, or why it stopped."""
    if returncode == 0 and summary is not None:
        linkage = summary["linkage"]
        return {
            "status": "linked",
            **{key: round(linkage[key], 4) for key in ("precision", "recall", "f1")},
            "expected": {
                name: round(party["expected"]["f1"], 4)
                for name, party in summary["parties"].items()
                if party.get("expected", {}).get("f1")
            },
            "seconds": round(seconds, 1),
            "protocol_seconds": round(summary["seconds"], 1),
        }
    error = next((line for line in stderr.splitlines() if line.startswith("pprl: error:")), "")
    phase = _PHASE.search(error)
    reasons = dict(_PARTY_REASON.findall(error))
    return {
        "status": "refused" if "POOR_LINKAGE" in reasons.values() else "failed",
        "phase": phase.group(1) if phase else "",
        "reasons": reasons,  # each failing party's ErrorReason
        "message": error or (stderr.strip().splitlines() or [f"exit {returncode}"])[-1],
        "exit_code": returncode,
        "expected": estimates(stdout, stderr),
        "seconds": round(seconds, 1),
    }


def run_demo(name: str, data_set: DataSet, runs: Path, min_expected_f1: float | None) -> dict:
    """`pprl demo` on the set's files, its working directory and output kept under `runs`."""
    workdir, summary_path = runs / name, runs / f"{name}.json"
    shutil.rmtree(workdir, ignore_errors=True)
    summary_path.unlink(missing_ok=True)
    arguments = [
        "demo",
        *("--records-a", str(data_set.records[0]), "--records-b", str(data_set.records[1])),
        *("--truth", str(data_set.truth), "--reference", str(data_set.reference)),
        *(("--schema", str(data_set.schema)) if data_set.schema else ()),
        *(word for value in data_set.date_formats_b for word in ("--date-format-b", value)),
        *(("--min-expected-f1", str(min_expected_f1)) if min_expected_f1 is not None else ()),
        *("--workdir", str(workdir), "--json", str(summary_path)),
    ]
    began = time.perf_counter()
    done = _pprl(*arguments, capture_output=True)
    seconds = time.perf_counter() - began
    (runs / f"{name}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
    return demo_outcome(done.returncode, done.stdout, done.stderr, summary, seconds)


def peer_outcome(system: str, data_set: DataSet, truth: dict[tuple[str, str], str]) -> dict:
    """Splink or anonlink at its best threshold; a crash is a row, not the end of the run."""
    with tempfile.TemporaryDirectory(prefix="pprl-registers-") as work:
        files = peer_files(data_set.records[0].parent, Path(work)) if data_set.european else None
        linked = files or data_set.records
        try:
            if system == "splink":
                figures = run_splink(linked, data_set.fields, truth)
            else:
                figures = run_anonlink(linked, data_set.fields, truth, data_set.dice_floor)
            return {"status": "linked", **figures}
        except Exception as error:  # any: one peer failing must not lose the others' figures
            return {"status": "failed", "message": f"{type(error).__name__}: {error}"}


def pprl_cell(outcome: dict[str, Any]) -> str:
    if outcome["status"] == "linked":
        return (
            f"F1 {outcome['f1']:.4f} (P {outcome['precision']:.3f}, R {outcome['recall']:.3f}; "
            f"{outcome['seconds']:.0f} s)"
        )
    if outcome["reasons"]:
        by = " and ".join(f"{party} ({why})" for party, why in outcome["reasons"].items())
        return f"{outcome['status']} at {outcome['phase']} by {by}"
    return f"{outcome['status']}: {outcome['message'].removeprefix('pprl: error: ')[:120]}"


def estimate_cell(outcome: dict[str, Any]) -> str:
    expected = outcome["expected"]
    return ", ".join(f"{party} {f1:.2f}" for party, f1 in expected.items()) or "none printed"


def peer_cell(outcome: dict[str, Any]) -> str:
    if outcome["status"] != "linked":
        return f"failed: {outcome['message'][:90]}"
    return (
        f"F1 {outcome['f1']:.4f} (P {outcome['precision']:.3f}, R {outcome['recall']:.3f}; "
        f"threshold {outcome['threshold']:.3g})"
    )


def header(min_expected_f1: float | None) -> str:
    """The table's head; a run given a minimum says so where "at the defaults" stood."""
    pprl = (
        "at the defaults"
        if min_expected_f1 is None
        else f"with --min-expected-f1 {min_expected_f1:g}"
    )
    return (
        f"| set | pprl {pprl} (F1, or the refusal) | each party's estimate (expected F1) "
        "| Splink | anonlink |\n|---|---|---|---|---|"
    )


def table_row(name: str, row: dict[str, Any]) -> str:
    """A set's markdown row; a system not run is a dash."""
    cells = [
        pprl_cell(row["pprl"]) if "pprl" in row else "-",
        estimate_cell(row["pprl"]) if "pprl" in row else "-",
        *(peer_cell(row[peer]) if peer in row else "-" for peer in ("splink", "anonlink")),
    ]
    return "| " + " | ".join([name, *(cell.replace("|", "/") for cell in cells)]) + " |"


def _names(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"choose from {', '.join(choices)}; got {text!r}")
        return names

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=_names(tuple(SETS)), default=list(SETS))
    parser.add_argument("--data", type=Path, required=True, help="data directory (reused)")
    parser.add_argument("--size", type=int, default=5000, help="people a generated set has")
    parser.add_argument(
        "--min-expected-f1",
        type=float,
        help="passed to pprl demo, to label a run not at the defaults (default: none passed)",
    )
    parser.add_argument("--systems", type=_names(SYSTEMS), default=list(SYSTEMS))
    parser.add_argument("--json", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    runs = args.data / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    for name in args.sets:
        data_set = SETS[name](args.data, args.size)
        truth = read_truth(data_set.truth)
        row: dict[str, Any] = {"fields": list(data_set.fields), "true_pairs": len(truth)}
        for system in args.systems:
            if system == "pprl":
                row[system] = run_demo(name, data_set, runs, args.min_expected_f1)
            else:
                row[system] = peer_outcome(system, data_set, truth)
            print(name, system, json.dumps(row[system]), flush=True)
        rows[name] = row
    lines = [table_row(name, row) for name, row in rows.items()]
    table = "\n".join([header(args.min_expected_f1), *lines])
    print(table)
    if args.json:
        document = {
            "command": " ".join(["python", "benchmarks/registers_at_defaults.py", *argv]),
            "size": args.size,
            "min_expected_f1": args.min_expected_f1,
            "sets": rows,
            "table": table,
        }
        write_result(args.json, document)
    return 0


if __name__ == "__main__":
    sys.exit(main())
