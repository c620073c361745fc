"""The scorer's checks of the evaluator under the hidden join (hidden_join.checks): some
of its entries are scored on a constant instead of a vector, so that their slots must decrypt
to a bucket only the scorer knows. An honest evaluator passes them under CKKS; one that
returns anything but its computation, in all of its slots or in half, is caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pprl.files.sealed_bytes import dumped, dumped_ciphertext, evaluation_keys, loaded_ciphertext
from pprl.protocol.sealed import graph_checks, hidden_join, scoring, session
from pprl.protocol.sealed.layout import conflicted
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS
from tests.sealed_keys import held_public

SETTING = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
BUCKETS = len(SETTING.thresholds) + 1


def _entries(rows: int, rng: np.random.Generator) -> hidden_join.Entries:
    """Rows of one to four keys drawn from a few hundred values, so that keys repeat."""
    keys = [[f"k{rng.integers(300)}" for _ in range(rng.integers(1, 5))] for _ in range(rows)]
    return hidden_join.entries(keys, rng)


def _checks(entries: hidden_join.Entries, counts: np.ndarray, rng: np.random.Generator):
    draws = hidden_join.check_draws(len(entries), BUCKETS, rng)
    return hidden_join.checks(entries.rows, counts, draws)


def test_checks_are_a_share_of_the_joined_entries_of_rows_that_keep_another():
    rng = np.random.default_rng(1)
    entries = _entries(3000, rng)
    counts = rng.integers(0, 3, len(entries))  # a third no row of the evaluator's holds
    checks = _checks(entries, counts, rng)
    made = np.flatnonzero(checks >= 0)
    expected = max(hidden_join.CHECK_LEAST, int(np.ceil(hidden_join.CHECK_SHARE * len(entries))))
    assert len(made) == expected
    assert set(checks[made].tolist()) <= set(range(BUCKETS)) and len(set(checks[made])) > 4
    # Each check has slots, and its row another entry with slots.
    assert np.all(counts[made] > 0)
    joined = np.bincount(entries.rows, weights=counts > 0)
    assert np.all(joined[entries.rows[made]] >= 2)
    # Drawn at random among those: another draw takes other entries.
    assert set(made) != set(np.flatnonzero(_checks(entries, counts, rng) >= 0))
    # With a chance that grows with an entry's slots: entries of two slots are taken about
    # twice as often as entries of one (drawn one after another without replacement, a
    # little less than twice).
    taken = np.zeros(len(entries))
    for _ in range(200):
        taken += _checks(entries, counts, rng) >= 0
    joined = np.bincount(entries.rows, weights=counts > 0)[entries.rows] >= 2
    one, two = (taken[joined & (counts == k)].mean() for k in (1, 2))
    assert 1.7 < two / one < 2.1, (one, two)
    # Few entries, few checks, but some as long as any entry can be one: never more than
    # CHECK_MOST_SHARE of them.
    few = _entries(60, rng)
    made = np.count_nonzero(_checks(few, np.ones(len(few), dtype=np.int64), rng) >= 0)
    assert 1 <= made <= np.ceil(hidden_join.CHECK_MOST_SHARE * len(few))
    # No entry joined, or a row with one joined entry, which keeps it: no checks.
    assert np.all(_checks(few, np.zeros(len(few), dtype=np.int64), rng) == -1)
    alone = hidden_join.entries([["a", "b"], ["c"], []], rng)
    one = (alone.rows == 1) | (np.arange(len(alone)) == np.flatnonzero(alone.rows == 0)[0])
    assert np.all(_checks(alone, one.astype(np.int64), rng) == -1)
    assert np.all(_checks(hidden_join.entries([], rng), np.zeros(0, dtype=np.int64), rng) == -1)


def test_a_checks_constant_lies_in_the_middle_of_its_bucket():
    thresholds = SETTING.thresholds
    scores = hidden_join.check_scores(np.arange(-1, BUCKETS), thresholds)
    assert np.isnan(scores[0])
    passed = (scores[1:, None] > np.asarray(thresholds)[None, :]).sum(axis=1)
    assert np.array_equal(passed, np.arange(BUCKETS))
    gaps = np.abs(scores[1:, None] - np.asarray(thresholds)[None, :]).min(axis=1)
    assert np.allclose(gaps, 0.8)  # half the default thresholds' gap of 1.6


def test_a_check_entry_is_scored_on_zeros_and_its_constant_in_both_forms():
    rng = np.random.default_rng(2)
    x, c = rng.normal(size=(5, 6)), rng.normal(size=5)
    alternative = Alternative(np.ones(3), rng.normal(size=(5, 3)), rng.normal(size=5))
    rows = np.array([0, 4, 4, 2])
    scores = np.array([np.nan, 3.2, np.nan, -0.8])
    fx, fc, falt = hidden_join.check_forms(x, c, alternative, rows, scores)
    assert np.array_equal(fx[[0, 2]], x[[0, 4]]) and np.array_equal(fc[[0, 2]], c[[0, 4]])
    assert not fx[[1, 3]].any() and np.array_equal(fc[[1, 3]], [3.2, -0.8])
    assert falt is not None and not falt.indicator[[1, 3]].any()
    assert np.array_equal(falt.constant[[1, 3]], [3.2, -0.8])
    assert np.array_equal(alternative.indicator[4], alternative.indicator[4])  # not changed


def test_a_check_slot_in_another_bucket_is_refused_and_passing_ones_are_never_named():
    checks = np.array([-1, 3, -1, 0])
    slot_entries = np.array([0, 1, 1, 2, 3])
    good = np.array([5, 3, 3, 0, 0])
    assert np.array_equal(hidden_join.checked(slot_entries, checks, good), [5, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="1 of the 3 slots this party can check"):
        hidden_join.checked(slot_entries, checks, np.array([5, 3, 4, 0, 0]))


def _scored(evaluator_returns: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A hidden join's slots scored under CKKS: 4,000 entries of 2,000 scorer rows, each
    joined with 0-3 of 2,500 evaluator rows, checks made, the evaluator honest or returning other
    ciphertexts ("all": an encryption of its own values in every one; "half": in half the
    slots, its computation in the rest). Returns the slots' entries, checks and buckets."""
    rng = np.random.default_rng(3)
    keys = [[f"k{row}", f"j{rng.integers(200)}"] for row in range(2000)]
    entries = hidden_join.entries(keys, rng)
    counts = rng.integers(0, 4, len(entries))
    join = hidden_join.Join(
        np.concatenate([[0], np.cumsum(counts)]), rng.integers(0, 2500, counts.sum())
    )
    slots = hidden_join.slot_pairs(join.counts())
    width = 8
    x, c = rng.normal(size=(2000, width)) / 3, rng.normal(size=2000) * 3
    y = rng.normal(size=(2500, width)) / 3
    checks = _checks(entries, counts, rng)
    scores = hidden_join.check_scores(checks, SETTING.thresholds)
    fx, fc, _ = hidden_join.check_forms(x, c, None, entries.rows, scores)
    placed = hidden_join.every_slot_ranked(
        session.score_layout(slots, SETTING, SETTING.ciphertexts(width + 1))
    )
    theirs = hidden_join.evaluator_layout(placed, join)
    buckets = _round_trip(fx, fc, placed, theirs, y, evaluator_returns, len(slots), rng)
    return slots[:, 0], checks, buckets


