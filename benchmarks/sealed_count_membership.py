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
probability r_k / m_k given each of their visible keys: a key with r_k = 0 says certainly
not in Bob's file, one with r_k = m_k certainly in it, and otherwise she scores them by the
smallest share; people with no visible key at the prior. Reported: how well the score tells
Bob's people without a partner from the people in neither file among those who hold one of
her keys (AUC, 0.5 is chance; of the others the counts say nothing), and the shares decided
with certainty either way.

The other direction tells her more: as the evaluator of Bob's classifier she receives his
entries (one per key of each of his rows, a grouped recipe's keys of a row as one entry) and
joins them with her own rows' keys, so of each entry she learns which of her own key values
it holds, not only how many of her rows: for a grouped entry, which one-edit neighbours of
her names (with the other name's code) his name has. Her evaluator's attack runs the same
rule with an entry's signature (the set of her key values it holds) in place of her own
entry: of the Bob rows whose entries show signature s, her partners account for some, and
the rest are among the listed people whose entries would show s. Both views are reported,
and the two together (each person's two scores combined as one view's shares are). Dummy
slots (`--padding`) blur only the counts: the evaluator's view does not pass through them.
Keys coarsened (`--bins B`: each recipe's values hashed into B bins, what both parties would
key by instead) put more listed people behind each unit, but also make nearly everyone share
one with her, and a row's combination of bins stays its own: measured, it tells more.

The people are split from the true pairs: `--bob-only` of them lose Alice's record (Bob's
people without a partner, the members at risk), `--absent` lose both records and stay on the
list only (Alice's version of them), the rest stay in both files. `--population FILE` lists
more people in neither file (records read as the first file is, say FEBRL1-3's originals:
`pprl bench data febrl4 --others`): a list of a population rather than of the files.

    python benchmarks/sealed_count_membership.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--recipes R] --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from sklearn.metrics import roc_auc_score

from lab.in_process import (
    add_table_arguments,
    run_command,
    schema_tables,
    sealed_inputs,
)
from lab.result_file import write_result
from pprl.protocol.sealed.recipes import entry_groups, recipe_keys

# An entry as the attack sees it: its keys (one, or a grouped recipe's keys of one row).
Entry = frozenset[str]


def binned(keys: list[list[str]], bins: int) -> list[list[str]]:
    """Each key's value hashed into one of `bins` bins of its recipe (0: the keys as they
    are): coarse keys shared by many names, as `--bins` asks."""
    if bins <= 0:
        return keys
    out = []
    for row in keys:
        coarse = []
        for key in row:
            recipe, value = key.split("|", 1)
            digest = hashlib.sha256(value.encode("utf-8")).digest()
            coarse.append(f"{recipe}|{int.from_bytes(digest[:8], 'big') % bins}")
        out.append(list(dict.fromkeys(coarse)))
    return out


def rows_of(columns: Mapping[str, Sequence[str]], rows: Sequence[int]) -> dict[str, list[str]]:
    return {name: [values[i] for i in rows] for name, values in columns.items()}


def entries_of(alice_keys: list[list[str]]) -> set[Entry]:
    """Alice's distinct entries (two rows with the same keys send equal ones)."""
    return {frozenset(group) for keys in alice_keys for group in entry_groups(keys)}


class View(Protocol):
    """What one direction of the hidden join shows Alice of a row's keys: the visible units
    its keys meet, each told her as a count of Bob's rows."""

    def met(self, keys: Sequence[str]) -> set[Entry]: ...


class Holders:
    """The scorer's view: which of Alice's entries a row's keys meet (an entry holds a row
    when the row holds any of its keys); she is told each entry's count of Bob's rows."""

    def __init__(self, entries: set[Entry]) -> None:
        self.entries = entries
        self._by_key: defaultdict[str, set[Entry]] = defaultdict(set)
        for entry in entries:
            for key in entry:
                self._by_key[key].add(entry)

    def met(self, keys: Sequence[str]) -> set[Entry]:
        return set().union(*(self._by_key.get(key, set()) for key in keys))


class Signatures:
    """The evaluator's view: of each of Bob's entries, the set of Alice's own key values it
    holds (its signature; empty, it tells her nothing of whose it is). A row meets the
    signatures of its entries, and she sees how many of Bob's rows show each."""

    def __init__(self, alice_keys: list[list[str]]) -> None:
        self.own = {key for keys in alice_keys for key in keys}

    def met(self, keys: Sequence[str]) -> set[Entry]:
        signatures = (frozenset(group) & self.own for group in entry_groups(keys))
        return {signature for signature in signatures if signature}


def counts_told(
    view: View, bob_keys: list[list[str]], padding: Mapping[Entry, int]
) -> Counter[Entry]:
    """Per unit of the view, the count Alice is told: Bob's rows meeting it, plus for the
    scorer's view the dummy slots the evaluator would add for that entry's value (`padding`,
    the same for every entry of the value, so that her entries of one key cannot be
    averaged)."""
    counts = Counter(entry for keys in bob_keys for entry in view.met(keys))
    for entry, dummies in padding.items():
        counts[entry] += dummies
    return counts


def membership_scores(
    view: View,
    alice_partnered_keys: list[list[str]],
    counts: Mapping[Entry, int],
    candidate_keys: list[list[str]],
    prior: float,
    padding_mean: float = 0.0,
) -> np.ndarray:
    """Per candidate (a listed person outside Alice's file), the most Alice's counts allow
    for their being in Bob's file: the shares r_k / m_k of the units of the view the
    candidate meets (module docstring), the padding's mean taken off, `combined`; `prior`
    without such a unit. `alice_partnered_keys`: the keys of Bob's rows she
    has linked (her partners), which the counts include."""
    known = Counter(entry for keys in alice_partnered_keys for entry in view.met(keys))
    visible_of = [view.met(keys) for keys in candidate_keys]
    listed = Counter(entry for visible in visible_of for entry in visible)
    scores = np.full(len(candidate_keys), prior)
    for p, visible in enumerate(visible_of):
        if visible:
            shares = [(counts[k] - known[k] - padding_mean) / listed[k] for k in visible]
            scores[p] = combined(shares)
    return scores


def combined(shares: Sequence[float]) -> float:
    """One score from several shares r / m of one person: a share of 0 says no listed
    holder of that unit is Bob's, one of 1 that every one is, so either decides (without
    padding they cannot disagree); otherwise the smallest, clipped to [0, 1]."""
    if min(shares) <= 0.0:
        return 0.0
    if max(shares) >= 1.0:
        return 1.0
    return float(min(shares))


@dataclass(frozen=True)
class Guess:
    """One view's membership scores of the candidates, and which of them it speaks of."""

    scores: np.ndarray
    seen: np.ndarray

    def together(self, other: Guess) -> Guess:
        """Both views at once: each person's two scores combined as one view's shares are
        (`combined`) where both speak, the one that speaks where only one does."""
        scores = [
            combined([a, b]) if sa and sb else (a if sa else b)
            for a, b, sa, sb in zip(self.scores, other.scores, self.seen, other.seen, strict=True)
        ]
        return Guess(np.array(scores), self.seen | other.seen)

    def summary(self, truth: np.ndarray, members: int) -> dict[str, float]:
        return {
            # Among the people it speaks of: of the others it says nothing.
            "auc": float(roc_auc_score(truth[self.seen], self.scores[self.seen])),
            "members_with_a_visible_key": float(self.seen[:members].mean()),
            "non_members_with_a_visible_key": float(self.seen[members:].mean()),
            # Without padding these are certain; with it, the attacker's best guess.
            "members_at_1": float((self.scores[:members] >= 1.0).mean()),
            "non_members_at_0": float((self.scores[members:] <= 0.0).mean()),
        }


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
    parser.add_argument(
        "--bins",
        type=int,
        default=0,
        help="each recipe's key values hashed into this many bins (0: exact keys; not built "
        "in the daemons: what coarse keys would buy)",
    )
    parser.add_argument(
        "--population",
        type=Path,
        help="records of more people in neither file, on the attacker's list besides",
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

    def keyed(columns: Mapping[str, Sequence[str]], rows: Sequence[int], first: bool):
        return binned(recipe_keys(rows_of(columns, rows), recipes, first), args.bins)

    alice_keys = keyed(alice.attributes, keep_a, True)
    bob_keys = keyed(bob.attributes, keep_b, False)
    partners = keyed(bob.attributes, [row_b[b] for _, b in both], False)
    # The candidates: Bob's people without a partner (his records) and the people in neither
    # file (Alice's records of them), keyed as Bob keys his rows.
    members = keyed(bob.attributes, [row_b[b] for _, b in bob_only], False)
    others = keyed(alice.attributes, [row_a[a] for a, _ in absent], False)
    population = 0
    if args.population:
        listed = schema_tables(args.schema, args.population, args.records_b).tables[0]
        population = len(listed.ids)
        others += keyed(listed.attributes, range(population), False)
    prior = len(members) / max(1, len(members) + len(others))
    holders = Holders(entries_of(alice_keys))
    padding = dummy_padding(holders.entries, args.padding, rng)
    counts = counts_told(holders, bob_keys, padding)
    candidates = members + others
    truth = np.r_[np.ones(len(members)), np.zeros(len(others))]
    scorer = Guess(
        membership_scores(holders, partners, counts, candidates, prior, args.padding),
        np.array([bool(holders.met(keys)) for keys in candidates]),
    )
    signatures = Signatures(alice_keys)
    evaluator = Guess(
        membership_scores(
            signatures, partners, counts_told(signatures, bob_keys, {}), candidates, prior
        ),
        np.array([bool(signatures.met(keys)) for keys in candidates]),
    )
    # The slots Alice's entries take, real and dummy: what padding costs.
    entries = [frozenset(group) for keys in alice_keys for group in entry_groups(keys)]
    real = sum(counts[entry] - padding.get(entry, 0) for entry in entries)
    dummy = sum(padding.get(entry, 0) for entry in entries)
    result = {
        "command": run_command(args),
        "recipes": inputs.recipes,
        "bob_only": len(members),
        "absent": len(others) - population,
        "population": population,
        # The scorer's view (the counts) at the top, as before the evaluator's was measured.
        **scorer.summary(truth, len(members)),
        "slots": real,
        "dummy_slots": dummy,
        "evaluator": evaluator.summary(truth, len(members)),
        "both": scorer.together(evaluator).summary(truth, len(members)),
    }
    for name, view in (
        ("counts", result),
        ("evaluator", result["evaluator"]),
        ("both", result["both"]),
    ):
        print(
            f"{name}: {len(members):,} of Bob's people without a partner against "
            f"{len(others):,} in neither file: AUC {view['auc']:.3f} among those it speaks of "
            f"(0.5 is chance; they are {view['members_with_a_visible_key']:.1%} and "
            f"{view['non_members_with_a_visible_key']:.1%}); scored 1: "
            f"{view['members_at_1']:.1%} of the members, scored 0: "
            f"{view['non_members_at_0']:.1%} of the others (certain without padding)"
        )
    print(f"{real:,} slots and {dummy:,} dummy ones")
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
