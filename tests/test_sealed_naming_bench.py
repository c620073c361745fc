"""The hidden join benchmark's cap on slots named a row, and the dummy slots' simulation."""

from __future__ import annotations

import numpy as np

from pprl.protocol.sealed.parameters import CkksSetting
from tests.scripts import benchmark_script

hidden = benchmark_script("sealed_hidden_join")
dummies = benchmark_script("sealed_dummy_slots")


def test_a_row_names_at_most_k_of_its_ties_the_first_in_the_order_given() -> None:
    own_rows = np.array([0, 0, 0, 1, 1])
    buckets = np.array([3, 3, 1, 2, 2])
    fallback = np.zeros(5, dtype=bool)
    most = np.array([1, 1])
    first = hidden.tie_order("first", np.array([5, 2, 1, 4, 1]), np.zeros(5))
    named = hidden.capped_names(own_rows, buckets, most, 0, fallback, first)
    assert named.tolist() == [True, False, False, True, False]
    fewest = hidden.tie_order("count", np.array([5, 2, 1, 4, 1]), np.zeros(5))
    named = hidden.capped_names(own_rows, buckets, most, 0, fallback, fewest)
    assert named.tolist() == [False, True, False, False, True]


def test_a_fixed_count_cuts_each_entry_and_fills_the_rest_with_dummies() -> None:
    scorer = [["k|a"], ["k|b", "k|c"]]
    evaluator = [["k|a"], ["k|a"], ["k|c"]]
    slots = dummies.fixed_slots(scorer, evaluator, 1, 1, np.random.default_rng(0))
    held = dict(zip(slots.real_own.tolist(), slots.real_peer.tolist(), strict=True))
    assert sorted(held) == [0, 1] and held[0] in (0, 1) and held[1] == 2
    assert slots.dummy_own.tolist() == [1]  # the entry of k|b: no row holds it
    rows = dummies.dummy_rows(slots, "random", 3, np.random.default_rng(0))
    assert rows.shape == (1,) and 0 <= rows[0] < 3


def test_a_rejects_decrypted_values_are_negative_and_tell_its_size_roughly() -> None:
    setting = CkksSetting(thresholds=(0.0, 1.6, 3.2))
    rng = np.random.default_rng(0)
    near, far = (dummies.decrypted(np.full(500, s), setting, rng) for s in (-2.0, -32.0))
    assert (near < 0).all() and (far < 0).all()
    # |s| within the factors' 8 bits: the middles of -2 and of -32 (log2 1 and 5) mostly apart
    near_middle, far_middle = (dummies.interval_middle(v, setting) for v in (near, far))
    assert np.mean(near_middle[:, None] < far_middle[None, :]) > 0.9
