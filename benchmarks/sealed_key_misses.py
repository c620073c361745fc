"""Which true pairs the blocking keys miss, and why: for every true pair that shares no key,
how each attribute differs (the same, within two edits, replaced by another value, or blank
on a side), and whether the attributes are swapped. What sealed linkage cannot link by
design shows here: a pair whose only evidence is one attribute exact would need a key on that
attribute alone, the key whose join gives the most away (docs/research/sealed.md).

    python benchmarks/sealed_key_misses.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--recipes R] [--plain] \\
        [--per-recipe] --json out.json

With `--per-recipe` it also reports, for each recipe alone and for all together, the true
pairs it joins, the pairs the plain release links that it joins (with `--plain`), and the
candidate pairs it makes with their share of all pairs (what scoring them would cost): the
issue asks for completeness and the share of pairs kept per key and together.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein

from lab.in_process import (
    SealedInputs,
    add_table_arguments,
    link_tables,
    noise_free_units,
    plain_agreement,
    run_command,
    sealed_inputs,
)
from lab.result_file import write_result
from pprl.protocol import pipeline
from pprl.protocol.linkage import matching
from pprl.protocol.model.features import pair_features
from pprl.protocol.sealed.recipes import Recipe, fallback_key, recipe_keys
from pprl.protocol.sealed.shared_keys import shared_key_pairs
from pprl.protocol.vectors.randomness import Randomness

# At most this many edits between two values of an attribute count as a typo, more as a
# replaced value.
NEAR_EDITS = 2

Pair = tuple[int, int]


def difference(a: str, b: str) -> str:
    """How one attribute of a pair differs."""
    if not a or not b:
        return "blank"
    edits = Levenshtein.distance(a, b)
    if edits == 0:
        return "same"
    return "near" if edits <= NEAR_EDITS else "replaced"


def swapped(values_a: list[str], values_b: list[str]) -> bool:
    """Two attributes exchanged (each within NEAR_EDITS of the other's value)."""
    if len(values_a) != 2 or not all(values_a) or not all(values_b):
        return False
    a1, a2 = values_a
    b1, b2 = values_b
    return Levenshtein.distance(a1, b2) + Levenshtein.distance(a2, b1) <= NEAR_EDITS


def miss_pattern(names: list[str], values_a: list[str], values_b: list[str]) -> str:
    """How a missed pair differs: swapped, or each attribute's difference."""
    if swapped(values_a, values_b):
        return "swapped"
    kinds = [difference(a, b) for a, b in zip(values_a, values_b, strict=True)]
    return ", ".join(f"{n} {k}" for n, k in zip(names, kinds, strict=True))


def joined(
    keys_a: Sequence[Sequence[str]], keys_b: Sequence[Sequence[str]], pairs: Iterable[Pair]
) -> list[bool]:
    """Per (row of A, row of B) pair, whether the two rows share a key."""
    return [bool(set(keys_a[i]) & set(keys_b[j])) for i, j in pairs]


def encoded(rows_keys: Sequence[Sequence[str]]) -> list[list[bytes]]:
    """Each row's keys as the bytes the join takes."""
    return [[key.encode() for key in keys] for keys in rows_keys]


def f1_of(found: set[tuple[str, str]], truth: Iterable[tuple[str, str]]) -> float:
    """F1 of `found` against the true pairs."""
    true = set(truth)
    hits = len(found & true)
    return 2 * hits / (len(found) + len(true)) if found or true else 0.0


def per_recipe(
    inputs: SealedInputs,
    recipes: Sequence[Recipe],
    truth: Sequence[Pair],
    plain: Sequence[Pair],
) -> list[dict[str, object]]:
    """Per recipe alone (a fallback one with the others, which decide the rows it keys), then
    all together: true pairs and plain links joined, candidate pairs and their share of all
    pairs. Pairs are (row of A, row of B)."""
    alice, bob = inputs.tables["alice"], inputs.tables["bob"]
    everything = len(alice.ids) * len(bob.ids)
    chosen = [
        (recipe.text, [r for r in recipes if r is recipe or (recipe.fallback and not r.fallback)])
        for recipe in recipes
    ]
    rows = []
    for label, subset in [*chosen, ("all together", list(recipes))]:
        keys_a = recipe_keys(alice.attributes, subset, first=True)
        keys_b = recipe_keys(bob.attributes, subset, first=False)
        if label != "all together" and any(r.fallback for r in subset):
            # Only the fallback's own keys: the others' are there to say which rows it keys.
            keys_a = [[k for k in keys if fallback_key(k)] for keys in keys_a]
            keys_b = [[k for k in keys if fallback_key(k)] for keys in keys_b]
        candidates = len(shared_key_pairs(encoded(keys_a), encoded(keys_b)))
        rows.append(
            {
                "recipe": label,
                "true_pairs_joined": sum(joined(keys_a, keys_b, truth)) / max(len(truth), 1),
                "plain_links_joined": (
                    sum(joined(keys_a, keys_b, plain)) / len(plain) if plain else None
                ),
                "candidate_pairs": candidates,
                "share_of_all_pairs": candidates / max(everything, 1),
            }
        )
    return rows


def plain_links(inputs: SealedInputs) -> frozenset[tuple[str, str]]:
    """The pairs the non-private linker links, every pair scored."""
    tables = (inputs.tables["alice"], inputs.tables["bob"])
    return link_tables(tables, inputs.truth, plain_agreement(inputs.read, inputs.reference)).found


# Pairs scored at a time by plain_on_keys.
CHUNK_PAIRS = 200_000


def plain_on_keys(inputs: SealedInputs, pairs: np.ndarray, seed: int = 1) -> float:
    """F1 of the non-private linker scoring only `pairs` (rows of A, rows of B: what the keys
    join), each party's one-to-one among its accepted ones, the two intersected. Its links
    that the keys join (`plain_f1_on_joined`) keep the false links its one-to-one over every
    pair ruled out; this is the linker on the pairs sealed linkage scores, so that what
    scoring under encryption loses shows apart from what the keys lose (a fallback key's
    pairs are scored as any other's here)."""
    agreement = plain_agreement(inputs.read, inputs.reference)
    tables = inputs.tables
    units = {n: noise_free_units(agreement, t.attributes) for n, t in tables.items()}
    kept = {}
    for name, peer, own_pairs in (("alice", "bob", pairs), ("bob", "alice", pairs[:, ::-1])):
        model = pipeline.train(agreement, tables[name].attributes, Randomness(seed, name))[0]
        # In chunks: a key on one name alone joins millions of pairs, whose features whole
        # would not fit in memory.
        scores = np.concatenate(
            [
                model.decision(pair_features(units[name][chunk[:, 0]], units[peer][chunk[:, 1]]))
                for chunk in np.array_split(own_pairs, max(1, len(own_pairs) // CHUNK_PAIRS))
            ]
        )
        accepted = scores > 0
        chosen = own_pairs[accepted]
        found = matching.one_to_one(
            matching.Matches(chosen[:, 0], chosen[:, 1], scores[accepted]),
            agreement.method.assignment,
        )
        kept[name] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
    agreed = kept["alice"] & {(j, i) for i, j in kept["bob"]}
    ids_a, ids_b = tables["alice"].ids, tables["bob"].ids
    return f1_of({(ids_a[i], ids_b[j]) for i, j in agreed}, inputs.truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="also link the files by the reference release without noise (every pair scored, "
        "the schema's method otherwise) and count, per kind of miss, the pairs it links",
    )
    parser.add_argument(
        "--per-recipe",
        action="store_true",
        help="also report each recipe alone and all together: pairs joined and candidates",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args, args.recipes)
    alice, bob = inputs.tables["alice"], inputs.tables["bob"]
    names = list(alice.attributes)
    recipes = inputs.parsed_recipes()
    keys_a = recipe_keys(alice.attributes, recipes, first=True)
    keys_b = recipe_keys(bob.attributes, recipes, first=False)
    row_a = {record: row for row, record in enumerate(alice.ids)}
    row_b = {record: row for row, record in enumerate(bob.ids)}
    plain = plain_links(inputs) if args.plain else frozenset()
    patterns: Counter[str] = Counter()
    linked: Counter[str] = Counter()
    truth = sorted(inputs.truth)
    truth_joined = joined(keys_a, keys_b, [(row_a[a], row_b[b]) for a, b in truth])
    for (id_a, id_b), shares in zip(truth, truth_joined, strict=True):
        i, j = row_a[id_a], row_b[id_b]
        if shares:
            pattern = "share a key"
        else:
            values_a = [alice.attributes[name][i] for name in names]
            values_b = [bob.attributes[name][j] for name in names]
            pattern = miss_pattern(names, values_a, values_b)
            patterns[pattern] += 1
        linked[pattern] += (id_a, id_b) in plain
    pairs = len(inputs.truth)
    by_plain = f", {linked['share a key']:,} linked by the plain release" if args.plain else ""
    share = f"{sum(truth_joined) / pairs:.1%}{by_plain}"
    print(f"{sum(truth_joined):,} of {pairs:,} true pairs share a key ({share}); the rest:")
    for pattern, count in patterns.most_common():
        also = f"  ({linked[pattern]:,} linked by the plain release)" if args.plain else ""
        print(f"  {count:6,}  {pattern}{also}")
    # The measure of the keys: of every pair the plain release links (false ones
    # too), the share the keys join, which a sealed run could then score.
    plain_pairs = sorted(plain)
    plain_joined = joined(keys_a, keys_b, [(row_a[a], row_b[b]) for a, b in plain_pairs])
    kept = sum(plain_joined)
    # The plain release's F1, and that of its links the keys join: what sealed linkage could
    # reach on these keys if it linked as the plain release does.
    f1_plain = f1_of(set(plain_pairs), inputs.truth)
    kept_pairs = {p for p, shares in zip(plain_pairs, plain_joined, strict=True) if shares}
    f1_joined = f1_of(kept_pairs, inputs.truth)
    f1_scoring_joined = (
        plain_on_keys(inputs, shared_key_pairs(encoded(keys_a), encoded(keys_b)))
        if args.plain
        else 0.0
    )
    if args.plain:
        print(
            f"the keys join {kept:,} of the {len(plain):,} pairs the plain release links "
            f"({kept / max(len(plain), 1):.1%}); its F1 {f1_plain:.4f}, {f1_joined:.4f} on "
            f"those the keys join, {f1_scoring_joined:.4f} scoring only the pairs the keys join"
        )
    recipe_rows = (
        per_recipe(
            inputs,
            recipes,
            [(row_a[a], row_b[b]) for a, b in truth],
            [(row_a[a], row_b[b]) for a, b in plain_pairs],
        )
        if args.per_recipe
        else []
    )
    for row in recipe_rows:
        plain_share = row["plain_links_joined"]
        also = f", {plain_share:.1%} of the plain links" if plain_share is not None else ""
        print(
            f"  {row['recipe']}: {row['true_pairs_joined']:.1%} of the true pairs{also}; "
            f"{row['candidate_pairs']:,} candidate pairs ({row['share_of_all_pairs']:.4%} "
            "of all pairs)"
        )
    if args.json:
        result = {
            "command": run_command(args),
            "recipes": inputs.recipes,
            "true_pairs": pairs,
            "joined": sum(truth_joined),
            "missed": dict(patterns.most_common()),
            **({"per_recipe": recipe_rows} if recipe_rows else {}),
            **(
                {
                    "linked_by_the_plain_release": dict(linked.most_common()),
                    "plain_links": len(plain),
                    "plain_links_joined": kept,
                    "plain_f1": f1_plain,
                    "plain_f1_on_joined": f1_joined,
                    "plain_f1_scoring_joined": f1_scoring_joined,
                }
                if args.plain
                else {}
            ),
        }
        write_result(args.json, result)


if __name__ == "__main__":
    main()
