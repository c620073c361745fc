"""Two measurements of what sealed linkage leaves: the pairs the keys miss, classified
(benchmarks/sealed_key_misses.py), and the peer's own links that REVEAL tells an attacker
(benchmarks/sealed_bucket_attack.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from pprl.protocol.model.classifier import Model
from pprl.protocol.sealed.recipes import parse_recipes
from tests.scripts import benchmark_script

misses = benchmark_script("sealed_key_misses")
attack = benchmark_script("sealed_bucket_attack")


def test_a_missed_pair_is_told_by_how_each_attribute_differs() -> None:
    assert misses.difference("JOHN", "JOHN") == "same"
    assert misses.difference("JOHN", "JHON") == "near"  # two edits
    assert misses.difference("JOHN", "ISABELLE") == "replaced"
    assert misses.difference("", "JOHN") == misses.difference("JOHN", "") == "blank"
    assert misses.swapped(["SIENNA", "MUSOLINO"], ["MUSOLINO", "SIENA"])
    assert not misses.swapped(["SIENNA", "MUSOLINO"], ["SIENNA", "MUSOLINO"])
    assert not misses.swapped(["SIENNA", ""], ["", "SIENNA"])  # a blank is not a swap
    assert not misses.swapped(["A", "B", "C"], ["B", "A", "C"])  # two attributes only
    # F1 of found pairs: 2 hits of 3 found against 4 true pairs.
    truth = [("a1", "b1"), ("a2", "b2"), ("a3", "b3"), ("a4", "b4")]
    assert misses.f1_of({("a1", "b1"), ("a2", "b2"), ("a1", "b9")}, truth) == 2 * 2 / 7
    assert misses.f1_of(set(), truth) == 0.0


def test_the_peers_links_are_its_accepted_pairs_one_to_one() -> None:
    """Bob's model on the candidate pairs (Alice's row, Bob's row): accepted where its
    decision is positive, each row once, the higher score first; keyed by his row."""
    # One entry of two coordinates; the decision is bias - 10 * distance (distance 1 - cos).
    model = Model("linear", {"weights": np.array([-10.0, 0.0, 0.0]), "bias": np.array(5.0)})
    angle = np.array([0.0, 0.2, 1.5, 0.1])
    units = np.stack([np.cos(angle), np.sin(angle)], axis=1)[:, None, :].astype(np.float32)
    units_a, units_b = units[:2], units[[0, 3, 2]]
    # Alice's rows 0, 1 against Bob's 0 (same as her 0), 1 (near both) and 2 (far from both).
    pairs = np.array([(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)])
    scores = attack.decisions(model, units_b[pairs[:, 1]], units_a[pairs[:, 0]])
    assert (scores[pairs[:, 1] == 2] < 0).all() and (scores[pairs[:, 1] < 2] > 0).all()
    links = attack.peer_links(model, units_b, units_a, pairs, "greedy-one-to-one")
    # Bob's 0 takes Alice's 0 (exact); his 1 then takes her 1; his 2 links nothing.
    assert links == {0: 0, 1: 1}


membership = benchmark_script("sealed_count_membership")


def test_each_recipe_alone_and_all_together_report_what_they_join_and_cost() -> None:
    """Alice: Katherine Lee, Jon Kay; Bob: Gatherine Lee (a first-letter typo), Jon Kay, Ann
    Kay. The codes' recipe joins Jon's pair only (Gatherine's code differs, and Ann's); the
    neighbours' joins both true pairs and nothing else."""
    table = lambda ids, given, surname: SimpleNamespace(  # noqa: E731
        ids=ids, attributes={"given": given, "surname": surname}
    )
    inputs = SimpleNamespace(
        tables={
            "alice": table(["a1", "a2"], ["Katherine", "Jon"], ["Lee", "Kay"]),
            "bob": table(["b1", "b2", "b3"], ["Gatherine", "Jon", "Ann"], ["Lee", "Kay", "Kay"]),
        }
    )
    recipes = parse_recipes(
        "given:soundex+surname:soundex,given:neighbours+surname:soundex", ["given", "surname"]
    )
    truth = [(0, 0), (1, 1)]
    rows = misses.per_recipe(inputs, recipes, truth, [(1, 1)])
    assert [r["recipe"] for r in rows] == [*(r.text for r in recipes), "all together"]
    codes, neighbours, together = rows
    assert (codes["true_pairs_joined"], codes["candidate_pairs"]) == (0.5, 1)
    assert (neighbours["true_pairs_joined"], neighbours["candidate_pairs"]) == (1.0, 2)
    assert together["plain_links_joined"] == 1.0
    assert together["share_of_all_pairs"] == 2 / 6


