"""Each phenomenon of the register error model on its own, our method against the peer on the
same generated data: which kinds of register error cost us the most, and where the anonlink
stack does better.

    python benchmarks/phenomena.py --size 5000 --seed 11 \
        [--phenomena typo,nickname,registers,overlap] [--variant hard_negatives=0 ...] \
        [--out DIR] [--json FILE]

Per data set the files are written as `pprl generate` writes them (Bob's copies corrupted by
the one phenomenon, by the whole "registers" mixture, or, for "overlap", by the mixture with
70% overlap and 30% namesakes); our method links them in one process with the daemons'
pipeline and their default mapping (register training unless a variant says otherwise); the
peer links the same files on first, middle and last name at its best threshold, chosen with
the truth. Prints a markdown table, one row per data set and variant; "our time" is both
parties' phases run one after the other in one process.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.in_process import Outcome, link_tables, method_choices
from pprl.bench.grid import machine
from pprl.bench.peer import PeerResult, run_peer
from pprl.files.atomic import write_text_atomic
from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.party.local import read_truth, write_demo_data
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.error_model import PHENOMENA
from pprl.protocol.data.reference import DEFAULT_MAPPING, MappingEntry, default_mapping
from pprl.protocol.method import method_params

# These corrupt fields of kind date, number, quantity and coordinates, which generated data
# has none of.
OTHER_KINDS = ("date", "digit", "quantity", "coordinates")
NAME_PHENOMENA = tuple(p for p in PHENOMENA if p not in OTHER_KINDS)
OVERLAP = "overlap"
# As docs/research/results.md's register rows: the mixture alone, and with partial overlap and
# namesakes.
DATA_SETS: dict[str, dict[str, Any]] = {
    **{p: {"error_model": p} for p in NAME_PHENOMENA},
    "registers": {"error_model": "registers"},
    "variants": {"error_model": "variants"},
    OVERLAP: {"error_model": "registers", "overlap": 0.7, "namesakes": 0.3},
}
LABELS = {
    OVERLAP: "registers, 70% overlap, 30% namesakes",
    "variants": "nicknames, middle names, edits (1-3)",
}
PEER_FIELDS = ("first", "middle", "last")
# The sorted words of the three names against those of the reference set's two columns.
COMBINED: MappingEntry = ("first+middle+last", "first+last")
# "default": what a daemon without a mapping uses for the variant's error model
# (reference.default_mapping); the paper's, and the paper's with the combined entry, are the
# earlier rows of docs/research/results.md.
MAPPINGS = ("default", "paper", "paper+combined")
# Register training, as the FEBRL4 schemas choose: the data carry register errors.
BASE_METHOD = {"error_model": "registers"}
HEADER = (
    "| data | our P | our R | our F1 | peer P | peer R | peer F1 | peer threshold | our time |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


@dataclass(frozen=True)
class Row:
    """One data set under one variant of our method, and the peer on the same files."""

    data: str
    variant: str
    ours: Outcome
    peer: PeerResult

    def label(self) -> str:
        name = LABELS.get(self.data, self.data)
        return f"{name} ({self.variant})" if self.variant else name

    def markdown(self) -> str:
        ours, peer = self.ours.quality, self.peer.best.quality
        figures = [ours.precision, ours.recall, ours.f1, peer.precision, peer.recall, peer.f1]
        cells = [self.label(), *(f"{x:.4f}" for x in figures)]
        cells += [f"{self.peer.best.threshold:.2f}", f"{self.ours.seconds:.1f} s"]
        return "| " + " | ".join(cells) + " |"

    def as_dict(self) -> dict[str, Any]:
        q = self.ours.quality
        ours = {"precision": q.precision, "recall": q.recall, "f1": q.f1}
        return {
            "data": self.data,
            "variant": self.variant,
            "ours": {
                **{k: round(v, 4) for k, v in ours.items()},
                "seconds": round(self.ours.seconds, 3),
            },
            "peer": self.peer.best.as_dict(),
        }


def chosen_mapping(choice: str, error_model: str) -> tuple[MappingEntry, ...]:
    """The mapping `--mapping` names, for a variant's error model."""
    if choice == "paper":
        return DEFAULT_MAPPING
    if choice == "paper+combined":
        return (*DEFAULT_MAPPING, COMBINED)
    return default_mapping(error_model)


def _phenomena(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in DATA_SETS]
    if unknown or not names:
        known = ", ".join(DATA_SETS)
        raise argparse.ArgumentTypeError(f"expected some of {known}; got {text!r}")
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="records a side")
    parser.add_argument("--seed", type=int, default=11, help="of the data and of our parties")
    parser.add_argument(
        "--phenomena", type=_phenomena, default=list(DATA_SETS), help="comma list of data sets"
    )
    parser.add_argument(
        "--variant", action="append", default=[], help="KEY=VALUE[,KEY=VALUE] of [method]"
    )
    parser.add_argument(
        "--mapping",
        choices=MAPPINGS,
        default="default",
        help="the daemons' default for the error model, the paper's, or the paper's with "
        f"the combined entry {'->'.join(COMBINED)}",
    )
    parser.add_argument("--out", type=Path, help="directory for the generated data")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser


def _data_set(name: str, out: Path, args: argparse.Namespace, variants: Sequence[str]) -> list[Row]:
    """Generate one data set, link it under every variant and by the peer."""
    folder = out / name
    write_demo_data(folder, args.size, args.seed, **DATA_SETS[name])
    truth = read_truth(folder / "truth.csv")
    tables = (load_records(folder / "alice.csv"), load_records(folder / "bob.csv"))
    reference = load_reference(folder / "reference.csv")
    peer = run_peer(folder / "alice.csv", folder / "bob.csv", truth, PEER_FIELDS)
    rows = []
    for variant in variants:
        method = method_params(**method_choices(BASE_METHOD, variant))
        mapping = chosen_mapping(args.mapping, method.error_model)
        agreement = Agreement(reference, mapping, method)
        ours = link_tables(tables, truth, agreement, args.seed)
        rows.append(Row(name, variant, ours, peer))
    return rows


def _progress(row: Row) -> None:
    ours, peer = row.ours.quality, row.peer.best
    print(
        f"{row.label()}: ours F1 {ours.f1:.4f} in {row.ours.seconds:.1f} s, "
        f"peer F1 {peer.quality.f1:.4f} at {peer.threshold:.2f}",
        file=sys.stderr,
        flush=True,
    )


def _write_json(path: Path, argv: Sequence[str], rows: list[Row], mapping: str) -> None:
    command = "python benchmarks/phenomena.py " + " ".join(shlex.quote(a) for a in argv)
    settings = {"command": command, "machine": machine(), "mapping": mapping}
    document = {"settings": settings, "rows": [row.as_dict() for row in rows]}
    write_text_atomic(path, json.dumps(document, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    variants = args.variant or [""]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="pprl-phenomena-") as scratch:
        out = args.out or Path(scratch)
        for name in args.phenomena:
            for row in _data_set(name, out, args, variants):
                _progress(row)
                rows.append(row)
    print(HEADER)
    print("\n".join(row.markdown() for row in rows))
    if args.json:
        _write_json(args.json, argv, rows, args.mapping)
    return 0


if __name__ == "__main__":
    sys.exit(main())
