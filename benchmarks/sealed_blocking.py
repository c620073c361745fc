"""Candidate keys for sealed linkage, measured before any of it is built: which blocking keys a
party could blind and exchange keep the pairs its classifier would accept.

Each party projects its records' distance vectors to the reference set onto the set's leading
components (what the projected release sends, here without noise) and cuts them with random
hyperplanes both parties derive from the agreement (SimHash): `bands` keys of `bits` signs per
mapping entry, and the same over all entries together. Two records are candidates when they
share a key. Measured against the pairs the same method accepts when it scores every pair
(no noise, gate off: the sealed mode's target) and against the truth; "kept" is the share of
all pairs that are candidates (what scoring under encryption would cost).

    python benchmarks/sealed_blocking.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --bits 8,12 --bands 8,16 --json out.json
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import add_table_arguments, run_command, schema_tables
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import with_combined
from pprl.protocol.method import method_params
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.vectors.randomness import Randomness
from pprl.protocol.vectors.release import ProjectedRelease
from pprl.protocol.vectors.smashing import smash


def projected(agreement: Agreement, columns: dict[str, Any]) -> list[np.ndarray]:
    """Per mapping entry, (n, k) projected coordinates, NaN rows for missing values: the
    entry's own distance (its kind's, with its scale) to the reference values, projected
    without noise."""
    attributes = with_combined(columns, [a for a, _ in agreement.mapping])
    exact = [replace(entry, release=None) for entry in agreement.entries()]
    raw = smash(attributes, agreement.reference.columns, exact, agreement.method.clamp)
    out = []
    for m, release in enumerate(agreement.releases):
        assert isinstance(release, ProjectedRelease)
        coordinates = release.project(raw[:, m, :])
        coordinates[raw[:, m, 0] == MISSING_CODE] = np.nan
        out.append(coordinates)
    return out


def signs(coordinates: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """(n, planes) booleans; a missing row gets no key (all False and flagged by the caller)."""
    return np.nan_to_num(coordinates) @ planes > 0


def band_keys(bits: np.ndarray, width: int, present: np.ndarray) -> list[np.ndarray]:
    """Per band, each row's key as an integer, -1 where the value is missing."""
    weights = 1 << np.arange(width, dtype=np.int64)
    keys = []
    for start in range(0, bits.shape[1], width):
        key = bits[:, start : start + width].astype(np.int64) @ weights
        keys.append(np.where(present, key, -1))
    return keys


def candidate_codes(keys_a: list[np.ndarray], keys_b: list[np.ndarray], n_b: int) -> np.ndarray:
    """Sorted unique a * n_b + b of every pair sharing at least one key."""
    found = []
    for key_a, key_b in zip(keys_a, keys_b, strict=True):
        order_b = np.argsort(key_b, kind="stable")
        sorted_b = key_b[order_b]
        for value in np.unique(key_a[key_a >= 0]):
            rows_a = np.flatnonzero(key_a == value)
            lo, hi = np.searchsorted(sorted_b, [value, value + 1])
            if hi > lo:
                rows_b = order_b[lo:hi]
                found.append((rows_a[:, None] * n_b + rows_b[None, :]).ravel())
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _tagged(keys: np.ndarray, entry: int, band: int) -> np.ndarray:
    """Keys of one entry's one band, made distinct from every other band's (-1 stays -1)."""
    return np.where(keys >= 0, keys + ((entry * 1024 + band) << 32), -1)


