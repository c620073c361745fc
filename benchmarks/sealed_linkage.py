"""Sealed linkage end to end in one process, from the parts built so far (docs/research/sealed.md):
blocking keys from each party's unit vectors, blinded and joined; each party's classifier
scored under CKKS on the candidate pairs; a pair linked when both classifiers accept it (the
signs alone, no one-to-one step yet). Measured against the truth and against the plaintext
pipeline at the same configuration (no noise, gate off, the projected vectors, a model without
caps) and at the method's defaults for the schema.

    python benchmarks/sealed_linkage.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --keyed suburb,postcode --json out.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import add_table_arguments, run_command, schema_tables, sealed_agreement
from lab.result_file import write_result
from lab.sealed_round_trip import round_trip
from lab.simhash_keys import KeySetting, row_keys
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.linkage.matching import Matches, greedy_one_to_one
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.sealed import linear_form, scoring, session
from pprl.protocol.sealed.blinding import Blinder
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.layout import best_rounds, layout
from pprl.protocol.sealed.recipes import parse_recipes, recipe_keys
from pprl.protocol.sealed.shared_keys import shared_key_pairs
from pprl.protocol.vectors.randomness import Randomness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument(
        "--keyed", default="", help="attributes keyed alone (default: every one; 'none')"
    )
    parser.add_argument(
        "--combine", default="", help="groups keyed together, e.g. 'dob+surname,dob+postcode'"
    )
    parser.add_argument(
        "--recipes",
        default="",
        help="plaintext key recipes instead of vector keys, e.g. 'ssid,dob+surname:soundex'",
    )
    parser.add_argument(
        "--keys-only", action="store_true", help="stop after the candidates (no scoring)"
    )
    parser.add_argument(
        "--thresholds",
        default="0",
        help="scores each pair is compared with, from 0 up; more than one orders the "
        "one-to-one step by bucket",
    )
    parser.add_argument("--bits", type=int, default=32)
    parser.add_argument("--bands", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    alice, bob = read.tables
    truth = read_truth(args.truth)
    reference = load_reference(args.reference)
    randomness = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
    results: dict[str, Any] = {"rows": []}

    def quality(label: str, pairs: set[tuple[int, int]], **extra: Any) -> None:
        found = {(alice.ids[a], bob.ids[b]) for a, b in pairs}
        q = linkage_quality(found, truth)
        results["rows"].append(
            {"rule": label, "precision": q.precision, "recall": q.recall, "f1": q.f1} | extra
        )
        print(f"{label:<52} P {q.precision:.4f} R {q.recall:.4f} F1 {q.f1:.4f}", flush=True)

    default = Agreement(
        reference, read.mapping, method_params(**read.method), read.kinds, read.scales
    )
    plain = pipeline.link_in_process(default, alice.attributes, bob.attributes, randomness)
    quality("plaintext pipeline, the schema's defaults, no noise", plain.agreed)
    agreement = sealed_agreement(read, reference, caps=False)
    linkage = pipeline.link_in_process(agreement, alice.attributes, bob.attributes, randomness)
    quality("plaintext pipeline, the sealed configuration", linkage.agreed)

    sides = {"alice": linkage.alice, "bob": linkage.bob}
    units = {
        name: unit_vectors(side.released.tensor, agreement.standardise)
        for name, side in sides.items()
    }
    keyed = {a for a in args.keyed.split(",") if a}
    entries = tuple(m for m, (a, _) in enumerate(agreement.mapping) if not keyed or a in keyed)
    entry_of = {a: m for m, (a, _) in enumerate(agreement.mapping)}
    combinations = tuple(
        tuple(entry_of[a] for a in group.split("+")) for group in args.combine.split(",") if group
    )
    setting = KeySetting(args.bits, args.bands, entries, combinations=combinations)
    seed = agreement.digest().encode()
    context = seed + b"|benchmark run"
    times: dict[str, float] = {}

    began = time.perf_counter()
    blinders = {name: Blinder() for name in sides}
    if args.recipes:
        recipes = parse_recipes(args.recipes, list(alice.attributes))
        tables = {"alice": alice.attributes, "bob": bob.attributes}
        keys = {
            name: recipe_keys(
                {a: [v[i] for i in side.released.order] for a, v in tables[name].items()},
                recipes,
                first=name == "alice",
            )
            for name, side in sides.items()
        }
    else:
        keys = {name: row_keys(units[name], setting, seed) for name in sides}
    once = {name: session.blinded_rows(blinders[name], context, keys[name]) for name in sides}

    def reblinded(name: str, by: str) -> list[list[bytes]]:
        """`name`'s keys blinded again by `by`, as each party's BlindKeys does."""
        counts, values = once[name]
        return session.grouped(counts, session.reblinded(blinders[by], values, f"{name}'s keys"))

    twice_alice, twice_bob = reblinded("alice", "bob"), reblinded("bob", "alice")
    pairs = shared_key_pairs(twice_alice, twice_bob)  # (Alice row, Bob row)
    times["keys"] = time.perf_counter() - began
    n_a, n_b = len(units["alice"]), len(units["bob"])
    kept = len(pairs) / (n_a * n_b)
    order_a, order_b = linkage.alice.released.order, linkage.bob.released.order
    row_a, row_b = np.argsort(order_a), np.argsort(order_b)  # record -> tensor row
    agreed_rows = {(int(row_a[a]), int(row_b[b])) for a, b in linkage.agreed}
    candidate_set = {(int(a), int(b)) for a, b in pairs}
    print(
        f"candidates: {len(pairs):,} pairs ({100 * kept:.3f}% of all), "
        f"{100 * len(agreed_rows & candidate_set) / max(len(agreed_rows), 1):.2f}% of the "
        f"plaintext agreed pairs; keys {times['keys']:.1f} s",
        flush=True,
    )

    results["candidates"] = {
        "pairs": len(pairs),
        "kept": kept,
        "agreed_kept": len(agreed_rows & candidate_set) / max(len(agreed_rows), 1),
        "seconds": times["keys"],
    }
    if args.keys_only:
        if args.json:
            write(args, results)
        return
    thresholds = tuple(float(t) for t in args.thresholds.split(","))
    ckks = scoring.CkksSetting(thresholds=thresholds)
    rng = np.random.default_rng(args.seed)
    decisions = {}
    sent = 0
    began = time.perf_counter()
    for name, peer, own_pairs in (
        ("alice", "bob", pairs),
        ("bob", "alice", pairs[:, ::-1]),
    ):
        model = sides[name].model
        evaluator = evaluator_plaintext(agreement, model, agreement.digest())
        x, c = linear_form.scorer_part(model, units[name], evaluator)
        y = linear_form.evaluator_part(units[peer], evaluator)
        placed = layout(own_pairs, ckks.slots, best_rounds(own_pairs, ckks.slots))
        keys = scoring.secret_keys(ckks)
        live = evaluator.live(*units[name].shape[1:])
        run = round_trip(keys, x, c, y, placed, rng, live=live)
        decisions[name] = scoring.buckets(keys, run.returned, placed, len(own_pairs))
        sent += run.bytes_sent + run.bytes_returned
    times["scoring"] = time.perf_counter() - began
    if len(thresholds) == 1:
        chosen = (decisions["alice"] > 0) & (decisions["bob"] > 0)
        rule = "sealed: CKKS signs, both accept"
    else:
        tie = np.random.default_rng(args.seed).random(len(pairs))
        chosen = greedy(pairs, decisions["alice"], tie) & greedy(
            pairs[:, ::-1], decisions["bob"], tie
        )
        rule = f"sealed: buckets among {len(thresholds)} thresholds, greedy, intersected"
    both = pairs[chosen]
    linked = {(int(order_a[a]), int(order_b[b])) for a, b in both}
    quality(
        rule,
        linked,
        candidates=len(pairs),
        kept=kept,
        seconds=times,
        bytes_both_directions=sent,
    )
    print(f"scoring both classifiers {times['scoring']:.1f} s, {sent / 1e6:.0f} MB in all")
    if args.json:
        write(args, results)


def greedy(pairs: np.ndarray, bucket: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """(pairs,) booleans: the method's greedy one-to-one over the accepted pairs (bucket > 0),
    highest bucket first, ties in a random order (`tie`, in [0, 1)) both parties could agree on."""
    accepted = np.flatnonzero(bucket > 0)
    order = bucket[accepted] - 1e-3 * tie[accepted]
    kept = greedy_one_to_one(Matches(pairs[accepted, 0], pairs[accepted, 1], order))
    width = int(pairs[:, 1].max()) + 1 if len(pairs) else 1
    return np.isin(pairs[:, 0] * width + pairs[:, 1], kept.rows_a * width + kept.rows_b)


def write(args: argparse.Namespace, results: dict[str, Any]) -> None:
    results["command"] = run_command(args)
    write_result(args.json, results)


if __name__ == "__main__":
    main()