def _round_trip(
    fx: np.ndarray,
    fc: np.ndarray,
    placed: Any,
    theirs: Any,
    y: np.ndarray,
    evaluator_returns: str,
    pairs: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The buckets the scorer decrypts: its forms encrypted in its layout, seeded on the wire,
    evaluated in the evaluator's, honestly or replaced (`_tampered`)."""
    keys_ = scoring.secret_keys(SETTING)
    sent = [
        [
            loaded_ciphertext(keys_.context, dumped_ciphertext(item, keys_.context), seeded=True)
            for item in batch
        ]
        for batch in scoring.encrypted_batches(keys_, fx, fc, placed)
    ]
    held = evaluation_keys(keys_.context, dumped(keys_.public), dumped(keys_.conjugation))
    returned = scoring.evaluate(keys_.context, held, sent, y, theirs, SETTING, rng)
    if evaluator_returns != "honest":
        returned = [
            [_tampered(keys_, item, evaluator_returns, rng) for item in b] for b in returned
        ]
    return scoring.buckets(keys_, returned, placed, pairs)


def _tampered(keys: scoring.SecretKeys, ciphertext: Any, how: str, rng: np.random.Generator):
    """The evaluator's result with values of its own added, far larger than a blinded score
    (up to 2^18 times a score's distance from a threshold): in every slot, or in half, the
    signs are then the evaluator's, not its computation's."""
    from tenseal import sealapi

    values = rng.normal(0, 1e6, SETTING.slots) + 1j * rng.normal(0, 1e6, SETTING.slots)
    if how == "half":
        values[rng.random(SETTING.slots) < 0.5] = 0
    plain = sealapi.Plaintext()
    encoder = sealapi.CKKSEncoder(keys.context)
    encoder.encode(values.tolist(), ciphertext.parms_id(), ciphertext.scale, plain)
    added = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, held_public(keys)).encrypt(plain, added)
    sealapi.Evaluator(keys.context).add_inplace(added, ciphertext)
    return added


