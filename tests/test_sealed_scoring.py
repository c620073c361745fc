"""Encrypted scoring: the layout places every candidate pair once, the decrypted signs are the
plaintext classifier's away from the boundary, the evaluator holds no secret key, and the
scores the scoring party decrypts are blinded by wide per-pair factors."""

from __future__ import annotations

import numpy as np
import pytest
import tenseal as ts

from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.layout import ENCRYPT_COST, best_rounds, candidate_counts, layout


def _pairs(rng: np.random.Generator, own: int, peer: int, count: int) -> np.ndarray:
    drawn = np.stack([rng.integers(0, own, count), rng.integers(0, peer, count)], axis=1)
    return np.unique(drawn, axis=0)


def test_layout_places_every_pair_once_in_the_fewest_slots_per_row() -> None:
    rng = np.random.default_rng(3)
    # Skewed: a few rows with many candidates, as blocks on common names give.
    pairs = np.concatenate([_pairs(rng, 500, 400, 2000), _pairs(rng, 5, 400, 600)])
    pairs = np.unique(pairs, axis=0)
    for rounds in (1, 3, 7):
        placed = layout(pairs, slots=64, rounds=rounds)
        index = placed.pair_of[placed.pair_of >= 0]
        assert sorted(index.tolist()) == list(range(len(pairs)))
        peers = placed.peers[placed.pair_of >= 0]
        rows = np.broadcast_to(placed.rows, placed.peers.shape)[placed.pair_of >= 0]
        assert np.array_equal(pairs[index], np.stack([rows, peers], axis=1))
        assert len(placed.rows) == int(np.ceil(candidate_counts(pairs) / rounds).sum())
    chosen = best_rounds(pairs, 64)
    cost = [layout(pairs, 64, r).batches * (ENCRYPT_COST + r) for r in range(1, 40)]
    assert layout(pairs, 64, chosen).batches * (ENCRYPT_COST + chosen) == min(cost)
    assert chosen > 1  # rows with many candidates share slots rather than fill batches


@pytest.fixture(scope="module")
def scored() -> dict[str, object]:
    rng = np.random.default_rng(7)
    own, peer, width = 300, 250, 12
    x = rng.normal(size=(own, width)) / np.sqrt(width)
    y = rng.normal(size=(peer, width)) / np.sqrt(width)
    c = rng.normal(size=own) * 0.3
    pairs = _pairs(rng, own, peer, 3000)
    setting = scoring.CkksSetting()
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    context = scoring.secret_context(setting)
    public = scoring.public_context(context)
    sent = scoring.encrypt(context, x, c, placed)
    returned = scoring.evaluate(public, sent, y, placed, setting, rng)
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    return {
        "context": context,
        "public": public,
        "sent": sent,
        "returned": returned,
        "placed": placed,
        "pairs": pairs,
        "plain": plain,
        "y": y,
        "setting": setting,
    }


def test_signs_are_the_plaintext_decisions_away_from_the_boundary(scored: dict) -> None:
    decided = scoring.accepted(
        scored["context"],
        scored["returned"],
        scored["placed"],
        len(scored["pairs"]),
        scored["setting"],
    )
    plain = scored["plain"]
    clear = np.abs(plain) > 0.05
    assert clear.mean() > 0.9
    assert np.array_equal(decided[clear], plain[clear] > 0)
    assert (decided == (plain > 0)).mean() > 0.99


def test_the_evaluator_holds_no_secret_key(scored: dict) -> None:
    public = ts.context_from(scored["public"])
    assert not public.has_secret_key()
    vector = ts.ckks_vector_from(public, scored["returned"][0][0])
    with pytest.raises(ValueError):
        vector.decrypt()


def test_decrypted_scores_are_blinded_by_wide_factors(scored: dict) -> None:
    placed, plain = scored["placed"], scored["plain"]
    values = np.asarray(ts.ckks_vector_from(scored["context"], scored["returned"][0][0]).decrypt())
    index = placed.pair_of[0, : placed.slots]
    used = (index >= 0) & (np.abs(plain[np.maximum(index, 0)]) > 0.2)
    ratios = values[: len(index)][used] / plain[index[used]]
    assert (ratios > 0).all()
    low, high = scored["setting"].factor_bits
    spread = np.log2(ratios.max() / ratios.min())
    assert spread > (high - low) / 2  # not one factor: magnitudes say little


def test_buckets_among_thresholds_are_the_plaintext_buckets() -> None:
    rng = np.random.default_rng(11)
    own, peer, width = 120, 100, 8
    x = rng.normal(size=(own, width)) / np.sqrt(width)
    y = rng.normal(size=(peer, width)) / np.sqrt(width)
    c = rng.normal(size=own)
    pairs = _pairs(rng, own, peer, 1500)
    setting = scoring.CkksSetting(thresholds=(0.0, 0.5, 1.0, 2.0))
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    context = scoring.secret_context(setting)
    sent = scoring.encrypt(context, x, c, placed)
    returned = scoring.evaluate(scoring.public_context(context), sent, y, placed, setting, rng)
    found = scoring.buckets(context, returned, placed, len(pairs), setting)
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    expected = np.searchsorted(np.array(setting.thresholds), plain, side="right")
    edges = np.array(setting.thresholds)
    clear = np.abs(plain[:, None] - edges[None, :]).min(axis=1) > 0.05
    assert len(set(expected[clear].tolist())) == 5  # every bucket occurs
    assert np.array_equal(found[clear], expected[clear])
    with pytest.raises(ValueError, match="rise from 0"):
        scoring.CkksSetting(thresholds=(0.5, 1.0))


def test_a_wrong_ciphertext_count_is_refused(scored: dict) -> None:
    short = [batch[:-1] for batch in scored["sent"]]
    with pytest.raises(ValueError, match="ciphertexts where 13 were agreed"):
        scoring.evaluate(
            scored["public"],
            short,
            scored["y"],
            scored["placed"],
            scored["setting"],
            np.random.default_rng(0),
        )
