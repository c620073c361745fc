"""The hidden join's parts (pprl.protocol.sealed.hidden_join): entries that carry no row, the
evaluator's join and its counts, the slots both parties lay out, and what a scorer may name."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.sealed import hidden_join, session
from pprl.protocol.sealed.blinding import Blinder, split
from pprl.protocol.sealed.layout import conflicted
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.recipes import group_size, parse_recipes, recipe_keys
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS
from pprl.protocol.sealed.shared_keys import shared_key_pairs

CONTEXT = b"pprl sealed keys|test|run"


def _rows(n: int, keys: int, values: int, rng: np.random.Generator) -> list[list[str]]:
    """n rows of `keys` keys each, drawn from `values` values per recipe (tagged), so that
    rows share keys and some pairs share several."""
    return [[f"r{k}:{rng.integers(values)}" for k in range(keys)] for _ in range(n)]


def test_entries_hold_each_rows_distinct_keys_once_in_an_order_that_hides_the_rows():
    rng = np.random.default_rng(1)
    rows = [["a", "b", "a"], [], ["c"], ["a", "d"], *_rows(200, 2, 50, rng)]
    entries = hidden_join.entries(rows, np.random.default_rng(2))
    held = sorted(zip(entries.rows.tolist(), entries.keys, strict=True))
    expected = sorted((r, (k,)) for r, keys in enumerate(rows) for k in dict.fromkeys(keys))
    assert held == expected
    # Shuffled: the rows do not come in order, and the two keys of a row rarely sit together.
    assert not np.all(np.diff(entries.rows) >= 0)
    together = np.count_nonzero(np.diff(entries.rows) == 0)
    assert together < len(entries) // 20


def _blinded_join(own: list[list[str]], peer: list[list[str]], seed: int = 3, group: int = 1):
    """The hidden join for `own`'s classifier, with `peer` evaluating, as the daemons make it:
    entries blinded by the scorer's entry scalar and the evaluator's row scalar; the
    evaluator's row keys by its row scalar, returned blinded by the scorer's entry scalar."""
    rng = np.random.default_rng(seed)
    entry_scalar, row_scalar = Blinder(), Blinder()
    entries = hidden_join.entries(own, rng, group)
    sizes, once = session.blinded_rows(entry_scalar, CONTEXT, entries.keys)
    twice = session.reblinded(row_scalar, once, "entries")
    counts, rows_once = session.blinded_rows(row_scalar, CONTEXT, peer)
    rows_twice = session.grouped(counts, session.reblinded(entry_scalar, rows_once, "rows"))
    join = hidden_join.joined(session.grouped(sizes, twice), rows_twice, rng)
    return entries, join


def test_the_evaluators_join_gives_every_pair_that_shares_a_key_once_per_key_shared():
    rng = np.random.default_rng(4)
    own, peer = _rows(150, 3, 40, rng), _rows(170, 3, 40, rng)
    entries, join = _blinded_join(own, peer)
    slots = hidden_join.slot_pairs(join.counts())
    pairs = np.stack([entries.rows[slots[:, 0]], join.rows[slots[:, 1]]], axis=1)
    shared = {
        (i, j): len(set(own[i]) & set(peer[j]))
        for i in range(len(own))
        for j in range(len(peer))
        if set(own[i]) & set(peer[j])
    }
    found, times = np.unique(pairs, axis=0, return_counts=True)
    assert {tuple(p): int(t) for p, t in zip(found.tolist(), times, strict=True)} == shared
    # The union of the slots' pairs is the graph join's candidates, on the plaintext keys.
    plain = shared_key_pairs(
        [[k.encode() for k in r] for r in own], [[k.encode() for k in r] for r in peer]
    )
    assert np.array_equal(found, plain)
    # What the scorer is told: per entry, the evaluator's rows holding its key.
    for e in range(len(entries)):
        (key,) = entries.keys[e]
        holders = sum(key in set(row) for row in peer)
        assert join.counts()[e] == holders


@pytest.mark.parametrize("slots", [1, 2])
def test_a_fixed_count_gives_every_entry_its_slots_holders_first_then_dummies(slots):
    rng = np.random.default_rng(5)
    own, peer = _rows(150, 3, 40, rng), _rows(170, 3, 40, rng)
    entries, join = _blinded_join(own, peer)
    fixed = hidden_join.fixed(join, slots, len(peer), np.random.default_rng(6))
    assert fixed.counts().tolist() == [slots] * len(entries)
    for e in range(len(entries)):
        holders = join.rows[join.starts[e] : join.starts[e + 1]].tolist()
        filled = fixed.rows[fixed.starts[e] : fixed.starts[e + 1]].tolist()
        kept = min(len(holders), slots)
        # The evaluator's first holders (its order is a random one), then rows not holding
        # the entry's key: a dummy never scores a pair that shares it.
        assert filled[:kept] == holders[:kept]
        assert not set(filled[kept:]) & set(holders)
        assert all(0 <= row < len(peer) for row in filled)


def test_a_fixed_count_tells_the_scorer_the_same_whoever_is_in_the_evaluators_file():
    """The counts of the exact join change when one person joins the evaluator's file; the
    fixed count's do not, so membership cannot be read from them."""
    rng = np.random.default_rng(7)
    own, peer = _rows(100, 3, 30, rng), _rows(100, 3, 30, rng)
    person = own[0]  # someone the scorer holds
    _, without = _blinded_join(own, peer, seed=8)
    _, with_person = _blinded_join(own, [*peer, person], seed=8)
    assert not np.array_equal(without.counts(), with_person.counts())
    fixed = [
        hidden_join.fixed(j, 1, n, np.random.default_rng(9)).counts()
        for j, n in ((without, len(peer)), (with_person, len(peer) + 1))
    ]
    assert np.array_equal(*fixed)


