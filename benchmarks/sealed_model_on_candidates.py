"""Which model links best on the pairs sealed linkage's keys join: measured in plaintext, on the
same candidates the daemons derive (the recipes' keys joined in the clear give the same pairs
as blinded), each party's scores scaled and bucketed by the agreed thresholds as under
encryption, one to one by the agreed assignment, the two parties' pairs intersected.

- linear: the model linear in the distances (sealed_kernel_features = 0, the default);
- caps: the method's capped model, scored exactly (not a linear form: no sealed scoring);
- kernel: the kernel model (classifier.kernelise), from its exact kernel and through each
  count of random features given (sealed_kernel_features), as the evaluator would compute.

It also reports how many true pairs the candidates hold: the ceiling of every model's recall.

    python benchmarks/sealed_model_on_candidates.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml --features 128 256 --json out.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import (
    add_table_arguments,
    released_units,
    run_command,
    sealed_inputs,
)
from lab.result_file import write_result
from pprl.protocol import own_training, pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.linkage.matching import Matches, one_to_one
from pprl.protocol.method import DEFAULT_SATURATION, method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model import classifier
from pprl.protocol.model.features import pair_features
from pprl.protocol.sealed import linear_form, session
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.recipes import parse_recipes
from pprl.protocol.sealed.shared_keys import shared_key_pairs
from pprl.protocol.vectors.randomness import TRAINING, Randomness

PARTIES = ("alice", "bob")


@dataclass(frozen=True)
class Sides:
    """Both parties' records, released vectors and draws under one agreement."""

    agreement: Agreement
    attributes: Mapping[str, Mapping[str, Sequence[str]]]
    units: dict[str, np.ndarray]
    randomness: dict[str, Randomness]

    def model(self, own: str) -> classifier.Model:
        return pipeline.train(self.agreement, self.attributes[own], self.randomness[own])[0]


