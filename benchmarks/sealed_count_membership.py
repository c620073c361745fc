"""What the hidden join's counts tell a party about who is in the peer's file: membership,
measured.

Under the hidden join (pprl.protocol.sealed.hidden_join) the scorer, Alice, learns per entry
(one of her own keys, or a grouped recipe's keys of one of her rows: recipes.entry_groups)
how many of Bob's rows hold that key (any of the group's keys). Below, "key" is such an
entry's key set, so a group counts as one key held by whoever holds any of its keys. Her
attack: a list of people that holds everyone of both files and some people in neither. For
each listed person not in her own file, the keys she also holds are the ones whose counts
speak of them: of the c_k of Bob's rows holding key k, her own partners account for some
(she knows her links; here all of her true partners, the most she could know), and the rest,
r_k, are among the m_k listed people outside her file who hold k. A person is a member with
probability at most r_k / m_k for each of their visible keys, so she scores each by the
smallest of those (0: certainly not in Bob's file; 1: certainly in it) and people with no
visible key at the prior. Reported: how well the score tells Bob's people without a partner
from the people in neither file among those who hold one of her keys (AUC, 0.5 is chance; of
the others the counts say nothing), and the shares decided with certainty either way.

The people are split from the true pairs: `--bob-only` of them lose Alice's record (Bob's
people without a partner, the members at risk), `--absent` lose both records and stay on the
list only (Alice's version of them), the rest stay in both files.

    python benchmarks/sealed_count_membership.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--recipes R] --json out.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from pprl.bench.in_process import add_table_arguments, run_command, sealed_inputs
from pprl.protocol.sealed.recipes import entry_groups, recipe_keys

# An entry as the attack sees it: its keys (one, or a grouped recipe's keys of one row).
Entry = frozenset[str]


def rows_of(columns: Mapping[str, Sequence[str]], rows: Sequence[int]) -> dict[str, list[str]]:
    return {name: [values[i] for i in rows] for name, values in columns.items()}


def entries_of(alice_keys: list[list[str]]) -> set[Entry]:
    """Alice's distinct entries (two rows with the same keys send equal ones)."""
    return {frozenset(group) for keys in alice_keys for group in entry_groups(keys)}


class Holders:
    """Which of Alice's entries a row's keys meet: an entry holds a row when the row holds
    any of its keys."""

    def __init__(self, entries: set[Entry]) -> None:
        self.entries = entries
        self._by_key: defaultdict[str, set[Entry]] = defaultdict(set)
        for entry in entries:
            for key in entry:
                self._by_key[key].add(entry)

    def met(self, keys: Sequence[str]) -> set[Entry]:
        return set().union(*(self._by_key.get(key, set()) for key in keys))


def counts_told(
    holders: Holders, bob_keys: list[list[str]], padding: Mapping[Entry, int]
) -> Counter[Entry]:
    """Per entry Alice holds, the count she is told: Bob's rows holding it, plus the dummy
    slots the evaluator would add for that entry's value (`padding`, the same for every
    entry of the value, so that her entries of one key cannot be averaged)."""
    counts = Counter(entry for keys in bob_keys for entry in holders.met(keys))
    for entry in holders.entries:
        counts[entry] += padding.get(entry, 0)
    return counts


def membership_scores(
    holders: Holders,
    alice_partnered_keys: list[list[str]],
    counts: Mapping[Entry, int],
    candidate_keys: list[list[str]],
    prior: float,
    padding_mean: float = 0.0,
) -> np.ndarray:
    """Per candidate (a listed person outside Alice's file), the most Alice's counts allow
    for their being in Bob's file: the smallest r_k / m_k over the keys she also holds
    (module docstring), with the padding's mean taken off and clipped to [0, 1]; `prior`
    without such a key. `alice_partnered_keys`: the keys of Bob's rows she has linked (her
    partners), which the counts include."""
    known = Counter(entry for keys in alice_partnered_keys for entry in holders.met(keys))
    visible_of = [holders.met(keys) for keys in candidate_keys]
    listed = Counter(entry for visible in visible_of for entry in visible)
    scores = np.full(len(candidate_keys), prior)
    for p, visible in enumerate(visible_of):
        if visible:
            rest = min((counts[k] - known[k] - padding_mean) / listed[k] for k in visible)
            scores[p] = min(max(rest, 0.0), 1.0)
    return scores