def test_an_honest_evaluator_passes_every_check_under_ckks():
    slot_entries, checks, buckets = _scored("honest")
    held = checks[slot_entries] >= 0
    assert held.sum() > 30
    kept = hidden_join.checked(slot_entries, checks, buckets)
    assert not kept[held].any() and np.array_equal(kept[~held], buckets[~held])


@pytest.mark.parametrize("how", ["all", "half"])
def test_an_evaluator_returning_its_own_values_fails_the_checks(how: str):
    slot_entries, checks, buckets = _scored(how)
    with pytest.raises(ValueError, match="slots this party can check"):
        hidden_join.checked(slot_entries, checks, buckets)


# -- the keys' graph (graph_checks) ---------------------------------------------------------
def _graph_pairs(rows: int, rng: np.random.Generator) -> np.ndarray:
    """Candidate pairs (own row, peer row), sorted, one to four a row, some peer rows shared:
    pairs in conflict and pairs alone."""
    pairs = {
        (r, int(p)) for r in range(rows) for p in rng.integers(0, 2 * rows, rng.integers(1, 5))
    }
    return np.array(sorted(pairs), dtype=np.int64)


def test_graph_checks_are_a_share_of_the_rows_with_candidates():
    rng = np.random.default_rng(4)
    pairs = _graph_pairs(6000, rng)
    pairs = pairs[pairs[:, 0] % 3 != 0]  # a third of the rows without candidates
    checks = graph_checks.drawn(pairs, BUCKETS, rng)
    with_candidates = np.unique(pairs[:, 0])
    assert len(checks.rows) == int(np.ceil(graph_checks.CHECK_SHARE * len(with_candidates)))
    assert np.isin(checks.rows, with_candidates).all() and len(set(checks.rows)) == len(checks.rows)
    assert set(checks.buckets.tolist()) <= set(range(BUCKETS)) and len(set(checks.buckets)) > 6
    # Rows with more pairs are drawn more often, in proportion.
    taken = np.zeros(6000)
    for _ in range(100):
        np.add.at(taken, graph_checks.drawn(pairs, BUCKETS, rng).rows, 1)
    rows, sizes = np.unique(pairs[:, 0], return_counts=True)
    one, four = (taken[rows[sizes == k]].mean() for k in (1, 4))
    assert 3.4 < four / one < 4.2, (one, four)
    # A few rows: the floor, at most CHECK_MOST_SHARE of them; no pairs, no checks.
    few = graph_checks.drawn(_graph_pairs(50, rng), BUCKETS, rng)
    assert len(few.rows) == int(np.ceil(graph_checks.CHECK_MOST_SHARE * 50))
    assert len(graph_checks.drawn(np.zeros((0, 2), dtype=np.int64), BUCKETS, rng).rows) == 0