# A score in bucket 1: above 0, below the agreed thresholds' second.
_BUCKET_ONE = session.thresholds(session.DEFAULT_THRESHOLDS)[1] / 2
# (sides, own party, peer party, own pairs: own row first) -> (scores, whether to bucket them)
Scorer = Callable[[Sides, str, str, np.ndarray], tuple[np.ndarray, bool]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--features", type=int, nargs="*", default=[128])
    parser.add_argument(
        "--representations",
        action="store_true",
        help="also the linear model one to one on exact scores: on the projected vectors, and "
        "on the distances to the whole reference set (what the representation is worth)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args)
    read, tables, truth, reference = inputs.read, inputs.tables, inputs.truth, inputs.reference
    recipes_text = inputs.recipes
    settings = {**read.method, "encoding": "sealed", "sealed_keys": recipes_text}
    thresholds = np.array(session.thresholds(session.DEFAULT_THRESHOLDS))
    rows = []

    def measured(label: str, agreement: Agreement, score: Scorer) -> None:
        digest = agreement.digest()
        randomness = {name: Randomness(args.seed, name) for name in PARTIES}
        released, units = released_units(agreement, tables, randomness)
        attributes = {name: table.attributes for name, table in tables.items()}
        sides = Sides(agreement, attributes, units, randomness)
        recipes = parse_recipes(recipes_text, list(tables["alice"].attributes))
        keys = {
            name: [
                [key.encode() for key in row]
                for row in session.row_keys(
                    recipes, table.attributes, released[name].order, first=name == "alice"
                )
            ]
            for name, table in tables.items()
        }
        pairs = shared_key_pairs(keys["alice"], keys["bob"])
        order = {name: released[name].order for name in PARTIES}

        def ids(found: set[tuple[int, int]]) -> set[tuple[str, str]]:
            a, b = tables["alice"].ids, tables["bob"].ids
            return {(a[order["alice"][r]], b[order["bob"][c]]) for r, c in found}

        held = len(ids({(int(r), int(c)) for r, c in pairs}) & set(truth))
        kept = {}
        for own, peer, own_pairs in (("alice", "bob", pairs), ("bob", "alice", pairs[:, ::-1])):
            scores, bucketed = score(sides, own, peer, own_pairs)
            if bucketed:
                buckets = (scores[:, None] > thresholds[None, :]).sum(axis=1)
                found = session.one_to_one(
                    own_pairs, buckets, own == "alice", digest, agreement.method.assignment
                )
            else:
                accepted = scores > 0
                chosen = Matches(own_pairs[accepted, 0], own_pairs[accepted, 1], scores[accepted])
                found = one_to_one(chosen, agreement.method.assignment)
            kept[own] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
        agreed = kept["alice"] & {(r, c) for c, r in kept["bob"]}
        q = linkage_quality(ids(agreed), truth)
        rows.append(
            {
                "model": label,
                "candidates": len(pairs),
                "true_pairs_in_candidates": held,
                "true_pairs": len(truth),
                "precision": q.precision,
                "recall": q.recall,
                "f1": q.f1,
            }
        )
        print(
            f"{label:<36} candidates {len(pairs):,} holding {held:,} of {len(truth):,} true "
            f"pairs  P {q.precision:.4f} R {q.recall:.4f} F1 {q.f1:.4f}",
            flush=True,
        )

    linear = _agreement(reference, read, settings, 0)
    measured("linear (the default)", linear, _sealed_scores)
    measured("caps (exact scores, not sealable)", linear, _capped_scores)
    if args.representations:
        measured("linear, exact scores", linear, _exact_linear_scores)
        whole = {
            **{k: v for k, v in read.method.items() if k != "sealed_keys"},
            "encoding": "reference",
            "feature": "cosine",
            "release": "distances",
            "saturation": 0.0,
        }
        measured(
            "linear, whole reference set, exact scores",
            Agreement(reference, read.mapping, method_params(**whole), read.kinds, read.scales),
            _exact_linear_scores,
        )
    for count in args.features:
        kernel = _agreement(reference, read, settings, count)
        if count == args.features[0]:
            measured("kernel (exact kernel)", kernel, _exact_scores)
        measured(f"kernel, {count} random features", kernel, _sealed_scores)
    if args.json:
        result = {"command": run_command(args), "rows": rows}
        write_result(args.json, result)


def _agreement(reference: Any, read: Any, settings: Mapping[str, Any], count: int) -> Agreement:
    method = method_params(**{**settings, "sealed_kernel_features": count})
    return Agreement(reference, read.mapping, method, read.kinds, read.scales)


def _scaled_parts(
    agreement: Agreement, model: classifier.Model, unit: np.ndarray
) -> tuple[linear_form.Peer, np.ndarray, np.ndarray, float]:
    """(the evaluator's plaintext, x, c, the factor) scaled as the daemon's MATCH scales them."""
    evaluator = evaluator_plaintext(agreement, model, agreement.digest())
    x, c = linear_form.scorer_part(model, unit, evaluator)
    own_y = linear_form.evaluator_part(unit, evaluator)
    factor = linear_form.score_scale(x, c, own_y, unit.shape[1])
    return evaluator, x * factor, c * factor, factor


def _sealed_scores(sides: Sides, own: str, peer: str, pairs: np.ndarray) -> tuple[np.ndarray, bool]:
    """The linear form's scores, as decrypted (without the CKKS error); with a movers' second
    form, a pair only it accepts is put in bucket 1, as MATCH counts it (scoring.BucketCount)."""
    model = sides.model(own)
    evaluator, x, c, _ = _scaled_parts(sides.agreement, model, sides.units[own])
    y = linear_form.evaluator_part(sides.units[peer], evaluator)
    scores = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    if model.kind == classifier.LENIENT:
        features = pair_features(sides.units[own][pairs[:, 0]], sides.units[peer][pairs[:, 1]])
        only_second = (scores <= 0) & (model.decision(features) > 0)
        scores[only_second] = _BUCKET_ONE
    return scores, True


def _exact_scores(sides: Sides, own: str, peer: str, pairs: np.ndarray) -> tuple[np.ndarray, bool]:
    """The kernel model's exact decisions, times the factor the daemon's scaling gives."""
    model = sides.model(own)
    factor = _scaled_parts(sides.agreement, model, sides.units[own])[3]
    features = pair_features(sides.units[own][pairs[:, 0]], sides.units[peer][pairs[:, 1]])
    return model.decision(features) * factor, True


def _exact_linear_scores(
    sides: Sides, own: str, peer: str, pairs: np.ndarray
) -> tuple[np.ndarray, bool]:
    """The model's exact decisions, one to one on them (no buckets, no CKKS)."""
    features = pair_features(sides.units[own][pairs[:, 0]], sides.units[peer][pairs[:, 1]])
    return sides.model(own).decision(features), False


def _capped_scores(sides: Sides, own: str, peer: str, pairs: np.ndarray) -> tuple[np.ndarray, bool]:
    """The capped model's exact decisions (one to one on scores: nothing to bucket)."""
    agreement = sides.agreement
    rng = sides.randomness[own].generator(TRAINING)
    sample = own_training.training_sample(agreement, sides.attributes[own], rng)
    x, y = own_training.training_pairs(agreement, sample, rng)
    method = agreement.method
    model = classifier.train(
        x, y, method.classifier, method.c, method.class_weight, DEFAULT_SATURATION
    )
    features = pair_features(sides.units[own][pairs[:, 0]], sides.units[peer][pairs[:, 1]])
    return model.decision(features), False


if __name__ == "__main__":
    main()
