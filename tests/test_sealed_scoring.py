"""Encrypted scoring: the layout places every candidate pair once, the decrypted signs are the
plaintext classifier's away from the boundary, the evaluator holds no secret key, and the
scores the scoring party decrypts are blinded by wide per-pair factors."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from lab.sealed_round_trip import round_trip
from pprl.files.sealed_bytes import dumped, loaded, loaded_ciphertext
from pprl.protocol.linkage.matching import ASSIGNMENTS
from pprl.protocol.sealed import linear_form, scoring, session
from pprl.protocol.sealed.layout import (
    ENCRYPT_COST,
    FRESH_BYTES,
    RETURNED_BYTES,
    TIME_SLACK,
    best_rounds,
    candidate_counts,
    conflicted,
    layout,
)


def _pairs(rng: np.random.Generator, own: int, peer: int, count: int) -> np.ndarray:
    drawn = np.stack([rng.integers(0, own, count), rng.integers(0, peer, count)], axis=1)
    return np.unique(drawn, axis=0)


def _scored_through_bytes(
    keys: scoring.SecretKeys,
    x: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    placed: Any,
    setting: scoring.CkksSetting,
    rng: np.random.Generator,
    alternative: linear_form.Alternative | None = None,
) -> dict[str, Any]:
    """Both sides of encrypted scoring with every object passed as the bytes the wire
    carries: the scoring party's seeded ciphertexts, public key and conjugation key, the
    evaluator's results."""
    assert keys.setting == setting
    run = round_trip(keys, x, c, y, placed, rng, alternative)
    return {
        "sent": run.sent,
        "public": run.public,
        "conjugation": run.conjugation,
        "returned": run.returned,
    }


def _decrypted(keys: scoring.SecretKeys, ciphertext: Any) -> np.ndarray:
    """A returned ciphertext's slots, complex: two thresholds' values, real and imaginary."""
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    sealapi.Decryptor(keys.context, keys.secret).decrypt(ciphertext, plain)
    return np.asarray(sealapi.CKKSEncoder(keys.context).decode_complex(plain))


def _bucketed(
    x: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    pairs: np.ndarray,
    setting: scoring.CkksSetting,
    rng: np.random.Generator,
) -> dict:
    """The pairs scored under CKKS and their buckets read back, beside the plaintext
    buckets and which pairs lie clear of every threshold (the flooding's sign errors stay
    within 0.05 of one)."""
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    keys = scoring.secret_keys(setting)
    returned = _scored_through_bytes(keys, x, c, y, placed, setting, rng)["returned"]
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    edges = np.array(setting.thresholds)
    return {
        "found": scoring.buckets(keys, returned, placed, len(pairs)),
        "expected": np.searchsorted(edges, plain, side="right"),
        "clear": np.abs(plain[:, None] - edges[None, :]).min(axis=1) > 0.05,
        "keys": keys,
        "returned": returned,
        "placed": placed,
    }


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
    cost = [_work(layout(pairs, 64, r)) for r in range(1, 40)]
    assert _work(layout(pairs, 64, chosen)) == min(cost)
    assert chosen > 1  # rows with many candidates share slots rather than fill batches


def _work(placed: Any, coordinates: int = 1, thresholds: int = 0) -> int:
    """Products' worth of work of a layout: per batch, encrypting each coordinate and its
    rounds of products, and encrypting each returned ciphertext's flooding."""
    rounds = [placed.batch_rounds(b) for b in range(placed.batches)]
    work = sum(coordinates * (ENCRYPT_COST + r) for r in rounds)
    return work + sum(rounds) * thresholds * (ENCRYPT_COST + 1)


def test_rows_with_most_candidates_come_first_and_later_batches_need_fewer_rounds() -> None:
    """A batch returns one ciphertext per round its fullest slot needs: rows placed by their
    candidate count, most first, leave the batches of rows with few candidates short."""
    rng = np.random.default_rng(8)
    many = _pairs(rng, 30, 400, 1500)  # rows 0-29: about 50 candidates each
    few = _pairs(rng, 400, 400, 800) + np.array([30, 0])  # rows 30-429: one to five
    pairs = np.concatenate([few, many])
    placed = layout(pairs, slots=16, rounds=12)
    counts = {row: int((pairs[:, 0] == row).sum()) for row in set(pairs[:, 0].tolist())}
    placed_counts = [counts[row] for row in dict.fromkeys(placed.rows.tolist())]
    assert placed_counts == sorted(placed_counts, reverse=True)
    rounds = [placed.batch_rounds(b) for b in range(placed.batches)]
    assert rounds[0] == 12 and rounds[-1] <= 2 and rounds == sorted(rounds, reverse=True)
    assert sum(rounds) < 0.5 * placed.batches * placed.rounds


