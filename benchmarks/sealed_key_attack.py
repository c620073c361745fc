"""What the blinded keys' join tells a party about the peer's values: the attack of a party
that knows its own keys in plaintext.

After the join Alice knows, for each of Bob's rows, which of her own keys it holds (a doubly
blinded value equal to her key's). The hyperplanes are public, so she can compute the keys
of any value in a dictionary; the values whose keys agree with every key she saw Bob's row
hold for an entry are what she learns of that value. This measures, per keyed attribute, the
share of Bob's rows whose value she pins down exactly (a single dictionary value left, and it
is the true one), separately for rows that have a partner among her records and rows that do
not. To have rows without a partner, Alice's partners of `--unpartnered` of Bob's rows are
removed from her file. The dictionary is every value either party holds (it contains the
truth; an attacker's enumeration of dates or postcodes holds at least as much).

    python benchmarks/sealed_key_attack.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --keyed suburb,postcode --json out.json
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import (
    add_table_arguments,
    noise_free_units,
    run_command,
    schema_tables,
    sealed_agreement,
    without_partners,
)
from lab.result_file import write_result
from lab.simhash_keys import KeySetting, row_keys
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol.sealed.recipes import parse_recipes, recipe_keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--keyed", default="", help="attributes keyed alone, comma-separated")
    parser.add_argument("--bits", type=int, default=32)
    parser.add_argument("--bands", type=int, default=16)
    parser.add_argument("--unpartnered", type=float, default=0.3)
    parser.add_argument("--recipes", default="", help="also plaintext key recipes (see recipes)")
    parser.add_argument(
        "--combine", default="", help="groups keyed together, e.g. 'dob+surname,dob+postcode'"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    alice, bob = read.tables
    truth = read_truth(args.truth)
    agreement = sealed_agreement(read, load_reference(args.reference), caps=False)
    split = without_partners(alice, bob, truth, args.unpartnered, np.random.default_rng(args.seed))
    columns_a, columns_b, unpartnered = split.alice, split.bob, split.unpartnered
    attributes = [a for a in args.keyed.split(",") if a]
    entry_of = {a: m for m, (a, _) in enumerate(agreement.mapping)}
    entries = {a: entry_of[a] for a in attributes}
    setting = KeySetting(args.bits, args.bands, tuple(entries.values()), together=False)
    seed = agreement.digest().encode()
    units_a, units_b = (
        noise_free_units(agreement, columns_a),
        noise_free_units(agreement, columns_b),
    )
    keys_a = row_keys(units_a, setting, seed)
    keys_b = row_keys(units_b, setting, seed)
    alice_keys = {key for keys in keys_a for key in keys}
    alone = int(unpartnered.sum())
    results: dict[str, Any] = {"rows": [], "bob_rows": len(bob.ids), "alone": alone}
    for attribute, m in entries.items():
        values = sorted(set(columns_a[attribute]) | set(columns_b[attribute]) - {""})
        blank = {name: [""] * len(values) for name in columns_b}
        dictionary = row_keys(
            noise_free_units(agreement, blank | {attribute: values}), setting, seed
        )
        holders: defaultdict[str, set[int]] = defaultdict(set)
        for index, keys in enumerate(dictionary):
            for key in keys:
                holders[key].add(index)
        seen = np.zeros(len(bob.ids), dtype=bool)
        pinned = np.zeros(len(bob.ids), dtype=bool)
        prefix = f"entry {m}|"
        for j, keys in enumerate(keys_b):
            revealed = [k for k in keys if k.startswith(prefix) and k in alice_keys]
            if not revealed:
                continue
            seen[j] = True
            left = set.intersection(*(holders[k] for k in revealed))
            if len(left) == 1 and values[left.pop()] == columns_b[attribute][j]:
                pinned[j] = True
        row = {
            "attribute": attribute,
            "dictionary": len(values),
            "partnered_seen": float(seen[~unpartnered].mean()),
            "partnered_pinned": float(pinned[~unpartnered].mean()),
            "unpartnered_seen": float(seen[unpartnered].mean()) if unpartnered.any() else 0.0,
            "unpartnered_pinned": float(pinned[unpartnered].mean()) if unpartnered.any() else 0.0,
        }
        results["rows"].append(row)
        print(
            f"{attribute:<16} dictionary {len(values):>6,}: Bob's rows with a partner: "
            f"{row['partnered_seen']:.1%} share a key, {row['partnered_pinned']:.1%} pinned; "
            f"without: {row['unpartnered_seen']:.1%} share a key, "
            f"{row['unpartnered_pinned']:.1%} pinned",
            flush=True,
        )
    # Keys over all entries together: a row sharing one is close to one of Alice's records in
    # every attribute at once; the share of rows without a partner that do is what they risk.
    combinations = tuple(
        tuple(entry_of[a] for a in group.split("+")) for group in args.combine.split(",") if group
    )
    together = KeySetting(args.bits, args.bands, (), together=True, combinations=combinations)
    whole_a = {k for keys in row_keys(units_a, together, seed) for k in keys}
    whole_b = row_keys(units_b, together, seed)
    shares = np.array([any(k in whole_a for k in keys) for keys in whole_b])
    results["together"] = {
        "partnered_seen": float(shares[~unpartnered].mean()),
        "unpartnered_seen": float(shares[unpartnered].mean()) if unpartnered.any() else 0.0,
    }
    print(
        f"together and combined: Bob's rows with a partner: {shares[~unpartnered].mean():.1%} "
        f"share a key; without: {results['together']['unpartnered_seen']:.1%}",
        flush=True,
    )
    if args.recipes:
        recipes = parse_recipes(args.recipes, list(columns_b))
        alice_recipe_keys = {k for keys in recipe_keys(columns_a, recipes, True) for k in keys}
        bob_recipe_keys = recipe_keys(columns_b, recipes, False)
        shared = [[k for k in keys if k in alice_recipe_keys] for keys in bob_recipe_keys]
        results["recipes"] = []
        for number, recipe in enumerate(recipes):
            prefix = (f"recipe {number}|", f"recipe {number}.")  # a fallback's two tags
            hit = np.array([any(k.startswith(prefix) for k in keys) for keys in shared])
            results["recipes"].append(
                {
                    "recipe": recipe.text,
                    "partnered_seen": float(hit[~unpartnered].mean()),
                    "unpartnered_seen": float(hit[unpartnered].mean()),
                }
            )
            print(
                f"recipe {recipe.text:<40} Bob's rows whose key value Alice learns: with a "
                f"partner {hit[~unpartnered].mean():.1%}, without {hit[unpartnered].mean():.1%}",
                flush=True,
            )
        hit = np.array([bool(keys) for keys in shared])
        results["recipes_any"] = {
            "partnered_seen": float(hit[~unpartnered].mean()),
            "unpartnered_seen": float(hit[unpartnered].mean()),
        }
        print(
            f"any recipe: with a partner {hit[~unpartnered].mean():.1%}, without "
            f"{hit[unpartnered].mean():.1%}",
            flush=True,
        )
    if args.json:
        results["command"] = run_command(args)
        write_result(args.json, results)


if __name__ == "__main__":
    main()
