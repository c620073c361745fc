"""What a combined entry ("first+last") adds for an attacker: generated census-name records
released with the mapping first, last and first+last at each sigma, attacked by the gate
(its per-attribute attackers and, since 2026-11-26, its joint attacker: joint_attack) and by
an independent joint attacker written here, which takes each name's K likeliest candidates
(frequency-weighted, as the gate's prior attacker) and re-ranks every pair of them with the
combined entry's vector. The gate's figure must be at least this one's.

    python benchmarks/combined_entry_attack.py --size 150 --sigmas 2,3 --json out.json

A record counts for the joint attacker when both its names are the pair it picks; for the
gate, as the gate counts (every name within one edit). The dictionary is the census lists
cut to their commonest names and the records' own, for both attackers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from lab.result_file import write_result
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.gate import audit_rows
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.vectors.release import ProjectedRelease
from pprl.protocol.vectors.smashing import smash_values

MAPPING = [("first", "first"), ("last", "last"), ("first+last", "first+last")]
# Each census list cut to its commonest names (and the records' own), for both attackers.
KEPT = 6000


def _penalty(names: list[str], weights: dict[str, float]) -> np.ndarray:
    floor = min(weights.values())
    return np.array([-np.log(max(weights.get(n, floor), floor)) for n in names])


def measure(size: int, sigma: float, seed: int, top: int) -> dict[str, float]:
    reference = ReferenceSet("built-in", synthetic.default_reference(300))
    agreement = Agreement(reference, MAPPING, method_params(noise_sigma=sigma), None)
    people = synthetic.generate(size, seed).alice
    columns = {n: [getattr(p, n) for p in people] for n in ("first", "last")}
    tensor = agreement.smash(columns, np.random.default_rng(seed))
    census = synthetic.census_names()
    held = {*columns["first"], *columns["last"]}
    first_names = sorted(set(census.first.names[:KEPT]) | set(columns["first"]))
    last_names = sorted(set(census.last.names[:KEPT]) | set(columns["last"]))
    first_w = dict(zip(census.first.names, census.first.weights, strict=True))
    last_w = dict(zip(census.last.names, census.last.weights, strict=True))
    dictionary = census_dictionary(reference.columns, kept=KEPT, held=held)
    rows = np.arange(size)
    gate = audit_rows(agreement, Released(rows, tensor), rows, columns, dictionary)

    releases = [entry.release for entry in agreement.entries()]
    assert all(isinstance(r, ProjectedRelease) for r in releases), "a projected release"

    def coordinates(values: list[str], m: int) -> np.ndarray:
        column = agreement.reference.columns[MAPPING[m][1]]
        distances = smash_values(values, column, metric=agreement.metric)
        return releases[m].project(distances)  # type: ignore[union-attr]

    def released(m: int) -> np.ndarray:
        return releases[m].decode(tensor[:, m, :]).astype(np.float64)

    weight = 2 * releases[0].noise ** 2

    def scores(m: int, candidates: list[str], weights: dict[str, float]) -> np.ndarray:
        got, vectors = released(m), coordinates(candidates, m)
        squared = ((got[:, None, :] - vectors[None, :, :]) ** 2).sum(-1)
        return squared + weight * _penalty(candidates, weights)[None, :]

    first_scores = scores(0, first_names, first_w)
    last_scores = scores(1, last_names, last_w)
    best_first = np.argsort(first_scores, axis=1)[:, :top]
    best_last = np.argsort(last_scores, axis=1)[:, :top]
    combined = released(2)
    single = joint = 0
    for i in range(size):
        truth = (columns["first"][i], columns["last"][i])
        single += (first_names[best_first[i, 0]], last_names[best_last[i, 0]]) == truth
        pairs = [(a, b) for a in best_first[i] for b in best_last[i]]
        words = [" ".join(sorted((first_names[a], last_names[b]))) for a, b in pairs]
        vectors = coordinates(words, 2)
        total = ((combined[i][None, :] - vectors) ** 2).sum(-1)
        total += np.array([first_scores[i, a] + last_scores[i, b] for a, b in pairs])
        a, b = pairs[int(np.argmin(total))]
        joint += (first_names[a], last_names[b]) == truth
    return {
        "sigma": sigma,
        "gate_records": gate.record_reidentified,
        "gate_by_attack": gate.by_attack,
        "weighted_both_names": single / size,
        "joint_with_combined": joint / size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=150)
    parser.add_argument("--sigmas", default="2,3")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--top", type=int, default=10, help="candidates per name")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for sigma in (float(s) for s in args.sigmas.split(",")):
        row = measure(args.size, sigma, args.seed, args.top)
        rows.append(row)
        print(
            f"sigma {sigma:g}: gate {row['gate_records']:.3f} ({row['gate_by_attack']}; "
            f"frequency-weighted, both names {row['weighted_both_names']:.3f}); "
            f"independent joint attacker {row['joint_with_combined']:.3f}",
            flush=True,
        )
    if args.json:
        command = {k: (v.name if isinstance(v, Path) else v) for k, v in vars(args).items()}
        write_result(args.json, {"command": command, "rows": rows})


if __name__ == "__main__":
    main()