def test_the_rounds_best_rounds_counts_are_the_layouts() -> None:
    """best_rounds weighs each batch's rounds without building the layout: they must be the
    ones the layout gives."""
    from pprl.protocol.sealed.layout import batch_rounds

    rng = np.random.default_rng(13)
    pairs = np.concatenate([_pairs(rng, 700, 300, 2500), _pairs(rng, 15, 300, 900)])
    counts = candidate_counts(pairs)
    for slots, rounds in ((16, 1), (16, 5), (64, 9), (32, 40)):
        placed = layout(pairs, slots, rounds)
        built = [placed.batch_rounds(b) for b in range(placed.batches)]
        assert batch_rounds(counts, slots, rounds).tolist() == built


def test_knowing_the_widths_the_layout_sends_fewer_bytes_for_a_bounded_cost() -> None:
    """With the coordinates and thresholds known, best_rounds takes more rounds where that
    sends fewer ciphertexts (one out per coordinate and batch, one back per round and
    threshold), within TIME_SLACK of the fastest layout's work."""
    rng = np.random.default_rng(3)
    pairs = np.unique(
        np.concatenate([_pairs(rng, 500, 400, 3000), _pairs(rng, 20, 400, 900)]), axis=0
    )
    coordinates, thresholds, slots = 277, 11, 64

    def cost(rounds: int) -> tuple[float, float]:
        placed = layout(pairs, slots, rounds)
        returned = sum(placed.batch_rounds(b) for b in range(placed.batches)) * thresholds
        sent = placed.batches * coordinates * FRESH_BYTES + returned * RETURNED_BYTES
        return _work(placed, coordinates, thresholds), sent

    fastest = best_rounds(pairs, slots)
    chosen = best_rounds(pairs, slots, coordinates, thresholds)
    assert chosen > fastest
    assert cost(chosen)[1] < cost(fastest)[1]
    least_work = min(cost(r)[0] for r in range(1, 60))
    assert cost(chosen)[0] <= TIME_SLACK * least_work


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
    keys = scoring.secret_keys(setting)
    run = _scored_through_bytes(keys, x, c, y, placed, setting, rng)
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    return {
        "keys": keys,
        "public": run["public"],
        "conjugation": run["conjugation"],
        "sent": run["sent"],
        "returned": run["returned"],
        "placed": placed,
        "pairs": pairs,
        "plain": plain,
        "y": y,
        "setting": setting,
    }


def test_signs_are_the_plaintext_decisions_away_from_the_boundary(scored: dict) -> None:
    decided = (
        scoring.buckets(scored["keys"], scored["returned"], scored["placed"], len(scored["pairs"]))
        > 0
    )
    plain = scored["plain"]
    clear = np.abs(plain) > 0.05
    assert clear.mean() > 0.9
    assert np.array_equal(decided[clear], plain[clear] > 0)
    assert (decided == (plain > 0)).mean() > 0.99


def test_the_evaluator_receives_a_public_key_and_seeded_ciphertexts(scored: dict) -> None:
    """What goes to the evaluator: a public key (no secret key loads from it) and fresh
    ciphertexts saved seeded, about half the bytes of the same ciphertext saved whole; the
    results come back at the last level of the chain."""
    from tenseal import sealapi

    keys, setting = scored["keys"], scored["setting"]
    context = scoring.seal_context(setting)
    loaded(scoring.PublicKey, context, scored["public"])
    with pytest.raises(ValueError):
        loaded(sealapi.SecretKey, context, scored["public"])
    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.5] * setting.slots, 2.0**setting.scale_bits, plain)
    whole = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, keys.secret).encrypt_symmetric(plain, whole)
    seeded = len(scored["sent"][0][0])
    assert seeded < 0.55 * len(dumped(whole))
    back = scored["returned"][0][0]
    assert back.parms_id() == keys.context.last_parms_id()


