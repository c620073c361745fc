"""The parts sealed scoring is built from: the linear form reproduces the classifier's decision
on every pair (missing values included), and the keys put near vectors in a shared block and
far ones rarely."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.errors import SettingError
from pprl.protocol.model.classifier import Model, with_alternatives
from pprl.protocol.model.features import pair_features
from pprl.protocol.sealed import linear_form
from pprl.protocol.sealed.keys import KeySetting, row_keys


def _units(rng: np.random.Generator, n: int, entries: int, width: int) -> np.ndarray:
    unit = rng.normal(size=(n, entries, width)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=-1, keepdims=True)
    unit[rng.random((n, entries)) < 0.2] = 0.0  # missing values
    return unit


def test_the_linear_form_is_the_models_decision_on_every_pair() -> None:
    rng = np.random.default_rng(4)
    entries = 3
    model = Model("linear", {"weights": rng.normal(size=3 * entries), "bias": np.array(0.7)})
    a, b = _units(rng, 40, entries, 6), _units(rng, 30, entries, 6)
    x, c = linear_form.scorer_part(model, a, linear_form.Peer())
    y = linear_form.evaluator_part(b, linear_form.Peer())
    sealed = c[:, None] + x @ y.T
    i, j = np.meshgrid(np.arange(40), np.arange(30), indexing="ij")
    expected = model.decision(pair_features(a[i.ravel()], b[j.ravel()])).reshape(40, 30)
    assert np.abs(sealed - expected).max() < 1e-5
    both_missing = (~a.any(-1))[:, None, :] & (~b.any(-1))[None, :, :]
    assert both_missing.any()  # the case the indicator algebra must get right


def test_the_score_bound_holds_for_every_peer_vector_and_the_scale_spreads_scores() -> None:
    """score_bound is at least every score a peer's vectors can give (unit vectors or missing
    values); score_scale puts the identity scores' median at SCALE_TARGET unless the own
    pairs' range would pass SAFE_SCORE or the bound twice that; a positive factor keeps
    every decision."""
    rng = np.random.default_rng(8)
    entries = 4
    weights = np.concatenate([-np.abs(rng.normal(size=entries)), rng.normal(size=2 * entries)])
    model = Model("linear", {"weights": weights, "bias": np.array(1.5)})
    own, peers = _units(rng, 60, entries, 5), _units(rng, 400, entries, 5)
    x, c = linear_form.scorer_part(model, own, linear_form.Peer())
    y = linear_form.evaluator_part(peers, linear_form.Peer())
    scores = c[:, None] + x @ y.T
    bound = linear_form.score_bound(x, c, entries)
    assert np.abs(scores).max() <= bound + 1e-9
    own_y = linear_form.evaluator_part(own, linear_form.Peer())
    reach = linear_form.score_range(x, c, own_y)
    assert reach == pytest.approx(np.abs(c[:, None] + x @ own_y.T).max())
    assert reach <= bound
    scale = linear_form.score_scale(x, c, own_y, entries)
    identity = np.median(c + np.einsum("ij,ij->i", x, own_y))
    assert identity > 0
    target = linear_form.SCALE_TARGET / identity
    safe = linear_form.SAFE_SCORE
    assert scale == pytest.approx(min(target, safe / reach, 2 * safe / bound))
    assert np.array_equal(scale * scores > 0, scores > 0)
    # Large weights: the range, not the target, sets the factor.
    heavy = Model("linear", {"weights": 40 * weights, "bias": np.array(60.0)})
    hx, hc = linear_form.scorer_part(heavy, own, linear_form.Peer())
    capped = linear_form.score_scale(hx, hc, own_y, entries)
    assert capped * linear_form.score_range(hx, hc, own_y) <= safe * (1 + 1e-9)
    assert capped * linear_form.score_bound(hx, hc, entries) <= 2 * safe * (1 + 1e-9)


def test_the_scaled_form_accepts_down_to_its_margin_below_the_boundary() -> None:
    """scaled_forms raises the constant by ACCEPT_MARGIN of the median identity score before
    scaling: a pair scoring just below the model's boundary is accepted, one below the margin
    is not, the order of every pair is kept, and lowest_accepted says the same in the clear."""
    rng = np.random.default_rng(9)
    entries = 3
    weights = np.concatenate([-np.abs(rng.normal(size=entries)), rng.normal(size=2 * entries)])
    model = Model("linear", {"weights": weights, "bias": np.array(1.0)})
    own, peers = _units(rng, 80, entries, 5), _units(rng, 300, entries, 5)
    peer = linear_form.Peer()
    x, c = linear_form.scorer_part(model, own, peer)
    own_y = linear_form.evaluator_part(own, peer)
    y = linear_form.evaluator_part(peers, peer)
    raw = c[:, None] + x @ y.T
    identity = linear_form.identity_score(x, c, own_y)
    assert identity > 0
    sx, sc, _ = linear_form.scaled_forms(x, c, None, own_y, entries, peer)
    scaled = sc[:, None] + sx @ y.T
    low = -linear_form.ACCEPT_MARGIN * identity
    assert ((raw > low) & (raw < 0)).any()  # pairs the margin lets in
    assert np.array_equal(scaled > 0, raw > low)
    assert np.array_equal(np.argsort(scaled, axis=1), np.argsort(raw, axis=1))
    assert linear_form.lowest_accepted(model, own) == pytest.approx(low, rel=1e-4)


def test_models_the_linear_form_cannot_hold_are_refused() -> None:
    unit = np.zeros((2, 1, 3), dtype=np.float32)
    capped = Model("linear", {"weights": np.ones(3), "bias": np.array(0.0), "caps": np.ones(1)})
    with pytest.raises(SettingError, match="without caps"):
        linear_form.scorer_part(capped, unit, linear_form.Peer())
    rbf = Model("rbf", {"bias": np.array(0.0)})
    with pytest.raises(SettingError, match="linear model"):
        linear_form.scorer_part(rbf, unit, linear_form.Peer())


def test_keys_join_near_vectors_and_part_far_ones() -> None:
    rng = np.random.default_rng(9)
    base = _units(rng, 200, 2, 16)
    base[:, :, :] = np.where(base.any(-1, keepdims=True), base, 1 / 4)  # none missing here
    near = base + 0.05 * rng.normal(size=base.shape).astype(np.float32)
    near /= np.linalg.norm(near, axis=-1, keepdims=True)
    far = _units(rng, 200, 2, 16)
    setting = KeySetting(bits=8, bands=8)
    keys = [row_keys(u, setting, b"agreement") for u in (base, near, far)]
    share_near = np.mean([bool(set(p) & set(q)) for p, q in zip(keys[0], keys[1], strict=True)])
    share_far = np.mean([bool(set(p) & set(q)) for p, q in zip(keys[0], keys[2], strict=True)])
    assert share_near > 0.95 and share_far < 0.2
    assert len(keys[0][0]) == 3 * 8  # two entries and all together, 8 bands each
    assert row_keys(base, setting, b"agreement") == keys[0]
    assert row_keys(base, setting, b"another agreement")[0] != keys[0][0]


def test_a_missing_value_gives_no_key_of_its_entry() -> None:
    unit = np.zeros((1, 2, 4), dtype=np.float32)
    unit[0, 0, 0] = 1.0
    keys = row_keys(unit, KeySetting(bits=4, bands=2, entries=(0, 1)), b"seed")[0]
    assert sorted({k.split("|")[0] for k in keys}) == ["all entries", "entry 0"]
    assert row_keys(np.zeros((1, 2, 4), np.float32), KeySetting(bits=4, bands=2), b"s") == [[]]


def test_a_kernel_models_form_is_its_decision_through_the_random_features() -> None:
    """With random features, c_i + <x_i, y_j> is exactly the model's decision with each
    kernel value replaced by z(p) . z(q) (0 where a value is missing), and close to the
    exact kernel's decision; the score bound holds at the features' length."""
    rng = np.random.default_rng(6)
    entries, count = 3, 512
    widths = np.array([0.08, 0.15, 0.3])
    weights = np.concatenate([[3.0, 2.0, 4.0], rng.normal(size=2 * entries)])
    model = Model("linear", {"weights": weights, "bias": np.array(-4.0), "widths": widths})
    a, b = _units(rng, 40, entries, 8), _units(rng, 30, entries, 8)
    b[:10] = a[:10]  # identical values: kernel 1
    peer = linear_form.peer_of(model, count, "digest")
    assert peer.kernel is not None
    x, c = linear_form.scorer_part(model, a, peer)
    y = linear_form.evaluator_part(b, peer)
    assert x.shape[1] == y.shape[1] == entries * (count + 1)
    sealed = c[:, None] + x @ y.T
    za, zb = peer.kernel.map(a), peer.kernel.map(b)
    approximated = np.einsum("imd,jmd->ijm", za, zb)
    i, j = np.meshgrid(np.arange(40), np.arange(30), indexing="ij")
    features = pair_features(a[i.ravel()], b[j.ravel()])
    features[:, :entries] = approximated.reshape(-1, entries)
    linear = Model("linear", {"weights": weights, "bias": np.array(-4.0)})
    np.testing.assert_allclose(sealed, linear.decision(features).reshape(40, 30), atol=1e-6)
    exact = model.decision(pair_features(a[i.ravel()], b[j.ravel()])).reshape(40, 30)
    assert np.abs(sealed - exact).max() < 1.0 and np.abs(sealed - exact).mean() < 0.25
    assert np.abs(np.diagonal(sealed[:10, :10]) - np.diagonal(exact[:10, :10])).max() < 0.5
    assert np.abs(sealed).max() <= linear_form.score_bound(x, c, entries, peer.length)
    # The same seed draws the same features; another seed others.
    again = linear_form.peer_of(model, count, "digest")
    assert again.kernel is not None and np.array_equal(again.kernel.map(a), za)
    other = linear_form.peer_of(model, count, "another digest")
    assert other.kernel is not None and not np.array_equal(other.kernel.map(a), za)


def test_a_kernel_model_needs_agreed_random_features() -> None:
    model = Model("linear", {"weights": np.ones(3), "bias": np.array(0.0), "widths": np.ones(1)})
    with pytest.raises(SettingError, match="random features"):
        linear_form.peer_of(model, 0, "digest")
    assert (
        linear_form.peer_of(
            Model("linear", {"weights": np.ones(3), "bias": np.array(0.0)}), 128, "d"
        ).kernel
        is None
    )


def test_a_kernel_models_movers_alternative_is_scored_from_the_same_features() -> None:
    """With a movers' alternative, the second form of a kernel model is the first's features
    scaled per entry by the weights' ratios, as for a model linear in the distances."""
    rng = np.random.default_rng(11)
    entries, count = 3, 256
    widths = np.array([0.1, 0.2, 0.15])
    first = np.array([3.0, 2.0, 4.0, -0.5, -1.0, 0.2, 0.1, 0.3, 0.1])
    second = np.array([4.5, 3.2, 0.0, -0.8, -1.2, 0.0, 0.2, 0.2, 0.0])  # without entry 2
    base = Model("linear", {"weights": first, "bias": np.array(-5.0), "widths": widths})
    model = with_alternatives(base, second[None, :], np.array([-6.0]))
    unit = _units(rng, 50, entries, 8)
    peer = linear_form.peer_of(model, count, "digest")
    x, _ = linear_form.scorer_part(model, unit, peer)
    alternative = linear_form.alternative_part(model, unit, peer)
    assert alternative is not None
    np.testing.assert_allclose(alternative.ratios, [1.5, 1.6, 0.0])
    y = linear_form.evaluator_part(unit, peer)
    x2, c2 = alternative.linear(x, entries)
    assert peer.kernel is not None
    z = peer.kernel.map(unit)
    approximated = np.einsum("imd,jmd->ijm", z, z)
    i, j = np.meshgrid(np.arange(50), np.arange(50), indexing="ij")
    features = pair_features(unit[i.ravel()], unit[j.ravel()])
    features[:, :entries] = approximated.reshape(-1, entries)
    plain_second = Model("linear", {"weights": second, "bias": np.array(-6.0)})
    expected = plain_second.decision(features).reshape(50, 50)
    np.testing.assert_allclose(c2[:, None] + x2 @ y.T, expected, atol=1e-6)
