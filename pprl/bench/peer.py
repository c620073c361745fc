"""The peer: the anonlink stack run on the same files, in one process, at its best threshold.

Each record becomes a CLK (clkhash: a 1,024-bit Bloom filter, the fields' tokens hashed in
with one fixed secret); anonlink finds every pair of CLKs whose Dice coefficient reaches a
threshold and its greedy solver turns them into a one-to-one linkage. The threshold is swept
and the one with the best F1 against the truth is reported: the peer's best case, chosen with
the answer in hand, which no deployment gets.

The field encodings follow clkhash's published linkage schema for FEBRL (schema version 3):
names and address words as bigrams, numbers, postcode and date of birth as positional unigrams,
the state as positional bigrams. A field of another file is encoded as a name.
"""

from __future__ import annotations

import array
import base64
import csv
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pprl.bench.extra import import_extra
from pprl.bench.febrl import FIELDS as FEBRL_FIELDS
from pprl.protocol.errors import InputError
from pprl.protocol.metrics import Quality, linkage_quality

# A fixed secret: both files are encoded with the same keys, as two agreeing parties would.
SECRET = "pprl-peer-benchmark-secret"
CLK_BITS = 1024
THRESHOLDS = tuple(round(0.5 + 0.01 * i, 2) for i in range(50))  # 0.50 .. 0.99
NAME_FIELDS = ("given_name", "surname")
# The FEBRL fields clkhash's schema encodes (it leaves out soc_sec_id, as its tutorial does).
ALL_FIELDS = tuple(field for field in FEBRL_FIELDS if field != "soc_sec_id")


def _string(n: int, bits: int, positional: bool = False, missing: bool = False) -> dict[str, Any]:
    hashing: dict[str, Any] = {
        "comparison": {"type": "ngram", "n": n, "positional": positional},
        "strategy": {"bitsPerFeature": bits},
    }
    if missing:
        hashing["missingValue"] = {"sentinel": ""}
    return {"format": {"type": "string", "encoding": "utf-8"}, "hashing": hashing}


def _integer(bits: int, missing: bool = True, **bounds: int) -> dict[str, Any]:
    hashing: dict[str, Any] = {
        "comparison": {"type": "ngram", "n": 1, "positional": True},
        "strategy": {"bitsPerFeature": bits},
    }
    if missing:
        hashing["missingValue"] = {"sentinel": ""}
    return {"format": {"type": "integer", **bounds}, "hashing": hashing}


NAME = _string(2, 200)
TEXT = _string(2, 100)  # other strings: an address, a postcode written with letters
# Per FEBRL field: format and hashing as in clkhash's FEBRL schema (v3).
ENCODINGS: dict[str, dict[str, Any]] = {
    "given_name": NAME,
    "surname": NAME,
    "street_number": _integer(100),
    "address_1": _string(2, 100),
    "address_2": _string(2, 100),
    "suburb": _string(2, 100),
    "postcode": _integer(100, missing=False, minimum=50, maximum=9999),
    "state": _string(2, 100, positional=True, missing=True),
    "date_of_birth": _integer(200),
    "soc_sec_id": _integer(200),
}


def linkage_schema(
    fields: Sequence[str], encodings: Mapping[str, dict[str, Any]] = ENCODINGS
) -> dict[str, Any]:
    """clkhash's linkage schema (version 3) for these columns, in this order; a column
    without an entry in `encodings` is hashed as a name."""
    return {
        "version": 3,
        "clkConfig": {
            "l": CLK_BITS,
            "kdf": {
                "type": "HKDF",
                "hash": "SHA256",
                "info": base64.b64encode(b"pprl peer").decode(),
                "salt": base64.b64encode(b"pprl peer benchmark salt, fixed").decode(),
                "keySize": 64,
            },
        },
        "features": [{"identifier": name, **encodings.get(name, NAME)} for name in fields],
    }


@dataclass(frozen=True)
class Records:
    path: Path
    ids: list[str]
    values: list[list[str]]  # one row of the chosen fields per record


def read_records(path: Path, fields: Sequence[str]) -> Records:
    """The id column and the chosen fields, as written (clkhash sees the raw strings)."""
    try:
        handle = path.open(newline="", encoding="utf-8")
    except FileNotFoundError:
        raise InputError("records file not found", path=str(path)) from None
    with handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        if "id" not in columns:
            raise InputError("needs an id column", path=str(path), row=1)
        for name in fields:
            if name not in columns:
                available = ", ".join(c for c in columns if c != "id")
                raise InputError(
                    f"no such column; the file has: {available}", path=str(path), field=name
                )
        ids, values = [], []
        try:
            for row in reader:
                ids.append(row["id"])
                values.append([row[name] or "" for name in fields])
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", path=str(path)) from None
    return Records(path, ids, values)