def test_the_conjugation_key_holds_conjugation_alone(scored: dict) -> None:
    """The evaluator's one key-switching key conjugates (its sums' imaginary parts cancel)
    and switches nothing else: a key set that could also rotate slots is refused."""
    from tenseal import sealapi

    keys, setting = scored["keys"], scored["setting"]
    context = scoring.seal_context(setting)
    held = loaded(scoring.ConjugationKey, context, scored["conjugation"])
    assert scoring.conjugation_refusal(held, setting) is None
    assert len(scored["conjugation"]) < 0.6e6  # seeded: 2 decompositions x 3 primes, halved
    with pytest.raises(ValueError):
        loaded(sealapi.SecretKey, context, scored["conjugation"])
    rotations = sealapi.KeyGenerator(keys.context, keys.secret).create_galois_keys(
        [2 * setting.poly_modulus_degree - 1, 3]
    )
    wider = loaded(scoring.ConjugationKey, context, dumped(rotations))
    assert "and no other" in scoring.conjugation_refusal(wider, setting)


def test_decrypted_scores_are_blinded_by_wide_factors(scored: dict) -> None:
    placed, plain = scored["placed"], scored["plain"]
    values = _decrypted(scored["keys"], scored["returned"][0][0]).real
    index = placed.pair_of[0, : placed.slots]
    used = (index >= 0) & (np.abs(plain[np.maximum(index, 0)]) > 0.2)
    ratios = values[: len(index)][used] / plain[index[used]]
    assert (ratios > 0).all()
    low, high = scored["setting"].factor_bits
    spread = np.log2(ratios.max() / ratios.min())
    assert spread > (high - low) / 2  # not one factor: magnitudes say little


def test_every_slot_is_flooded_in_its_real_and_imaginary_part(scored: dict) -> None:
    """A decrypted slot is complex: the flooding covers the imaginary parts and the slots no
    pair uses as well as the scores, so the computation's own error (about 0.02 where only
    the used real parts were flooded) is nowhere left bare to the scoring party."""
    from tenseal import sealapi

    keys, placed = scored["keys"], scored["placed"]
    plain = sealapi.Plaintext()
    sealapi.Decryptor(keys.context, keys.secret).decrypt(scored["returned"][0][0], plain)
    values = np.asarray(sealapi.CKKSEncoder(keys.context).decode_complex(plain))
    used = placed.pair_of[0, : placed.slots] >= 0
    spare = np.ones(len(values), dtype=bool)
    spare[: len(used)] = ~used
    assert used.sum() > 1000 and spare.sum() > 1000
    deviation = 2.0 ** scored["setting"].flood_bits
    for part in (values.imag[: len(used)][used], values.real[spare], values.imag[spare]):
        assert 0.8 * deviation < np.std(part) < 1.25 * deviation


def test_buckets_among_thresholds_are_the_plaintext_buckets() -> None:
    rng = np.random.default_rng(11)
    own, peer, width = 120, 100, 8
    x = rng.normal(size=(own, width)) / np.sqrt(width)
    y = rng.normal(size=(peer, width)) / np.sqrt(width)
    c = rng.normal(size=own)
    pairs = _pairs(rng, own, peer, 1500)
    setting = scoring.CkksSetting(thresholds=(0.0, 0.5, 1.0, 2.0))
    run = _bucketed(x, c, y, pairs, setting, rng)
    found, expected, clear = run["found"], run["expected"], run["clear"]
    assert len(set(expected[clear].tolist())) == 5  # every bucket occurs
    assert np.array_equal(found[clear], expected[clear])
    with pytest.raises(ValueError, match="rise from 0"):
        scoring.CkksSetting(thresholds=(0.5, 1.0))


def _evaluation_keys(context: Any, scored: dict) -> scoring.EvaluationKeys:
    return scoring.EvaluationKeys(
        loaded(scoring.PublicKey, context, scored["public"]),
        loaded(scoring.ConjugationKey, context, scored["conjugation"]),
    )


def test_a_wrong_ciphertext_count_is_refused(scored: dict) -> None:
    setting = scored["setting"]
    context = scoring.seal_context(setting)
    key = _evaluation_keys(context, scored)
    received = [
        [loaded_ciphertext(context, data, seeded=True) for data in b] for b in scored["sent"]
    ]
    rng = np.random.default_rng(0)
    args = (scored["y"], scored["placed"], setting, rng)
    # 12 columns and the constant, two a ciphertext.
    assert {len(batch) for batch in received} == {7}
    with pytest.raises(ValueError, match="ciphertexts where 7 were agreed"):
        scoring.evaluate(context, key, [batch[:-1] for batch in received], *args)
    # A ciphertext at another scale or level than a fresh one is refused by name.
    other = scoring.secret_keys(scoring.CkksSetting(scale_bits=25))
    plain = seal_plain(other, setting.slots, 2.0**25)
    wrong = [[encrypted(other, plain)] * 7 for _ in received]
    with pytest.raises(ValueError, match="batch 0, ciphertext 0: not a fresh one"):
        scoring.evaluate(context, key, wrong, *args)
    with pytest.raises(ValueError, match="not a Ciphertext"):
        loaded_ciphertext(context, b"junk" + scored["sent"][0][0][4:], seeded=True)


