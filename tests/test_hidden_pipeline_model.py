"""benchmarks/hidden_pipeline_model.py: the join it models, the slots it would open, the rows
without a partner it counts next to the other party's rows, and the partners it removes."""

from __future__ import annotations

import numpy as np

from lab import hash_bins
from pprl.protocol.data.records import RecordTable
from tests.scripts import benchmark_script

model = benchmark_script("hidden_pipeline_model")


def test_the_whole_join_is_every_pair_sharing_a_key() -> None:
    """The join without bins the model scores (`hash_bins.plaintext_join`)."""
    rng = np.random.default_rng(2)
    alice = [sorted(set(rng.integers(0, 30, 3).tolist())) for _ in range(40)]
    bob = [sorted(set(rng.integers(0, 30, 2).tolist())) for _ in range(35)]
    expected = {(i, j) for i, a in enumerate(alice) for j, b in enumerate(bob) if set(a) & set(b)}
    assert hash_bins.plaintext_join(alice, bob)[0] == expected
    assert hash_bins.plaintext_join([[1]], [[2], []])[0] == set()


def test_a_slot_is_opened_only_when_both_scores_reach_the_level() -> None:
    buckets = {"alice": np.array([0, 1, 2, 3, 1]), "bob": np.array([1, 1, 1, 3, 0])}
    assert model.opened(buckets, 1).tolist() == [False, True, True, True, False]
    assert model.opened(buckets, 2).tolist() == [False, False, False, True, False]


def test_rows_without_a_partner_are_counted_once_per_side() -> None:
    found = {(0, 5), (0, 6), (1, 6), (2, 7)}
    alone = {"alice": {0, 3}, "bob": {6, 7, 8}}
    assert model.without_partner_next_to(found, alone) == {"alice": 1, "bob": 2}
    assert model.without_partner_next_to(set(), alone) == {"alice": 0, "bob": 0}


def test_removing_partners_drops_alices_rows_and_their_truth_only() -> None:
    ids = [f"r{k}" for k in range(50)]
    alice = RecordTable("a.csv", [f"a{k}" for k in range(50)], {"name": ids})
    bob = RecordTable("b.csv", [f"b{k}" for k in range(50)], {"name": ids})
    truth = {(f"a{k}", f"b{k}") for k in range(40)}  # ten of Alice's rows have no partner
    tables = {"alice": alice, "bob": bob}
    same, kept = model.partners_removed(tables, truth, 0.0, np.random.default_rng(0))
    assert same["alice"].ids == alice.ids and kept == truth
    cut, left = model.partners_removed(tables, truth, 0.5, np.random.default_rng(0))
    removed = set(alice.ids) - set(cut["alice"].ids)
    assert 8 <= len(removed) <= 32  # about half of the forty partnered rows
    assert left == {(a, b) for a, b in truth if a not in removed}
    assert cut["bob"] is bob
    # The attributes follow the ids that are kept.
    assert cut["alice"].attributes["name"] == [f"r{a[1:]}" for a in cut["alice"].ids]
    none, _ = model.partners_removed(tables, truth, 1.0, np.random.default_rng(0))
    assert none["alice"].ids == [f"a{k}" for k in range(40, 50)]