def test_only_the_evaluator_can_join_the_scorer_holds_nothing_that_meets_the_peers_keys():
    # In the graph join both parties hold both sides blinded twice and equal keys meet. Here
    # the scorer holds its own rows' keys blinded by the peer's entry scalar and the peer's
    # rows' keys blinded by its own entry scalar (for the other direction, by two other
    # scalars): none meet, though every key is shared.
    keys = [["k1", "k2"], ["k3"]]
    a_entry, a_row, b_entry, b_row = (Blinder() for _ in range(4))
    counts, a_once = session.blinded_rows(a_row, CONTEXT, keys)
    a_back = session.reblinded(b_entry, a_once, "a's rows")  # what Alice keeps of her rows
    _, b_once = session.blinded_rows(b_row, CONTEXT, keys)
    b_back = session.reblinded(a_entry, b_once, "b's rows")  # what Alice returns to Bob
    _, a_entries = session.blinded_rows(a_entry, CONTEXT, [["k1"], ["k2"], ["k3"]])
    bob_holds = set(split(session.reblinded(b_row, a_entries, "a's entries"), 3, "entries"))
    alice_holds = set(split(a_back, 3, "a")) | set(split(a_entries, 3, "a's entries"))
    assert not alice_holds & set(split(b_back, 3, "b"))
    # ... while Bob, the evaluator of Alice's entries, meets his rows' keys (returned to him).
    assert bob_holds == set(split(b_back, 3, "b"))
    assert counts.tolist() == [2, 1]


def test_resolving_gives_the_slot_rows_and_refuses_a_slot_the_join_does_not_hold():
    join = hidden_join.Join(np.array([0, 2, 2, 3]), np.array([7, 4, 9]))
    assert join.counts().tolist() == [2, 0, 1]
    assert join.resolve(np.array([0, 0, 2]), np.array([1, 0, 0])).tolist() == [4, 7, 9]
    for entry, slot in ((1, 0), (0, 2), (3, 0), (-1, 0), (0, -1)):
        with pytest.raises(ValueError, match="holds no row"):
            join.resolve(np.array([entry]), np.array([slot]))