def encode(
    records: Records,
    fields: Sequence[str],
    workers: int | None,
    encodings: Mapping[str, dict[str, Any]] = ENCODINGS,
) -> list[Any]:
    """One CLK (a bitarray) per record."""
    clk = import_extra("clkhash.clk")
    schema_module = import_extra("clkhash.schema")
    schema = schema_module.from_json_dict(linkage_schema(fields, encodings))
    try:
        return list(clk.generate_clks(records.values, schema, SECRET, max_workers=workers))
    except ValueError as error:  # clkhash's EntryError and FormatError are ValueErrors
        raise InputError(f"clkhash refused a value: {error}", path=str(records.path)) from None


Candidates = tuple[Any, tuple[Any, Any], tuple[Any, Any]]
Pair = tuple[int, int]  # (row in A, row in B)


def candidates(clks_a: list[Any], clks_b: list[Any], threshold: float) -> Candidates:
    """anonlink's candidate pairs: Dice coefficient at least `threshold`, most similar first."""
    generation = import_extra("anonlink.candidate_generation")
    similarities = import_extra("anonlink.similarities")
    return generation.find_candidate_pairs(
        [clks_a, clks_b], similarities.dice_coefficient, threshold
    )


def all_candidates(clks_a: list[Any], clks_b: list[Any], threshold: float) -> Candidates:
    """The same candidates, straight from anonlink's Dice function.

    Without blocking, find_candidate_pairs calls the Dice function once and merges its output,
    already sorted by similarity then rows, pair by pair in Python: minutes for the millions of
    pairs a low threshold lets through on all fields. This skips the merge, not the order.
    """
    similarities = import_extra("anonlink.similarities")
    sims, (rows_a, rows_b) = similarities.dice_coefficient([clks_a, clks_b], threshold)
    datasets = (array.array("I", [0]) * len(sims), array.array("I", [1]) * len(sims))
    return sims, datasets, (rows_a, rows_b)


def solve(found: Candidates) -> list[Pair]:
    """anonlink's greedy solver: a one-to-one linkage of the candidates."""
    solving = import_extra("anonlink.solving")
    pairs = []
    for group in solving.greedy_solve(found):
        members = dict(group)  # {dataset: row}
        if len(members) == 2:
            pairs.append((members[0], members[1]))
    return pairs


def solve_all(found: Candidates) -> list[tuple[float, Pair]]:
    """The greedy linkage of all candidates, each link with its Dice coefficient.

    The solver takes the candidates most similar first and links a pair when neither record is
    linked yet, so a decision depends only on more similar pairs: the linkage at a higher
    threshold is this one's links that reach it. One solve serves the whole sweep.
    """
    sims, _, (rows_a, rows_b) = found
    links = solve(found)
    if not links:
        return []
    width = int(np.frombuffer(rows_b, dtype=np.uint32).max()) + 1
    keys = np.frombuffer(rows_a, dtype=np.uint32).astype(np.int64) * width + np.frombuffer(
        rows_b, dtype=np.uint32
    )
    wanted = np.array([i * width + j for i, j in links], dtype=np.int64)
    hit = np.isin(keys, wanted)
    similarity = dict(zip(keys[hit].tolist(), np.frombuffer(sims)[hit].tolist(), strict=True))
    return [(similarity[i * width + j], (i, j)) for i, j in links]


@dataclass(frozen=True)
class Point:
    threshold: float
    links: int
    quality: Quality

    def as_dict(self) -> dict[str, Any]:
        q = self.quality
        return {
            "threshold": self.threshold,
            "links": self.links,
            "precision": round(q.precision, 4),
            "recall": round(q.recall, 4),
            "f1": round(q.f1, 4),
            "true_positives": q.true_positives,
            "false_positives": q.false_positives,
            "false_negatives": q.false_negatives,
        }


@dataclass
class PeerResult:
    fields: list[str]
    records: tuple[int, int]
    truth_pairs: int
    sweep: list[Point]
    best: Point
    seconds: dict[str, float] = field(default_factory=dict)
    candidate_pairs: dict[str, int] = field(default_factory=dict)  # at the floor, at the best
    linked: frozenset[tuple[str, str]] = frozenset()  # the pairs at the best threshold

    def as_dict(self) -> dict[str, Any]:
        return {
            "fields": self.fields,
            "records_a": self.records[0],
            "records_b": self.records[1],
            "truth_pairs": self.truth_pairs,
            "clk_bits": CLK_BITS,
            "best": self.best.as_dict(),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "candidate_pairs": self.candidate_pairs,
            "sweep": [p.as_dict() for p in self.sweep],
        }