def seal_plain(keys: scoring.SecretKeys, slots: int, scale: float) -> Any:
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.25] * slots, scale, plain)
    return plain


def encrypted(keys: scoring.SecretKeys, plain: Any) -> Any:
    from tenseal import sealapi

    out = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, keys.secret).encrypt_symmetric(plain, out)
    return out


def test_only_pairs_in_conflict_are_told_their_bucket() -> None:
    """A pair that shares no row with another candidate is told its sign alone: its
    threshold slots above 0 decrypt to the flooding noise, whatever its score."""
    rng = np.random.default_rng(5)
    own, peer, width = 200, 200, 8
    x = rng.normal(size=(own, width)) * 2 / np.sqrt(width)
    y = rng.normal(size=(peer, width)) * 2 / np.sqrt(width)
    c = rng.normal(size=own) + 2.0
    # Rows 0-99 each with one peer of their own; rows 100-199 share peers 100-139.
    alone = np.stack([np.arange(100), np.arange(100)], axis=1)
    shared = _pairs(rng, own, 40, 300)
    shared = shared[shared[:, 0] >= 100] + np.array([0, 100])
    pairs = np.concatenate([alone, shared])
    in_conflict = conflicted(pairs)
    assert not in_conflict[:100].any() and in_conflict[100:].mean() > 0.9
    setting = scoring.CkksSetting(thresholds=(0.0, 1.0, 2.0, 4.0))
    run = _bucketed(x, c, y, pairs, setting, rng)
    found, expected, clear = run["found"], run["expected"], run["clear"]
    keys, returned, placed = run["keys"], run["returned"], run["placed"]
    assert (expected[~in_conflict & clear] > 1).sum() > 20  # buckets there were to hide
    told = np.where(in_conflict, expected, np.minimum(expected, 1))
    assert np.array_equal(found[clear], told[clear])
    assert (found[in_conflict & clear] > 1).sum() > 20
    # What a slot above threshold 0 decrypts to where the pair is alone: noise of about 2^4,
    # not r (s - t) with r >= 2^10. Two thresholds a ciphertext: 1.0 in the first's
    # imaginary part, 2.0 and 4.0 in the second's parts.
    assert len(returned[0]) == placed.batch_rounds(0) * 2
    index = placed.pair_of[0, : placed.slots]
    lone = (index >= 0) & ~placed.ranked[0, : placed.slots]
    assert lone.sum() > 50
    first, second = (_decrypted(keys, returned[0][j])[: len(index)][lone] for j in (0, 1))
    for part in (first.imag, second.real, second.imag):
        assert np.abs(part).max() < 2.0 ** (setting.flood_bits + 3)
    assert np.median(np.abs(first.real)) > 2.0 ** (setting.flood_bits + 3)  # the signs: r s


def test_the_sign_alone_where_no_conflict_keeps_the_same_links() -> None:
    """One-to-one by bucket gives the same links whether the pairs in no conflict are told
    their bucket or only their sign: nothing competes with them."""
    rng = np.random.default_rng(9)
    pairs = np.concatenate([_pairs(rng, 300, 300, 900), np.stack([np.arange(300, 400)] * 2, 1)])
    full = rng.integers(0, 8, len(pairs))
    told = np.where(conflicted(pairs), full, np.minimum(full, 1))
    assert (told != full).sum() > 50
    for first, assignment in itertools.product((True, False), ASSIGNMENTS):
        one = session.one_to_one(pairs, full, first, "digest", assignment)
        other = session.one_to_one(pairs, told, first, "digest", assignment)
        assert sorted(zip(one.rows_a.tolist(), one.rows_b.tolist(), strict=True)) == sorted(
            zip(other.rows_a.tolist(), other.rows_b.tolist(), strict=True)
        )


