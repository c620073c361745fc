"""What encrypted scoring must reveal for the linkage to stay as good: measured in plaintext.

Sealed scoring can give a party as little as its own classifier's sign on each candidate
pair, or more: which of several score thresholds each pair's score passes (its bucket). This
runs the method with no noise and the gate off (projected release, so the vectors are the
sealed mode's), keeps every pair each party's classifier accepts (scoring all pairs, as
candidates that lose none would), and links as a party could from what it would learn:

- the pipeline: best `top_k` per row by score, then the agreed one-to-one (today's default);
- both accept: every pair both classifiers accept (signs only, no one-to-one);
- both accept, conflicts dropped: of those, the pairs whose rows are in no other;
- greedy on own scores: each party one-to-one by its own exact scores, intersected;
- greedy on buckets: the same with only the bucket of each score among T thresholds
  (ties in random order), for several T.

    python benchmarks/sealed_decisions.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --json out.json
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import add_table_arguments, run_command, schema_tables, sealed_agreement
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.linkage import candidates, matching
from pprl.protocol.linkage.matching import Matches, greedy_one_to_one
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.vectors.randomness import Randomness

Pair = tuple[int, int]
# Threshold sets: the sign alone, then finer buckets over the scores' usual range (0 to ~25).
THRESHOLDS = {
    2: [0.0, 2.0],
    5: [0.0, 1.0, 2.0, 4.0, 8.0],
    11: [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0],
    33: [float(t) for t in np.linspace(0.0, 16.0, 33)],
}


def accepted_scores(
    agreement: Agreement, own: pipeline.PartyLinkage, peer: pipeline.PartyLinkage
) -> dict[Pair, float]:
    """Every pair the party's classifier accepts, (own record, peer record) -> score."""
    selection = matching.Selection(own.model, top_k=None)
    found = candidates.accepted_pairs(
        own.released.tensor, peer.released.tensor, selection, standardise=agreement.standardise
    ).matches
    own_order, peer_order = own.released.order, peer.released.order
    return {
        (int(own_order[a]), int(peer_order[b])): float(s)
        for a, b, s in zip(found.rows_a, found.rows_b, found.scores, strict=True)
    }


def greedy(scores: dict[Pair, float]) -> set[Pair]:
    """One-to-one, best score first: the method's greedy step."""
    pairs = np.array(list(scores), dtype=np.int64).reshape(-1, 2)
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    kept = greedy_one_to_one(Matches(pairs[:, 0], pairs[:, 1], values))
    return set(zip(kept.rows_a.tolist(), kept.rows_b.tolist(), strict=True))


def bucketed(scores: dict[Pair, float], edges: list[float], seed: int) -> dict[Pair, float]:
    """Each score replaced by how many thresholds it passes; ties broken at random."""
    rng = random.Random(seed)
    return {
        pair: float(np.searchsorted(edges, score, side="right")) + 1e-3 * rng.random()
        for pair, score in scores.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    alice, bob = read.tables
    truth = read_truth(args.truth)
    agreement = sealed_agreement(read, load_reference(args.reference), caps=True)
    randomness = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
    linkage = pipeline.link_in_process(agreement, alice.attributes, bob.attributes, randomness)
    rows: list[dict[str, Any]] = []

    def report(rule: str, pairs: Iterable[Pair]) -> None:
        found = {(alice.ids[a], bob.ids[b]) for a, b in pairs}
        quality = linkage_quality(found, truth)
        rows.append(
            {
                "rule": rule,
                "precision": quality.precision,
                "recall": quality.recall,
                "f1": quality.f1,
                "pairs": len(found),
            }
        )
        print(f"{rule:<45} P {quality.precision:.4f} R {quality.recall:.4f} F1 {quality.f1:.4f}")

    def flipped(pairs: Iterable[Pair]) -> set[Pair]:
        return {(b, a) for a, b in pairs}

    report("pipeline (top_k, agreed one-to-one)", linkage.agreed)
    scores_a = accepted_scores(agreement, linkage.alice, linkage.bob)
    scores_b = accepted_scores(agreement, linkage.bob, linkage.alice)
    both = set(scores_a) & flipped(scores_b)
    report("both accept (signs only)", both)
    rows_a = Counter(a for a, _ in both)
    rows_b = Counter(b for _, b in both)
    report("both accept, conflicts dropped", {p for p in both if rows_a[p[0]] == rows_b[p[1]] == 1})
    report("greedy on own scores, intersected", greedy(scores_a) & flipped(greedy(scores_b)))
    for count, edges in THRESHOLDS.items():
        kept_a = greedy(bucketed(scores_a, edges, 1))
        kept_b = greedy(bucketed(scores_b, edges, 2))
        report(f"greedy on {count}-threshold buckets, intersected", kept_a & flipped(kept_b))
    if args.json:
        result = {"command": run_command(args), "rows": rows}
        write_result(args.json, result)


if __name__ == "__main__":
    main()