Log = Callable[[str], None]


def run_peer(
    records_a: Path,
    records_b: Path,
    truth: set[tuple[str, str]],
    fields: Sequence[str],
    thresholds: Sequence[float] = THRESHOLDS,
    workers: int | None = None,
    log: Log = lambda _: None,
    encodings: Mapping[str, dict[str, Any]] = ENCODINGS,
) -> PeerResult:
    """Encode both files (`encodings`: how clkhash hashes each column; FEBRL's by default),
    sweep the thresholds, and time the linkage at the best one."""
    if not fields:
        raise InputError("no fields to encode")
    if len(set(fields)) != len(fields):
        raise InputError(f"a field is named twice: {','.join(fields)}")
    if not thresholds or not all(0.0 < t <= 1.0 for t in thresholds):
        raise InputError("thresholds must lie in (0, 1]")
    a, b = read_records(records_a, fields), read_records(records_b, fields)
    seconds: dict[str, float] = {}

    start = time.perf_counter()
    clks_a, clks_b = (encode(r, fields, workers, encodings) for r in (a, b))
    seconds["encode"] = time.perf_counter() - start
    log(f"encoded {len(clks_a)} + {len(clks_b)} records in {seconds['encode']:.1f} s")

    start = time.perf_counter()
    floor = min(thresholds)
    found = all_candidates(clks_a, clks_b, floor)
    count = len(found[0])
    links = solve_all(found)
    del found
    sweep = []
    for threshold in sorted(thresholds):
        pairs = {(a.ids[i], b.ids[j]) for sim, (i, j) in links if sim >= threshold}
        sweep.append(Point(threshold, len(pairs), linkage_quality(pairs, truth)))
    seconds["sweep"] = time.perf_counter() - start
    log(f"{count} candidate pairs at {floor}; swept in {seconds['sweep']:.1f} s")
    # The best F1; of equals, the highest threshold (the fewest candidates).
    best = max(sweep, key=lambda p: (p.quality.f1, p.threshold))

    # The peer as its users run it, at that threshold: find_candidate_pairs, greedy_solve.
    start = time.perf_counter()
    at_best = candidates(clks_a, clks_b, best.threshold)
    seconds["candidates"] = time.perf_counter() - start
    start = time.perf_counter()
    linked = solve(at_best)
    seconds["solve"] = time.perf_counter() - start
    seconds["match"] = seconds["candidates"] + seconds["solve"]
    pairs = {(a.ids[i], b.ids[j]) for i, j in linked}
    if linkage_quality(pairs, truth) != best.quality:
        raise AssertionError(f"the sweep and the linkage at {best.threshold} disagree")
    return PeerResult(
        list(fields),
        (len(a.ids), len(b.ids)),
        len(truth),
        sweep,
        best,
        seconds=seconds,
        candidate_pairs={"floor": count, "best": len(at_best[0])},
        linked=frozenset(pairs),
    )


def peer_table(result: PeerResult, every: float = 0.05) -> str:
    """The sweep at every `every` of the threshold, and the best threshold's row marked."""
    step = round(every * 100)
    lines = [
        f"fields: {','.join(result.fields)}   records: {result.records[0]} x {result.records[1]}"
        f"   true pairs: {result.truth_pairs}",
        f"{'threshold':>10} {'links':>7} {'precision':>10} {'recall':>8} {'F1':>7}",
    ]
    for point in result.sweep:
        if point is not result.best and round(point.threshold * 100) % step:
            continue
        q = point.quality
        mark = "  <- best F1" if point is result.best else ""
        lines.append(
            f"{point.threshold:>10.2f} {point.links:>7} {q.precision:>10.4f} {q.recall:>8.4f}"
            f" {q.f1:>7.4f}{mark}"
        )
    s = result.seconds
    lines.append(
        f"time: encoding {s['encode']:.2f} s (both files), matching at the best threshold "
        f"{s['match']:.2f} s (candidates {s['candidates']:.2f} s, greedy solver "
        f"{s['solve']:.2f} s, {result.candidate_pairs['best']} candidate pairs); "
        f"the whole sweep {s['sweep']:.2f} s"
    )
    return "\n".join(lines)