def test_the_counts_tell_membership_where_a_key_is_shared() -> None:
    """Alice holds keys a, b; Bob's file holds her partner (key a) and one person without a
    partner (key b). Of the listed candidates, the one with key b is certainly Bob's (the
    count of b, less her partners, is 1 and one candidate holds it); a candidate with key a
    is certainly not (her partner accounts for a's count); one with no key of hers stays at
    the prior."""
    alice = [["a"], ["b"]]
    holders = membership.Holders(membership.entries_of(alice))
    partners = [["a"]]
    bob = [["a"], ["b"]]
    candidates = [["b"], ["a"], ["z"]]
    counts = membership.counts_told(holders, bob, {})
    scores = membership.membership_scores(holders, partners, counts, candidates, prior=0.4)
    np.testing.assert_allclose(scores, [1.0, 0.0, 0.4])
    # Two candidates share b and only one of them is Bob's: a half each.
    halves = membership.membership_scores(holders, partners, counts, [["b"], ["b", "z"]], 0.4)
    np.testing.assert_allclose(halves, [0.5, 0.5])
    # Dummy slots add to every entry of a value alike, and the attacker takes their mean off.
    a, b = frozenset("a"), frozenset("b")
    padded = membership.counts_told(holders, bob, {a: 2, b: 0})
    assert (padded[a], padded[b]) == (3, 1)
    blurred = membership.membership_scores(holders, partners, padded, candidates, 0.4, 1.0)
    np.testing.assert_allclose(blurred, [0.0, 1.0, 0.4])  # this draw misleads both ways
    drawn = membership.dummy_padding({a, b, frozenset("c")}, 2.0, np.random.default_rng(0))
    assert set(drawn) == {a, b, frozenset("c")} and min(drawn.values()) >= 0
    assert membership.dummy_padding({a}, 0.0, np.random.default_rng(0)) == {}


def test_a_grouped_entry_is_told_one_count_for_the_rows_holding_any_of_its_keys() -> None:
    """Alice's one row with a grouped recipe's keys g1, g2 (tag ending in *): Bob holds one
    row with g1, one with g2 and one with both; she is told 3 for the entry, not 2 and 2, and
    a listed person holding only g2 shares the entry with the two others who hold one of it."""
    g1, g2 = "recipe 0*|A", "recipe 0*|B"
    holders = membership.Holders(membership.entries_of([[g1, g2, "recipe 1|c"]]))
    assert sorted(map(len, holders.entries)) == [1, 2]
    counts = membership.counts_told(holders, [[g1], [g2], [g1, g2], ["recipe 1|c"]], {})
    assert counts[frozenset([g1, g2])] == 3 and counts[frozenset(["recipe 1|c"])] == 1
    # Of the 3 rows holding the entry, her partner accounts for one: 2 among the 2 listed.
    scores = membership.membership_scores(holders, [[g1]], counts, [[g2], [g1, "x"]], 0.5)
    np.testing.assert_allclose(scores, [1.0, 1.0])


def test_coarse_keys_hash_each_recipes_values_into_its_bins() -> None:
    """Bins keep a key's recipe (a grouped tag too), fold its value into one of B, and merge a
    row's keys that land in one bin; 0 bins leave the keys as they are."""
    keys = [["recipe 0|SMITH", "recipe 1*|A", "recipe 1*|B"], ["recipe 0|JONES"]]
    assert membership.binned(keys, 0) is keys
    one = membership.binned(keys, 1)
    assert one == [["recipe 0|0", "recipe 1*|0"], ["recipe 0|0"]]
    many = membership.binned(keys, 1_000_003)
    assert [len(row) for row in many] == [3, 1]
    assert all(key.startswith(("recipe 0|", "recipe 1*|")) for row in many for key in row)
    assert membership.binned(keys, 1_000_003) == many  # the same bins on both sides


