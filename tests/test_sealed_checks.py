"""The scorer's checks of the evaluator under the hidden join (hidden_join.with_checks): some
of its entries are scored on a constant instead of a vector, so that their slots must decrypt
to a bucket only the scorer knows. An honest evaluator passes them under CKKS; one that
returns anything but its computation, in all of its slots or in half, is caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pprl.files.sealed_bytes import dumped, dumped_ciphertext, evaluation_keys, loaded_ciphertext
from pprl.protocol.sealed import hidden_join, scoring, session
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS

SETTING = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
BUCKETS = len(SETTING.thresholds) + 1


def _entries(rows: int, rng: np.random.Generator) -> hidden_join.Entries:
    """Rows of one to four keys drawn from a few hundred values, so that keys repeat."""
    keys = [[f"k{rng.integers(300)}" for _ in range(rng.integers(1, 5))] for _ in range(rows)]
    return hidden_join.entries(keys, rng)


def test_checks_are_a_share_of_the_entries_of_rows_that_keep_another():
    rng = np.random.default_rng(1)
    entries = _entries(3000, rng)
    checked = hidden_join.with_checks(entries, BUCKETS, rng)
    checks = checked.check_buckets
    made = np.flatnonzero(checks >= 0)
    expected = max(hidden_join.CHECK_LEAST, int(np.ceil(hidden_join.CHECK_SHARE * len(entries))))
    assert len(made) == expected
    assert set(checks[made].tolist()) <= set(range(BUCKETS)) and len(set(checks[made])) > 4
    per_row = np.bincount(entries.rows)
    assert np.all(per_row[entries.rows[made]] >= 2)
    # The keys and rows are the entries' own: nothing the evaluator sees changes.
    assert checked.keys == entries.keys and np.array_equal(checked.rows, entries.rows)
    assert np.all(hidden_join.entries([["a"], ["b"]], rng).check_buckets == -1)
    # Few entries, few checks: never more than CHECK_MOST_SHARE of them.
    few = hidden_join.with_checks(_entries(60, rng), BUCKETS, rng)
    assert (
        1
        <= np.count_nonzero(few.check_buckets >= 0)
        <= np.ceil(hidden_join.CHECK_MOST_SHARE * len(few))
    )
    # A row with one entry keeps it: with no row of two, no checks.
    alone = hidden_join.with_checks(hidden_join.entries([["a"], ["b"], []], rng), BUCKETS, rng)
    assert np.all(alone.check_buckets == -1)


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
    entries = hidden_join.with_checks(hidden_join.entries(keys, rng), BUCKETS, rng)
    counts = rng.integers(0, 4, len(entries))
    join = hidden_join.Join(
        np.concatenate([[0], np.cumsum(counts)]), rng.integers(0, 2500, counts.sum())
    )
    slots = hidden_join.slot_pairs(join.counts())
    width = 8
    x, c = rng.normal(size=(2000, width)) / 3, rng.normal(size=2000) * 3
    y = rng.normal(size=(2500, width)) / 3
    checks = entries.check_buckets
    scores = hidden_join.check_scores(checks, SETTING.thresholds)
    fx, fc, _ = hidden_join.check_forms(x, c, None, entries.rows, scores)
    placed = hidden_join.every_slot_ranked(
        session.score_layout(slots, SETTING, SETTING.ciphertexts(width + 1))
    )
    keys_ = scoring.secret_keys(SETTING)
    sent = [
        [
            loaded_ciphertext(keys_.context, dumped_ciphertext(item, keys_.context), seeded=True)
            for item in batch
        ]
        for batch in scoring.encrypted_batches(keys_, fx, fc, placed)
    ]
    held = evaluation_keys(keys_.context, dumped(keys_.public), dumped(keys_.conjugation))
    theirs = hidden_join.evaluator_layout(placed, join)
    returned = scoring.evaluate(keys_.context, held, sent, y, theirs, SETTING, rng)
    if evaluator_returns != "honest":
        returned = [
            [_tampered(keys_, item, evaluator_returns, rng) for item in b] for b in returned
        ]
    buckets = scoring.buckets(keys_, returned, placed, len(slots))
    return slots[:, 0], checks, buckets


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
    sealapi.Encryptor(keys.context, keys.public).encrypt(plain, added)
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