def test_scores_within_the_safe_range_decrypt_exactly_at_the_largest_factor() -> None:
    """What linear_form.SAFE_SCORE stands on: at the agreed parameters a full ciphertext of
    scores as large as the worst-case bound allows (twice it), less the highest threshold,
    each times the largest factor, still decrypts to itself, and the computation's own error
    there stays 2^3 below the flooding's deviation. Past the first prime's room the
    plaintext wraps and every slot of the ciphertext is garbled, not just the large one
    (the chain before 2026-11-26 did at scores of about 20: sealed/parameters.py)."""
    agreed = scoring.CkksSetting()
    high = agreed.factor_bits[1]
    # The largest factor in every slot, and no flooding: what is left is the computation's.
    setting = scoring.CkksSetting(factor_bits=(high, high), flood_bits=-30)
    worst = 2 * linear_form.SAFE_SCORE + 16.0
    rng = np.random.default_rng(4)
    n = setting.slots
    values = worst * rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 1.0, n)
    x, c, y = values[:, None], np.zeros(n), np.ones((n, 1))
    pairs = np.stack([np.arange(n), np.arange(n)], axis=1)
    placed = layout(pairs, setting.slots, 1)
    keys = scoring.secret_keys(setting)
    returned = _scored_through_bytes(keys, x, c, y, placed, setting, rng)["returned"]
    back = _decrypted(keys, returned[0][0]).real
    error = np.abs(back - values * 2.0**high)
    assert error.max() < 2.0 ** (agreed.flood_bits - 3)
    np.testing.assert_allclose(back / 2.0**high, values, rtol=1e-6, atol=1e-6)


def test_a_movers_alternative_is_scored_from_the_same_ciphertexts() -> None:
    """A model with a second linear decision without an entry: the evaluator scales its own
    vectors by the parts' weight ratios, and the decrypted accept is the higher decision's."""
    from pprl.protocol.model.classifier import Model, with_alternatives

    rng = np.random.default_rng(12)
    n, entries, k = 300, 3, 4
    unit = rng.normal(size=(n, entries, k)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=2, keepdims=True)
    unit[rng.random((n, entries)) < 0.1] = 0.0  # missing values
    first = np.array([-6.0, -5.0, -7.0, -0.5, -1.0, 0.2, 0.1, 0.3, 0.1])
    second = np.array([-9.0, -8.0, 0.0, -0.8, -1.2, 0.0, 0.2, 0.2, 0.0])  # without entry 2
    base = Model("linear", {"weights": first, "bias": np.array(12.0)})
    model = with_alternatives(base, second[None, :], np.array([13.0]))
    x, c = linear_form.scorer_part(model, unit, linear_form.Peer())
    alternative = linear_form.alternative_part(model, unit, linear_form.Peer())
    assert alternative is not None
    np.testing.assert_allclose(alternative.ratios, [1.5, 1.6, 0.0])
    y = linear_form.evaluator_part(unit, linear_form.Peer())
    pairs = _pairs(rng, n, n, 3000)
    features = _features_of(unit, pairs)
    decisions = model.decision(features)
    second_only = Model("linear", {"weights": second, "bias": np.array(13.0)}).decision(features)
    # The written-out second form is the second model.
    x2, c2 = alternative.linear(x, entries)
    written = c2[pairs[:, 0]] + np.einsum("ij,ij->i", x2[pairs[:, 0]], y[pairs[:, 1]])
    np.testing.assert_allclose(written, second_only, atol=1e-5)
    setting = scoring.CkksSetting()
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    keys = scoring.secret_keys(setting)
    run = _scored_through_bytes(keys, x, c, y, placed, setting, rng, alternative)
    assert len(run["sent"][0]) == setting.ciphertexts(x.shape[1] + 1 + entries + 1)
    found = scoring.buckets(keys, run["returned"], placed, len(pairs), alternative=True) > 0
    clear = np.abs(decisions) > 0.05
    assert (second_only > decisions - 1e-9).any() and ((second_only > 0) & (decisions > 0)).any()
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(found[clear], decisions[clear] > 0)
    # Without the alternative's score, the pairs only it accepts would be lost.
    only_second = clear & (decisions > 0) & (base.decision(features) <= 0)
    assert only_second.sum() > 5