def test_a_share_of_one_or_none_decides_whatever_the_other_keys_say() -> None:
    """Bob's rows hold keys b (one member) and c (held by three listed people, one of them
    his): a candidate holding both is certainly his (b's share is 1) though c's is a third,
    and one holding c and a (a's count all her partner's) is certainly not."""
    holders = membership.Holders(membership.entries_of([["a"], ["b"], ["c"]]))
    counts = membership.counts_told(holders, [["a"], ["b", "c"]], {})
    scores = membership.membership_scores(
        holders, [["a"]], counts, [["b", "c"], ["c", "a"], ["c"]], prior=0.3
    )
    np.testing.assert_allclose(scores, [1.0, 0.0, 1 / 3])
    assert membership.combined([0.5, 0.25]) == 0.25


def test_the_evaluator_sees_which_of_her_keys_a_grouped_entry_holds() -> None:
    """Alice's one row sends the grouped keys g1, g2 as one entry. Bob holds her partner
    (g1) and one person without a partner (g2); the list adds someone in neither file with
    g1. Her entry's count (2, her partner one of them) leaves both candidates at a half; as
    the evaluator of Bob's entries she sees one entry holding g1 (her partner's) and one
    holding g2, which decides both."""
    g1, g2 = "recipe 0*|A", "recipe 0*|B"
    alice = [[g1, g2]]
    bob = [[g1, "recipe 0*|C"], [g2, "recipe 0*|D"]]
    partners, candidates = [bob[0]], [bob[1], [g1, "recipe 0*|E"]]
    holders = membership.Holders(membership.entries_of(alice))
    counts = membership.counts_told(holders, bob, {})
    by_counts = membership.membership_scores(holders, partners, counts, candidates, 0.5)
    np.testing.assert_allclose(by_counts, [0.5, 0.5])
    signatures = membership.Signatures(alice)
    assert signatures.met(bob[1]) == {frozenset([g2])}
    assert signatures.met(["recipe 0*|Z", "recipe 1|z"]) == set()
    told = membership.counts_told(signatures, bob, {})
    as_evaluator = membership.membership_scores(signatures, partners, told, candidates, 0.5)
    np.testing.assert_allclose(as_evaluator, [1.0, 0.0])
    # Together: each person's scores combined; one view alone speaks where the other is
    # silent.
    seen = np.array([True, True, False])
    counted = membership.Guess(np.array([0.5, 0.5, 0.5]), seen)
    evaluated = membership.Guess(np.array([1.0, 0.0, 0.7]), np.array([True, True, True]))
    both = counted.together(evaluated)
    np.testing.assert_allclose(both.scores, [1.0, 0.0, 0.7])
    assert both.seen.all()


def test_the_decrypted_magnitudes_keep_the_truth_and_drop_far_scores() -> None:
    """A pair told every threshold: r (s - t) for s = -5 bounds |s - t| within the factors'
    8 bits, so a person whose score is -5 stays, one at -4 (within the bits) may, and one at
    -5000 (a factor of 1,000 off) or +5 (the other sign) does not; a pair told only its
    sign says nothing of a person on the same side."""
    thresholds = (0.0, 1.6, 3.2)
    scores = np.array([-5.0])
    predicted = np.array([[-5.0, -5000.0, 5.0]])
    told = np.ones((1, 3), dtype=bool)
    kept = attack.magnitudes_consistent(
        scores, predicted, told, thresholds, (10, 18), np.random.default_rng(0)
    )
    assert kept.tolist() == [True, False, False]
    sign_only = np.array([[True, False, False]])
    near = np.array([[-5.0, -6.0, 5.0]])
    kept = attack.magnitudes_consistent(
        scores, near, sign_only, thresholds, (10, 18), np.random.default_rng(0)
    )
    assert kept.tolist() == [True, True, False]