def completeness(codes: np.ndarray, pairs: set[tuple[int, int]], n_b: int) -> float:
    wanted = np.array([a * n_b + b for a, b in pairs], dtype=np.int64)
    return float(np.isin(wanted, codes).mean()) if len(wanted) else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--bits", default="8,12", help="signs per key, comma-separated")
    parser.add_argument("--bands", default="8,16", help="keys per entry, comma-separated")
    parser.add_argument(
        "--skip", default="", help="attributes that get no keys of their own (a category)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    alice, bob = read.tables
    reference = load_reference(args.reference)
    truth_ids = read_truth(args.truth)
    row_a = {record_id: i for i, record_id in enumerate(alice.ids)}
    row_b = {record_id: i for i, record_id in enumerate(bob.ids)}
    truth = {(row_a[a], row_b[b]) for a, b in truth_ids if a in row_a and b in row_b}
    n_a, n_b = len(alice.ids), len(bob.ids)

    # The sealed mode's target: what the method accepts scoring every pair, no noise.
    exact = Agreement(
        reference, read.mapping, method_params(**read.method), read.kinds, read.scales
    )
    seeds = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
    linkage = pipeline.link_in_process(exact, alice.attributes, bob.attributes, seeds)
    accepted = linkage.agreed
    # The projection both parties share (the projected release's components, without noise).
    grid = Agreement(
        reference,
        read.mapping,
        method_params(**{**read.method, "noise_sigma": 1.0}),
        read.kinds,
        read.scales,
    )
    began = time.perf_counter()
    coords_a, coords_b = projected(grid, alice.attributes), projected(grid, bob.attributes)
    project_seconds = time.perf_counter() - began
    rng = np.random.default_rng(args.seed)
    results: dict[str, Any] = {
        "command": run_command(args),
        "records": [n_a, n_b],
        "accepted_all_pairs_scored": len(accepted),
        "true_pairs": len(truth),
        "project_seconds": round(project_seconds, 1),
        "rows": [],
    }
    print(f"{n_a} x {n_b}; the method accepts {len(accepted)} pairs scoring all; {len(truth)} true")
    for width in [int(b) for b in args.bits.split(",")]:
        for bands in [int(b) for b in args.bands.split(",")]:
            keys_a: list[np.ndarray] = []
            keys_b: list[np.ndarray] = []
            per_entry = []
            skipped = set(filter(None, args.skip.split(",")))
            own = [m for m, (a, _) in enumerate(grid.mapping) if a not in skipped]
            entries: list[int | str] = [*own, "all"]
            for number, entry in enumerate(entries):
                if entry == "all":
                    a = np.concatenate([np.nan_to_num(c) for c in coords_a], axis=1)
                    b = np.concatenate([np.nan_to_num(c) for c in coords_b], axis=1)
                    present_a, present_b = np.ones(n_a, bool), np.ones(n_b, bool)
                else:
                    a, b = coords_a[entry], coords_b[entry]
                    present_a, present_b = ~np.isnan(a[:, 0]), ~np.isnan(b[:, 0])
                planes = rng.standard_normal((a.shape[1], width * bands))
                entry_a = band_keys(signs(a, planes), width, present_a)
                entry_b = band_keys(signs(b, planes), width, present_b)
                # Keys of different entries and bands never match each other.
                entry_a = [_tagged(k, number, i) for i, k in enumerate(entry_a)]
                entry_b = [_tagged(k, number, i) for i, k in enumerate(entry_b)]
                codes = candidate_codes(entry_a, entry_b, n_b)
                label = "all entries" if entry == "all" else "->".join(grid.mapping[entry])
                per_entry.append(
                    {
                        "entry": label,
                        "kept": len(codes) / (n_a * n_b),
                        "accepted_kept": completeness(codes, accepted, n_b),
                        "true_kept": completeness(codes, truth, n_b),
                    }
                )
                keys_a += entry_a
                keys_b += entry_b
            began = time.perf_counter()
            codes = candidate_codes(keys_a, keys_b, n_b)
            row = {
                "bits": width,
                "bands": bands,
                "keys_per_record": len(keys_a),
                "kept": len(codes) / (n_a * n_b),
                "accepted_kept": completeness(codes, accepted, n_b),
                "true_kept": completeness(codes, truth, n_b),
                "candidate_seconds": round(time.perf_counter() - began, 1),
                "entries": per_entry,
            }
            results["rows"].append(row)
            print(
                f"bits {width:>2} bands {bands:>2} ({len(keys_a)} keys a record): kept "
                f"{100 * row['kept']:.3f}% of pairs, {100 * row['accepted_kept']:.2f}% of the "
                f"accepted, {100 * row['true_kept']:.2f}% of the true; per entry "
                + ", ".join(
                    f"{e['entry']} {100 * e['kept']:.3f}%/{100 * e['accepted_kept']:.1f}%"
                    for e in per_entry
                ),
                flush=True,
            )
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