def _features_of(unit: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """(pairs, 3M) features of the pairs, as the classifier reads them."""
    from pprl.protocol.model.features import pair_features

    return pair_features(unit[pairs[:, 0]], unit[pairs[:, 1]]).astype(np.float64)


def test_a_round_with_no_pair_in_conflict_returns_the_flooding_alone() -> None:
    """Where no pair of a round is in conflict, every factor above threshold 0 is zero; the
    evaluator returns the flooding alone (SEAL refuses an all-zero product), at the level and
    scale of any other result, and the signs still decide."""
    rng = np.random.default_rng(21)
    n, width = 150, 6
    x = rng.normal(size=(n, width)) / np.sqrt(width)
    y = rng.normal(size=(n, width)) / np.sqrt(width)
    c = rng.normal(size=n)
    pairs = np.stack([np.arange(n), np.arange(n)], axis=1)
    assert not conflicted(pairs).any()
    # Thresholds 0 and 1 share the first ciphertext, 2 has the second to itself.
    setting = scoring.CkksSetting(thresholds=(0.0, 1.0, 2.0))
    run = _bucketed(x, c, y, pairs, setting, rng)
    assert run["placed"].rounds == 1 and len(run["returned"][0]) == 2
    signs, noise = run["returned"][0]
    assert signs.parms_id() == noise.parms_id() and abs(signs.scale - noise.scale) < 1e-6
    assert np.abs(_decrypted(run["keys"], noise)).max() < 2.0 ** (setting.flood_bits + 3)
    told = _decrypted(run["keys"], signs)[:n]
    assert np.abs(told.imag).max() < 2.0 ** (setting.flood_bits + 3)
    clear = run["clear"]
    assert np.array_equal(run["found"][clear], np.minimum(run["expected"], 1)[clear])


def test_the_scoring_party_refuses_results_the_layout_does_not_give(scored: dict) -> None:
    """Read batch by batch as they arrive: a short batch, or a ciphertext that is not an
    evaluated one (here a fresh one, at the first level), is refused by name."""
    keys, placed, returned = scored["keys"], scored["placed"], scored["returned"]
    counted = scoring.BucketCount(keys, placed, len(scored["pairs"]))
    with pytest.raises(ValueError, match=r"batch 0: \d+ results where the layout has others"):
        counted.add(0, returned[0][:-1])
    fresh = encrypted(keys, seal_plain(keys, scored["setting"].slots, 2.0**30))
    with pytest.raises(ValueError, match="batch 0, result 0 is not an evaluated score"):
        counted.add(0, [fresh] * len(returned[0]))
    for batch, results in enumerate(returned):
        counted.add(batch, results)
    assert np.array_equal(
        counted.count, scoring.buckets(keys, returned, placed, len(scored["pairs"]))
    )


def test_only_the_live_columns_are_sent_and_a_column_below_the_encodings_precision_is_skipped() -> (
    None
):
    """With columns that are zero on both sides left out (linear_form.Peer.live), the stream
    holds one ciphertext per live column and the constant, and the buckets are the
    plaintext's; a column whose values all lie below the encoding's precision (an exact
    entry's features far from their value) encodes to zero and is skipped, not refused."""
    rng = np.random.default_rng(21)
    own, peer, width = 80, 70, 10
    x = rng.normal(size=(own, width)) / np.sqrt(width)
    y = rng.normal(size=(peer, width)) / np.sqrt(width)
    live = np.ones(width, dtype=bool)
    live[[2, 5, 6]] = False
    x[:, ~live], y[:, ~live] = 0.0, 0.0
    y[:, 8] = 1e-13  # encodes to zero at the agreed scale
    c = rng.normal(size=own)
    pairs = _pairs(rng, own, peer, 600)
    setting = scoring.CkksSetting(thresholds=(0.0, 0.5, 1.0))
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    keys = scoring.secret_keys(setting)
    run = round_trip(keys, x, c, y, placed, rng, live=live)
    assert all(len(batch) == setting.ciphertexts(int(live.sum()) + 1) for batch in run.sent)
    found = scoring.buckets(keys, run.returned, placed, len(pairs))
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    edges = np.array(setting.thresholds)
    expected = np.searchsorted(edges, plain, side="right")
    clear = np.abs(plain[:, None] - edges[None, :]).min(axis=1) > 0.05
    assert clear.mean() > 0.8 and np.array_equal(found[clear], expected[clear])
    # A stream with the dead columns too (every column encrypted) is not the agreed one.
    context = scoring.seal_context(setting)
    key = _evaluation_keys(context, {"public": run.public, "conjugation": run.conjugation})
    every = [
        [loaded(scoring.Ciphertext, context, dumped(one)) for one in batch]
        for batch in scoring.encrypted_batches(keys, x, c, placed)
    ]
    sent, agreed = (setting.ciphertexts(n + 1) for n in (width, int(live.sum())))
    assert sent != agreed
    agreed = f"{sent} ciphertexts where {agreed} were agreed"
    with pytest.raises(ValueError, match=agreed):
        scoring.evaluate(context, key, every, y, placed, setting, rng, None, live)