def dummy_padding(entries: set[Entry], mean: float, rng: np.random.Generator) -> dict[Entry, int]:
    """Geometric dummy counts of the given mean (0: none), one per distinct entry."""
    distinct = sorted(entries, key=sorted)
    if mean <= 0:
        return {}
    drawn = rng.geometric(1.0 / (1.0 + mean), size=len(distinct)) - 1
    return dict(zip(distinct, drawn.tolist(), strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument("--bob-only", type=float, default=0.3)
    parser.add_argument("--absent", type=float, default=0.15)
    parser.add_argument(
        "--padding",
        type=float,
        default=0.0,
        help="dummy slots per key value the evaluator would add, on average (geometric; "
        "not built in the daemons: what it would cost and buy)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args, args.recipes)
    alice, bob = inputs.tables["alice"], inputs.tables["bob"]
    recipes = inputs.parsed_recipes()
    row_a = {record: row for row, record in enumerate(alice.ids)}
    row_b = {record: row for row, record in enumerate(bob.ids)}
    rng = np.random.default_rng(args.seed)
    pairs = sorted(inputs.truth)
    draw = rng.random(len(pairs))
    bob_only = [(a, b) for (a, b), u in zip(pairs, draw, strict=True) if u < args.bob_only]
    absent = [
        (a, b)
        for (a, b), u in zip(pairs, draw, strict=True)
        if args.bob_only <= u < args.bob_only + args.absent
    ]
    both = [
        (a, b) for (a, b), u in zip(pairs, draw, strict=True) if u >= args.bob_only + args.absent
    ]
    out_of_alice = {row_a[a] for a, _ in bob_only + absent}
    out_of_bob = {row_b[b] for _, b in absent}
    keep_a = [i for i in range(len(alice.ids)) if i not in out_of_alice]
    keep_b = [j for j in range(len(bob.ids)) if j not in out_of_bob]
    alice_keys = recipe_keys(rows_of(alice.attributes, keep_a), recipes, first=True)
    bob_keys = recipe_keys(rows_of(bob.attributes, keep_b), recipes, first=False)
    partners = recipe_keys(rows_of(bob.attributes, [row_b[b] for _, b in both]), recipes, False)
    # The candidates: Bob's people without a partner (his records) and the people in neither
    # file (Alice's records of them), keyed as Bob keys his rows.
    members = recipe_keys(rows_of(bob.attributes, [row_b[b] for _, b in bob_only]), recipes, False)
    others = recipe_keys(rows_of(alice.attributes, [row_a[a] for a, _ in absent]), recipes, False)
    prior = len(members) / max(1, len(members) + len(others))
    holders = Holders(entries_of(alice_keys))
    padding = dummy_padding(holders.entries, args.padding, rng)
    counts = counts_told(holders, bob_keys, padding)
    scores = membership_scores(holders, partners, counts, members + others, prior, args.padding)
    truth = np.r_[np.ones(len(members)), np.zeros(len(others))]
    seen = np.array([bool(holders.met(keys)) for keys in members + others])
    # The slots Alice's entries take, real and dummy: what padding costs.
    entries = [frozenset(group) for keys in alice_keys for group in entry_groups(keys)]
    real = sum(counts[entry] - padding.get(entry, 0) for entry in entries)
    dummy = sum(padding.get(entry, 0) for entry in entries)
    result = {
        "command": run_command(args),
        "recipes": inputs.recipes,
        "bob_only": len(members),
        "absent": len(others),
        # Among the people who hold a key of hers: of the others the counts say nothing.
        "auc": float(roc_auc_score(truth[seen], scores[seen])),
        "members_with_a_visible_key": float(seen[: len(members)].mean()),
        "non_members_with_a_visible_key": float(seen[len(members) :].mean()),
        # Without padding these are certain; with it, the attacker's best guess.
        "members_at_1": float((scores[: len(members)] >= 1.0).mean()),
        "non_members_at_0": float((scores[len(members) :] <= 0.0).mean()),
        "slots": real,
        "dummy_slots": dummy,
    }
    print(
        f"{len(members):,} of Bob's people without a partner against {len(others):,} in neither "
        f"file: AUC {result['auc']:.3f} among those holding a key of hers (0.5 is chance; "
        f"they are "
        f"{result['members_with_a_visible_key']:.1%} and "
        f"{result['non_members_with_a_visible_key']:.1%}); scored 1: "
        f"{result['members_at_1']:.1%} of the members, scored 0: "
        f"{result['non_members_at_0']:.1%} of the others (certain without padding); "
        f"{real:,} slots and {dummy:,} dummy ones"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