def test_a_pair_is_joined_when_its_rows_share_any_key() -> None:
    """The keys' completeness counts a pair once whichever of its keys it shares."""
    keys_a = [["x", "y"], ["z"], []]
    keys_b = [["y"], ["x", "y"], ["w"]]
    assert misses.joined(keys_a, keys_b, [(0, 0), (0, 1), (1, 0), (2, 2), (0, 2)]) == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_more_people_on_the_attackers_list_find_fewer_members_with_certainty(
    tmp_path, monkeypatch
) -> None:
    """The membership measure on generated files, then with 3,000 more generated people in
    neither file on the list (`--population`): the same people hold a key of hers, and fewer
    of them are found with certainty (here 5.0% and 3.2% of the members)."""
    import json
    from pathlib import Path

    from pprl.party.local import write_demo_data

    files, people = tmp_path / "files", tmp_path / "people"
    options = {"overlap": 0.9, "error_model": "registers", "namesakes": 0.3}
    write_demo_data(files, 800, 5, **options)
    write_demo_data(people, 3000, 6, **options)
    schema = Path(__file__).parents[1] / "benchmarks/generated/schema_names_sealed_default.toml"
    results = []
    for extra in ([], ["--population", str(people / "alice.csv")]):
        out = tmp_path / f"membership{len(extra)}.json"
        argv = ["--records-a", str(files / "alice.csv"), "--records-b", str(files / "bob.csv")]
        argv += ["--truth", str(files / "truth.csv"), "--reference", str(files / "reference.csv")]
        argv += ["--schema", str(schema), "--json", str(out), *extra]
        monkeypatch.setattr("sys.argv", ["sealed_count_membership.py", *argv])
        membership.main()
        results.append(json.loads(out.read_text()))
    files_only, population = results
    assert (files_only["population"], population["population"]) == (0, 3000)
    assert population["absent"] == files_only["absent"] > 0
    seen = files_only["both"]["members_with_a_visible_key"]
    assert population["both"]["members_with_a_visible_key"] == seen > 0
    assert population["both"]["members_at_1"] < files_only["both"]["members_at_1"]
    assert files_only["both"]["members_at_1"] > 0


def test_a_crafted_naming_reads_rows_and_buckets_slot_by_slot() -> None:
    """Alice's rows 0, 1 each hold values A (Bob's rows 10, 11) and B (his row 12 alone); her
    row 0's partner is 10 (bucket 8), row 1 has none (best 5, against 12). Naming entry 0's
    slots makes A complete, so entry 1's unnamed slots, both rejected, are known too; B's
    entries stay unknown, each allowed only its own bucket. Under the evaluator's budget the
    honest rule names each row's best, the crafted one the slots least likely to hold her
    own rows' partners first, and the keys' graph first its one-row values."""
    from lab import naming_budget

    slots = naming_budget.Slots(
        own_row=np.array([0, 0, 1, 1, 0, 1]),
        entry=np.array([0, 0, 1, 1, 2, 3]),
        value=np.array([0, 0, 0, 0, 1, 1]),
        bucket=np.array([8, 3, 0, 0, 2, 5]),
        peer_row=np.array([10, 11, 11, 10, 12, 12]),
    )
    assert slots.value_counts().tolist() == [2, 1]
    told = naming_budget.resolved(slots, np.array([True, True, False, False, False, False]))
    assert told.known.tolist() == [True, True, True, True, False, False]
    assert told.complete.tolist() == [True, False]
    assert told.rows_of_value == [{10, 11}, set()]
    assert (told.allowed[4], told.allowed[5]) == (frozenset({2}), frozenset({5}))
    # B's one row named once: every entry of B is known.
    told = naming_budget.resolved(slots, np.array([False, False, False, False, True, False]))
    assert told.known.tolist() == [False, False, False, False, True, True]
    assert told.values_of_rows() == {12: {1}}

    def named(rule: str, budget: int) -> list[int]:
        chosen = naming_budget.named(slots, rule, budget, np.array([1, 1]))
        return np.flatnonzero(chosen).tolist()

    assert named("best", 10) == [0, 5]
    assert named("best", 1) == [0]
    assert named("highest", 2) == [0, 5]
    # Below each row's best first (highest first), then the weakest best.
    assert named("lookalikes", 1) == [1]
    assert named("lookalikes", 4) == [1, 2, 3, 4]
    assert named("lookalikes", 5) == [1, 2, 3, 4, 5]
    # B (one row) through its entry of highest buckets, then A through entry 0.
    assert named("values", 1) == [5]
    assert named("values", 3) == [0, 1, 5]
    assert named("values", 0) == []
