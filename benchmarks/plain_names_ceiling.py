"""What names alone allow without any privacy: two record files linked in plaintext by
Jaro-Winkler similarity, one-to-one (greedily, or the links of largest total similarity),
at the threshold the truth says is best.

    python benchmarks/plain_names_ceiling.py --records-a A.csv --records-b B.csv \
        --truth T.csv --fields given_name,surname [--assignment optimal-one-to-one]

A pair's score is the larger of the fields' summed similarities as written and with the
first two fields exchanged (a swap); a blank on either side scores 0.5 for its field. No
privacy-preserving method sees more than these strings, so its F1 is a yardstick for the
method's (docs/research/results.md), not a bound on it: frequencies of values are not used here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from pprl.files.records import load_records
from pprl.party.local import read_truth
from pprl.protocol.linkage.matching import ASSIGNMENTS, GREEDY, Matches, one_to_one

# Scores below this (out of one per field) are never links; it only bounds the greedy walk.
_FLOOR_PER_FIELD = 0.6
_BLANK = 0.5


def _columns(path: Path, fields: list[str]) -> tuple[list[str], list[list[str]]]:
    """Ids and the fields' values, normalised as the method normalises names."""
    table = load_records(path, "id", fields)
    return list(table.ids), [list(table.attributes[field]) for field in fields]


def _similarity(a: list[str], b: list[str]) -> np.ndarray:
    scores = process.cdist(a, b, scorer=JaroWinkler.normalized_similarity, dtype=np.float32)
    blank = np.array([not v for v in a])[:, None] | np.array([not v for v in b])[None, :]
    scores[blank] = _BLANK
    return scores


def best_threshold_f1(
    scores: np.ndarray,
    ids_a: list[str],
    ids_b: list[str],
    truth: set[tuple[str, str]],
    floor: float,
) -> tuple[float, float, float, float]:
    """(threshold, precision, recall, F1) of greedy one-to-one links at the best threshold."""
    rows, cols = np.nonzero(scores >= floor)
    # one_to_one keeps its links in the order it took them: best score first.
    links = one_to_one(Matches(rows, cols, scores[rows, cols]))
    link_scores = links.scores
    pairs = zip(links.rows_a.tolist(), links.rows_b.tolist(), strict=True)
    correct = np.cumsum([(ids_a[a], ids_b[b]) in truth for a, b in pairs])
    best = (floor, 0.0, 0.0, 0.0)
    for k in range(1, len(link_scores) + 1):
        if k < len(link_scores) and link_scores[k] == link_scores[k - 1]:
            continue  # a threshold keeps all links of equal score
        precision, recall = correct[k - 1] / k, correct[k - 1] / len(truth)
        f1 = 2 * precision * recall / (precision + recall) if correct[k - 1] else 0.0
        if f1 > best[3]:
            best = (float(link_scores[k - 1]), float(precision), float(recall), float(f1))
    return best


def best_threshold_f1_optimal(
    scores: np.ndarray,
    ids_a: list[str],
    ids_b: list[str],
    truth: set[tuple[str, str]],
    floor: float,
    steps: int = 24,
) -> tuple[float, float, float, float]:
    """The same for the optimal assignment, which changes with the threshold: one solve per
    threshold on a grid from `floor` to the top score."""
    rows, cols = np.nonzero(scores >= floor)
    values = scores[rows, cols]
    best = (floor, 0.0, 0.0, 0.0)
    for threshold in np.linspace(floor, float(values.max()), steps, endpoint=False):
        keep = values >= threshold
        links = one_to_one(Matches(rows[keep], cols[keep], values[keep]), "optimal-one-to-one")
        pairs = zip(links.rows_a.tolist(), links.rows_b.tolist(), strict=True)
        correct = sum((ids_a[a], ids_b[b]) in truth for a, b in pairs)
        if not correct:
            continue
        precision, recall = correct / len(links), correct / len(truth)
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best[3]:
            best = (float(threshold), float(precision), float(recall), float(f1))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records-a", type=Path, required=True)
    parser.add_argument("--records-b", type=Path, required=True)
    parser.add_argument("--truth", type=Path, required=True)
    parser.add_argument("--fields", required=True, help="comma list of name fields")
    parser.add_argument("--assignment", choices=ASSIGNMENTS, default=GREEDY)
    args = parser.parse_args()
    fields = args.fields.split(",")
    ids_a, columns_a = _columns(args.records_a, fields)
    ids_b, columns_b = _columns(args.records_b, fields)
    scores = sum(_similarity(a, b) for a, b in zip(columns_a, columns_b, strict=True))
    if len(fields) >= 2:
        swapped = _similarity(columns_a[0], columns_b[1]) + _similarity(columns_a[1], columns_b[0])
        swapped += sum(_similarity(a, b) for a, b in zip(columns_a[2:], columns_b[2:], strict=True))
        scores = np.maximum(scores, swapped)
    truth = read_truth(args.truth)
    best = best_threshold_f1 if args.assignment == GREEDY else best_threshold_f1_optimal
    threshold, precision, recall, f1 = best(
        np.asarray(scores), ids_a, ids_b, truth, _FLOOR_PER_FIELD * len(fields)
    )
    print(
        f"best threshold {threshold:.3f}: precision {precision:.4f} recall {recall:.4f} "
        f"F1 {f1:.4f} ({len(truth):,} true pairs)"
    )


if __name__ == "__main__":
    main()