def test_the_layout_puts_one_entry_per_row_and_the_evaluator_fills_its_own_rows():
    counts = np.array([3, 0, 1, 2])
    slots = hidden_join.slot_pairs(counts)
    assert slots.tolist() == [[0, 0], [0, 1], [0, 2], [2, 3], [3, 4], [3, 5]]
    ckks = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
    placed = hidden_join.every_slot_ranked(session.score_layout(slots, ckks, 10))
    # Every slot returns its bucket: neither party knows which slots share a row.
    assert np.array_equal(placed.ranked, placed.pair_of >= 0)
    assert not conflicted(slots)[3]  # an entry with one slot would otherwise get its sign only
    join = hidden_join.Join(np.concatenate([[0], np.cumsum(counts)]), np.array([5, 1, 8, 2, 2, 0]))
    theirs = hidden_join.evaluator_layout(placed, join)
    used = placed.pair_of >= 0
    assert np.array_equal(theirs.peers[used], join.rows[slots[placed.pair_of[used], 1]])
    assert np.all(theirs.peers[~used] == -1)
    assert np.array_equal(theirs.rows, placed.rows)


def test_a_row_names_a_fallback_slot_only_when_no_other_key_found_it_a_pair():
    """Row 0 holds an accepted ordinary slot (bucket 2) and a fallback slot in a higher
    bucket (5): scored on fewer values, the fallback one would outrank its partner, so it
    names the ordinary one. Row 1 has only a rejected ordinary slot: it names its best
    fallback slot. Without the flags the rule is as before."""
    own_rows = np.array([0, 0, 1, 1, 1])
    buckets = np.array([2, 5, 0, 3, 1])
    fallback = np.array([False, True, False, True, True])
    most = np.array([2, 3])
    named = hidden_join.best_slots(own_rows, buckets, most, fallback=fallback)
    assert named.tolist() == [1, 0, 0, 1, 0]
    assert hidden_join.best_slots(own_rows, buckets, most).tolist() == [0, 1, 0, 1, 0]


def test_an_entry_knows_whether_it_is_a_fallback_key():
    found = hidden_join.entries(
        [["recipe 0|a", "recipe 1.2|b"], ["recipe 1.1|c"]], np.random.default_rng(0)
    )
    flags = {keys[0]: flag for keys, flag in zip(found.keys, found.fallback, strict=True)}
    assert flags == {"recipe 0|a": False, "recipe 1.2|b": True, "recipe 1.1|c": True}


def test_a_row_names_only_its_accepted_slots_in_its_best_bucket():
    own_rows = np.array([0, 0, 0, 1, 1, 2, 2])
    buckets = np.array([3, 5, 5, 0, 0, 2, 1])
    most = np.array([3, 3, 3])
    assert hidden_join.best_slots(own_rows, buckets, most).tolist() == [0, 1, 1, 0, 0, 1, 0]
    assert hidden_join.best_slots(own_rows, buckets, most, levels=2).tolist() == [
        1,
        1,
        1,
        0,
        0,
        1,
        1,
    ]
    # No more than a row's entries: the first of its ties in the slots' order, so that an
    # honest scorer never names more slots than the entries it sent (the evaluator's bound).
    own_rows = np.array([1, 0, 1, 0, 1, 1])
    buckets = np.array([4, 2, 4, 2, 4, 3])
    named = hidden_join.best_slots(own_rows, buckets, np.array([2, 1]))
    assert named.tolist() == [1, 1, 0, 1, 0, 0]
    assert hidden_join.best_slots(own_rows, buckets, np.array([2, 1]), levels=1).tolist() == [
        1,
        1,
        0,
        1,
        0,
        0,
    ]
    # Loose keys: many slots an entry, few buckets, so ties; the rows never name more slots
    # than the entries sent.
    rng = np.random.default_rng(3)
    entry_rows = rng.integers(0, 40, 120)
    counts = rng.integers(0, 30, 120)
    slots = hidden_join.slot_pairs(counts)
    most = np.bincount(entry_rows, minlength=40)
    ties = hidden_join.best_slots(entry_rows[slots[:, 0]], rng.integers(0, 3, len(slots)), most)
    assert 0 < ties.sum() <= len(entry_rows)
    # A pair named in two slots (two shared keys) is one pair at its best bucket.
    pairs, best = hidden_join.accepted_pairs(
        np.array([0, 0, 1, 2]), np.array([4, 4, 4, 9]), np.array([2, 5, 1, 0])
    )
    assert pairs.tolist() == [[0, 4], [1, 4]] and best.tolist() == [5, 1]


