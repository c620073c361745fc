"""Sealed linkage's match probabilities: each bucket's share of right synthetic links,
checked on held-out ones; the buckets of simulated links are those MATCH's encrypted
comparison would count; and why an agreed pair matched is read from its shared keys."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.model.classifier import Model
from pprl.protocol.sealed import calibration, linear_form, why_matched
from pprl.protocol.sealed.calibration import Calibration, LinkedUnits, SimulatedLinks
from pprl.protocol.sealed.recipes import parse_recipes, recipe_keys, recipe_number
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS, thresholds
from tests.test_sealed_parts import _units

THRESHOLDS = thresholds(DEFAULT_THRESHOLDS)


def _links(rng: np.random.Generator, n: int, right_share: dict[int, float]) -> SimulatedLinks:
    buckets = rng.choice(list(right_share), size=n)
    right = rng.random(n) < np.array([right_share[b] for b in buckets])
    return SimulatedLinks(
        buckets=buckets,
        ranked=np.ones(n, dtype=bool),
        right=right,
        sharing=np.ones(n, dtype=np.int64),
        held_out=np.arange(n) % 2 == 1,
    )


def test_each_bucket_gets_its_share_of_right_links_checked_on_held_out_ones() -> None:
    rng = np.random.default_rng(3)
    shares = {1: 0.5, 4: 0.8, 8: 0.99}
    fitted = calibration.fitted([_links(rng, 4000, shares), _links(rng, 4000, shares)], THRESHOLDS)
    table = fitted.probabilities
    assert len(table) == len(THRESHOLDS) + 2
    for bucket, share in shares.items():
        assert table[bucket] == pytest.approx(share, abs=0.04)
    assert all(0 < p < 1 for p in table)  # no finite sample is a certainty
    # A bucket without links takes about the pooled share, as a pair this party did not score.
    assert table[2] == pytest.approx(table[0], abs=0.05)
    checked = fitted.checked
    assert checked["links"] == 4000
    assert checked["mean_probability"] == pytest.approx(checked["precision"], abs=0.03)
    assert checked["lowest_tenth_precision"] < checked["highest_tenth_precision"]
    assert Calibration.from_dict(fitted.as_dict()) == fitted


def test_a_probability_is_divided_among_records_sharing_values_and_unranked_pairs_apart() -> None:
    table = Calibration((0.9, 0.6, 0.7, 0.8, 0.95), (0, 10, 10, 10, 10))
    bucket = np.array([3, 3, 1, 1, 0])
    ranked = np.array([True, True, True, False, False])
    sharing = np.array([1, 2, 1, 1, 1])
    got = table.of(bucket, ranked, sharing)
    assert got == pytest.approx([0.8, 0.4, 0.6, 0.95, 0.9])


def test_simulated_links_get_the_buckets_the_scaled_forms_decrypt_to() -> None:
    """Calibration scores a simulated link as MATCH does: (score + shift) * scale on the
    scaled_forms' shift and scale, bucketed by the agreed thresholds."""
    rng = np.random.default_rng(11)
    entries = 3
    weights = np.concatenate([-np.abs(rng.normal(size=entries)), rng.normal(size=2 * entries)])
    model = Model("linear", {"weights": weights, "bias": np.array(1.0)})
    own, far = _units(rng, 80, entries, 5), _units(rng, 80, entries, 5)
    # Copies of the own records drawn towards strangers by varying amounts: near to far.
    mix = np.linspace(0, 1, 80)[:, None, None]
    peers = ((1 - mix) * own + mix * far).astype(np.float32)
    norms = np.linalg.norm(peers, axis=-1, keepdims=True)
    peers = np.divide(peers, norms, out=np.zeros_like(peers), where=norms > 0)
    peer = linear_form.Peer()
    scaling = calibration.scaling(model, own, peer, THRESHOLDS)
    x, c = linear_form.scorer_part(model, own, peer)
    own_y = linear_form.evaluator_part(own, peer)
    sx, sc, _ = linear_form.scaled_forms(x, c, None, own_y, entries)
    encrypted = sc + np.einsum("ij,ij->i", sx, linear_form.evaluator_part(peers, peer))
    expected = np.searchsorted(np.asarray(THRESHOLDS), encrypted, side="left")
    n = len(own)
    linked = LinkedUnits(
        own, peers, np.ones(n, bool), np.ones(n, bool), np.ones(n, int), np.zeros(n, bool)
    )
    got = scaling.links(model, linked).buckets
    assert len(set(expected.tolist())) > 3  # the scores spread over several buckets
    assert np.array_equal(got, expected)


def test_why_a_pair_matched_names_the_fields_its_shared_keys_read() -> None:
    recipes = parse_recipes(
        "first:soundex+last:soundex,first:neighbours+last:soundex,dob+last:prefix",
        ["first", "last", "dob"],
    )
    keys = recipe_keys({"first": ["Anna"], "last": ["Smith"], "dob": ["19800101"]}, recipes)[0]
    assert sorted({recipe_number(k) for k in keys}) == [0, 1, 2]
    near, other = why_matched.explained(recipes, ["first", "last", "dob"], {0, 1})
    assert near == ("first: same Soundex code, at most one edit apart; last: same Soundex code")
    assert other == "dob"
    assert why_matched.explained(recipes, ["first", "last", "dob"], ()) == ("", "first last dob")
