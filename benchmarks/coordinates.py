"""What a coordinates attribute adds to names: generated registers linked in one process with
names only, names and a point, and the point only, at several tolerances.

    .venv/bin/python benchmarks/coordinates.py --size 2000 --tolerances 25 50 100 \\
        --out docs/research/results/coordinates.json

Alice's and Bob's names are the project's generated registers (pprl.bench.data.make_task:
census names, Bob's copies corrupted by `--errors`, the register mixture by default). Each
of Alice's people lives at a point uniform in `--box` (by default about 10 by 10 km over
Paris, so at 2,000 people the nearest neighbour is some 100 m away); Bob's copy of a person
has the point moved within the tolerance, uniform in the disc of that radius
(error_model.displaced), as a second GPS fix or a geocoder would; a person Alice lacks
(with `--overlap` below 1) gets a point of his own. The reference set is the built-in
held-out census names with a column of `--reference-rows` points drawn uniformly over the
same box by `pprl reference`'s generator, and the tolerance is the attribute's scale.

Both parties train on the agreed error model (`--method-errors`, registers by default, which
moves a point within the tolerance among its errors) and link as the daemons do
(pipeline.link_in_process); the figures are the agreed pairs' precision, recall and F1, and
the wall seconds of both parties' phases together. Names only does not depend on the
tolerance and runs once. `--encoding bloom` links the same registers on keyed Bloom filters
(the point windowed in its tolerance, pprl.protocol.vectors.bloom) instead of reference distances.

Last, what the peer learns of a point: without noise a released row is the point's distances
to the public reference points, rounded to whole tolerances. For `--trilaterate` of Alice's
points, the peer's best guess is the point whose rounded distances are nearest the released
ones (least squares on an 80 x 80 grid over the box, then on a grid a tenth as fine around
the best cell); the table gives how far the guesses lie from the true points.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from pprl.bench.data import make_task, read_reference
from pprl.files.atomic import write_text_atomic
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.canonical import point_of
from pprl.protocol.data.distances import haversine_metres
from pprl.protocol.data.error_model import MODEL_NAMES, displaced
from pprl.protocol.data.kinds import kind_distances, normalise_value
from pprl.protocol.data.reference import MappingEntry, ReferenceSet, default_mapping
from pprl.protocol.data.reference_builder import build_reference, parse_box, parse_column
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.vectors.bloom import BloomKey
from pprl.protocol.vectors.randomness import Randomness

POINT: MappingEntry = ("pos", "pos")
KINDS = {"pos": "coordinates"}
DEFAULT_BOX = "48.80,2.25:48.89,2.39"
HEADER = "| tolerance | attributes | precision | recall | F1 | seconds |\n|---|---|---|---|---|---|"


def _points(rng: np.random.Generator, box: tuple[str, str, str, str], n: int) -> list[str]:
    """Points uniform in latitude and longitude over the box, to 5 decimals (about a metre)."""
    south, west, north, east = (float(edge) for edge in box)
    latitudes = rng.uniform(south, north, n)
    longitudes = rng.uniform(west, east, n)
    return [
        normalise_value("coordinates", f"{a:.5f},{b:.5f}") or ""
        for a, b in zip(latitudes, longitudes, strict=True)
    ]


def registers(
    args: argparse.Namespace, tolerance: float
) -> tuple[dict[str, list[str]], dict[str, list[str]], set[tuple[int, int]]]:
    """Alice's and Bob's columns and the true (Alice row, Bob row) pairs: the same names at
    every tolerance, Bob's points within it of Alice's."""
    task = make_task(
        args.size,
        args.seed,
        error_model=args.errors,
        overlap=args.overlap,
        namesakes=args.namesakes,
    )
    rng = np.random.default_rng([args.seed, 15])
    box = parse_box(args.box)
    alice_points = _points(rng, box, args.size)
    bob_points = _points(rng, box, len(task.bob["first"]))  # people Alice lacks keep these
    moves = np.random.default_rng([args.seed, 15, round(tolerance * 1000)])
    for a, b in sorted(task.truth):
        bob_points[b] = displaced(alice_points[a], tolerance, moves)
    return {**task.alice, "pos": alice_points}, {**task.bob, "pos": bob_points}, task.truth


def reference(args: argparse.Namespace) -> ReferenceSet:
    names = read_reference(None, args.reference_rows)
    spec = parse_column(f"pos=coordinates:{args.box}")
    points = build_reference([spec], args.reference_rows, args.seed)
    return ReferenceSet("built-in", {**names, **points})


def link(
    args: argparse.Namespace,
    records: tuple[dict[str, list[str]], dict[str, list[str]], set[tuple[int, int]]],
    mapping: list[MappingEntry],
    tolerance: float | None,
) -> dict[str, Any]:
    alice, bob, truth = records
    scaled = tolerance is not None
    agreement = Agreement(
        reference(args),
        mapping,
        method_params(error_model=args.method_errors, encoding=args.encoding),
        KINDS if scaled else None,
        {"pos": tolerance} if scaled else None,
        bloom_key=BloomKey.generate() if args.encoding == "bloom" else None,
    )
    seeds = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
    began = time.perf_counter()
    linkage = pipeline.link_in_process(agreement, alice, bob, seeds)
    seconds = time.perf_counter() - began
    quality = linkage_quality(linkage.agreed, truth)
    return {
        "precision": round(quality.precision, 4),
        "recall": round(quality.recall, 4),
        "f1": round(quality.f1, 4),
        "seconds": round(seconds, 1),
    }


def _grid(south: float, west: float, north: float, east: float, steps: int) -> np.ndarray:
    latitudes, longitudes = np.linspace(south, north, steps), np.linspace(west, east, steps)
    return np.stack(np.meshgrid(latitudes, longitudes, indexing="ij"), axis=-1).reshape(-1, 2)


def trilateration_errors(args: argparse.Namespace, tolerance: float) -> list[float]:
    """Metres between each of `--trilaterate` of Alice's points and the peer's best guess
    from its released (noiseless) distances to the reference points."""
    alice = registers(args, tolerance)[0]["pos"][: args.trilaterate]
    column = reference(args).columns["pos"]
    known = np.array([point_of(value) for value in column])
    released = kind_distances(alice, column, "coordinates", scale=tolerance).astype(np.float64)
    south, west, north, east = (float(edge) for edge in parse_box(args.box))
    coarse = _grid(south, west, north, east, 80)
    cell = np.array([(north - south) / 79, (east - west) / 79])

    def best(candidates: np.ndarray, row: np.ndarray) -> np.ndarray:
        metres = haversine_metres(
            candidates[:, 0, None], candidates[:, 1, None], known[None, :, 0], known[None, :, 1]
        )
        rounded = np.minimum(np.rint(metres / tolerance), 254)
        return candidates[np.argmin(((rounded - row) ** 2).sum(axis=1))]

    errors = []
    for point, row in zip(alice, released, strict=True):
        guess = best(coarse, row)
        low, high = guess - 2 * cell, guess + 2 * cell
        guess = best(_grid(low[0], low[1], high[0], high[1], 41), row)
        errors.append(float(haversine_metres(*point_of(point), guess[0], guess[1])))
    return errors


def table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER]
    for row in rows:
        tolerance = "-" if row["tolerance"] is None else f"{row['tolerance']:g} m"
        lines.append(
            f"| {tolerance} | {row['attributes']} | {row['precision']:.3f} | {row['recall']:.3f} "
            f"| {row['f1']:.3f} | {row['seconds']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000, help="records a side")
    parser.add_argument("--tolerances", type=float, nargs="+", default=[25.0, 50.0, 100.0])
    parser.add_argument("--box", default=DEFAULT_BOX, help="LAT1,LON1:LAT2,LON2")
    parser.add_argument("--errors", choices=MODEL_NAMES, default="registers")
    parser.add_argument("--method-errors", choices=MODEL_NAMES, default="registers")
    parser.add_argument("--overlap", type=float, default=1.0)
    parser.add_argument("--namesakes", type=float, default=0.0)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--encoding", choices=["reference", "bloom"], default="reference")
    parser.add_argument(
        "--trilaterate", type=int, default=20, help="points the peer locates (0: none)"
    )
    parser.add_argument("--out", type=Path, help="write the rows and settings here (JSON)")
    args = parser.parse_args(argv)
    names = list(default_mapping(args.method_errors))
    rows: list[dict[str, Any]] = []

    def run(label: str, mapping: list[MappingEntry], tolerance: float | None) -> None:
        records = registers(args, tolerance or args.tolerances[0])
        rows.append(
            {"tolerance": tolerance, "attributes": label, **link(args, records, mapping, tolerance)}
        )
        print(table(rows[-1:]).splitlines()[-1], flush=True)

    print(HEADER)
    run("names", names, None)
    for tolerance in args.tolerances:
        run("names + coordinates", [*names, POINT], tolerance)
        run("coordinates", [POINT], tolerance)
    located: dict[str, dict[str, float]] = {}
    if args.trilaterate:
        print("\n| tolerance | points | peer's guess off by: median m | max m |\n|---|---|---|---|")
        for tolerance in args.tolerances:
            errors = trilateration_errors(args, tolerance)
            median, most = float(np.median(errors)), max(errors)
            located[f"{tolerance:g}"] = {"median_m": round(median, 1), "max_m": round(most, 1)}
            print(f"| {tolerance:g} m | {len(errors)} | {median:.1f} | {most:.1f} |", flush=True)
    if args.out:
        settings = {k: v for k, v in vars(args).items() if k != "out"}
        result = {
            "settings": settings,
            "machine": {
                "cores": len(os.sched_getaffinity(0)),
                "python": platform.python_version(),
            },
            "rows": rows,
            "trilateration": located,
        }
        write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