def test_no_entries_or_no_shared_key_give_empty_slots_and_no_pairs():
    rng = np.random.default_rng(5)
    empty = hidden_join.entries([[], []], rng)
    assert len(empty) == 0 and empty.rows.shape == (0,)
    join = hidden_join.joined([], [[b"x"]], rng)
    assert join.counts().tolist() == [] and hidden_join.slot_pairs(join.counts()).shape == (0, 2)
    # Entries that no row of the evaluator holds: counts of 0, no slot to name or resolve.
    join = hidden_join.joined([b"a", b"b"], [[b"c"], []], rng)
    assert join.counts().tolist() == [0, 0]
    assert join.resolve(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).shape == (0,)
    empty = np.zeros(0, dtype=np.int64)
    assert hidden_join.best_slots(empty, np.zeros(0), empty).shape == (0,)
    pairs, best = hidden_join.accepted_pairs(
        np.array([0]),
        np.array([1]),
        np.array([0]),  # rejected: nothing to pair
    )
    assert pairs.shape == (0, 2) and best.shape == (0,)


def test_a_movers_alternative_follows_the_entries_rows():
    form = Alternative(np.array([1.0, 0.5]), np.arange(6.0).reshape(3, 2), np.array([7.0, 8, 9]))
    taken = form.taken(np.array([2, 0, 2]))
    assert np.array_equal(taken.ratios, form.ratios)
    assert taken.indicator.tolist() == [[4, 5], [0, 1], [4, 5]]
    assert taken.constant.tolist() == [9, 7, 9]


def test_a_grouped_entry_takes_one_slot_for_each_evaluator_row_holding_any_of_its_keys():
    """One-edit neighbours give two rows with the same name every key of the group: as one
    entry, padded to the agreed size with keys no row holds, the pair takes one slot, and a
    row one edit away one slot too."""
    written = "given:neighbours+surname:soundex,given:soundex+surname:soundex"
    recipes = parse_recipes(written, ["given", "surname"])
    group = group_size(written)
    own = recipe_keys({"given": ["Maria", "Peter"], "surname": ["Lee", "Kay"]}, recipes)
    peer = recipe_keys(
        {"given": ["Maria", "Mario", "Marta", "Bert"], "surname": ["Lee", "Lee", "Lee", "Kay"]},
        recipes,
    )
    entries, join = _blinded_join(own, peer, group=group)
    assert sorted(len(keys) for keys in entries.keys) == [1, 1, group, group]
    assert sum(key.startswith(hidden_join.PAD) for keys in entries.keys for key in keys) == (
        2 * group - 6 - 6
    )
    slots = hidden_join.slot_pairs(join.counts())
    pairs = sorted(
        zip(entries.rows[slots[:, 0]].tolist(), join.rows[slots[:, 1]].tolist(), strict=True)
    )
    # Maria: Maria and Mario through the group (once each), Maria and Marta (M630 both) and
    # Mario through the codes; Peter: nobody (Bert's code differs, neighbours too).
    assert pairs == [(0, 0), (0, 0), (0, 1), (0, 1), (0, 2)]
    with pytest.raises(ValueError, match="more than"):
        hidden_join.entries(own, np.random.default_rng(1), group=3)