def test_a_check_rows_slots_hold_zeros_and_its_constant_and_its_pairs_are_left_to_the_peer():
    rng = np.random.default_rng(5)
    pairs = _graph_pairs(400, rng)
    placed = session.score_layout(pairs, SETTING, SETTING.ciphertexts(9))
    x, c = rng.normal(size=(400, 8)), rng.normal(size=400)
    checks = graph_checks.drawn(pairs, BUCKETS, rng)
    moved, fx, fc, _ = graph_checks.with_check_rows(placed, x, c, None, checks, SETTING.thresholds)
    assert np.array_equal(moved.peers, placed.peers) and np.array_equal(
        moved.pair_of, placed.pair_of
    )
    held = np.isin(placed.rows, checks.rows)
    assert np.array_equal(moved.rows[~held], placed.rows[~held])
    assert np.all(moved.rows[held] >= 400)
    assert np.array_equal(checks.rows[moved.rows[held] - 400], placed.rows[held])
    assert np.array_equal(fx[:400], x) and not fx[400:].any()
    assert np.array_equal(fc[400:], hidden_join.check_scores(checks.buckets, SETTING.thresholds))
    # A pair in no conflict is told its sign alone: its due bucket is 0 or 1.
    due = graph_checks.due(pairs, checks)
    of_checks = np.isin(pairs[:, 0], checks.rows)
    assert np.array_equal(due >= 0, of_checks)
    alone = of_checks & ~conflicted(pairs)
    bucket = dict(zip(checks.rows.tolist(), checks.buckets.tolist(), strict=True))
    expected = [
        min(bucket[r], 1) if a else bucket[r]
        for r, a in zip(pairs[of_checks, 0], alone[of_checks], strict=True)
    ]
    assert np.array_equal(due[of_checks], expected)
    # Passed, each check pair is accepted below any scored one; one off, and all is refused.
    buckets = np.where(of_checks, due, rng.integers(0, BUCKETS, len(pairs)))
    ranks = graph_checks.verified(pairs, checks, buckets)
    assert np.all(ranks[of_checks] == graph_checks.UNSCORED)
    assert np.array_equal(ranks[~of_checks], buckets[~of_checks])
    wrong = buckets.copy()
    wrong[np.flatnonzero(of_checks)[0]] += 1
    with pytest.raises(ValueError, match=r"1 of the .* pairs this party can check"):
        graph_checks.verified(pairs, checks, wrong)


def _graph_scored(
    evaluator_returns: str,
) -> tuple[np.ndarray, graph_checks.GraphChecks, np.ndarray]:
    """The keys' graph's pairs scored under CKKS (3,000 scorer rows, 1-4 candidates each),
    check rows made, the evaluator honest or returning other ciphertexts (`_tampered`).
    Returns the pairs, the checks and the buckets."""
    rng = np.random.default_rng(6)
    pairs = _graph_pairs(3000, rng)
    width = 8
    x, c = rng.normal(size=(3000, width)) / 3, rng.normal(size=3000) * 3
    y = rng.normal(size=(6000, width)) / 3
    placed = session.score_layout(pairs, SETTING, SETTING.ciphertexts(width + 1))
    checks = graph_checks.drawn(pairs, BUCKETS, rng)
    moved, fx, fc, _ = graph_checks.with_check_rows(placed, x, c, None, checks, SETTING.thresholds)
    return pairs, checks, _round_trip(fx, fc, moved, placed, y, evaluator_returns, len(pairs), rng)


def test_an_honest_evaluator_passes_every_graph_check_under_ckks():
    pairs, checks, buckets = _graph_scored("honest")
    due = graph_checks.due(pairs, checks)
    assert np.count_nonzero(due >= 0) > 40 and np.count_nonzero(due > 1) > 5
    ranks = graph_checks.verified(pairs, checks, buckets)
    assert np.array_equal(ranks[due < 0], buckets[due < 0])


@pytest.mark.parametrize("how", ["all", "half"])
def test_an_evaluator_returning_its_own_values_fails_the_graph_checks(how: str):
    pairs, checks, buckets = _graph_scored(how)
    with pytest.raises(ValueError, match="pairs this party can check"):
        graph_checks.verified(pairs, checks, buckets)
