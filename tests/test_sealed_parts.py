"""The parts sealed scoring is built from: the linear form reproduces the classifier's decision
on every pair (missing values included), and the keys put near vectors in a shared block and
far ones rarely."""

from __future__ import annotations

import numpy as np
import pytest

from lab.simhash_keys import KeySetting, row_keys
from pprl.protocol.errors import SettingError
from pprl.protocol.model.classifier import Model, with_alternatives
from pprl.protocol.model.features import pair_features
from pprl.protocol.sealed import linear_form
from pprl.protocol.sealed.kernel_features import Exact, RandomFeatures


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
    sx, sc, _ = linear_form.scaled_forms(x, c, None, own_y, entries)
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
    assert np.abs(sealed).max() <= linear_form.score_bound(x, c, entries)
    # The same seed draws the same features; another seed others.
    again = linear_form.peer_of(model, count, "digest")
    assert again.kernel is not None and np.array_equal(again.kernel.map(a), za)
    other = linear_form.peer_of(model, count, "another digest")
    assert other.kernel is not None and not np.array_equal(other.kernel.map(a), za)


def test_random_features_are_a_cosine_and_a_sine_of_each_frequency_of_length_one() -> None:
    """Each present value's features have length exactly 1, the scores' bound; a
    frequency's cosine and sine square to 2 / D together; a missing value's are zero; over
    many draws z(u) . z(v) averages to the kernel exp(-d / width); an odd count is refused."""
    rng = np.random.default_rng(8)
    widths = np.array([0.1, 0.3])
    u, v = _units(rng, 60, 2, 8), _units(rng, 60, 2, 8)
    z = RandomFeatures(widths, 64, "digest").map(u)
    present = np.linalg.norm(u, axis=2) > 0
    np.testing.assert_allclose(np.linalg.norm(z, axis=2)[present], 1.0, rtol=1e-9)
    assert not z[~present].any()
    np.testing.assert_allclose((z[..., :32] ** 2 + z[..., 32:] ** 2)[present], 2 / 64, rtol=1e-9)
    both = present & (np.linalg.norm(v, axis=2) > 0)
    kernel = np.exp(-(1.0 - np.einsum("imd,imd->im", u, v)) / widths)
    mean = np.mean(
        [
            np.einsum("imd,imd->im", f.map(u), f.map(v))
            for f in (RandomFeatures(widths, 64, f"draw {k}") for k in range(300))
        ],
        axis=0,
    )
    assert np.abs(mean - kernel)[both].max() < 0.03
    with pytest.raises(ValueError, match="odd"):
        RandomFeatures(widths, 63, "digest")


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


def test_an_exact_entry_scores_its_kernel_exactly_in_as_many_features_as_it_has_values() -> None:
    """An entry with few values (an initial) scored by their own vectors: the kernel model's
    decision exactly on every pair of them, where random features only approximate it, and
    only its values' count of its D features can be non-zero (`live`), on both sides."""
    rng = np.random.default_rng(12)
    entries, count, letters = 2, 64, 26
    widths = np.array([0.1, 0.02])  # the narrow one puts off-diagonal values near 0
    landmarks = _units(rng, letters, 1, 8)[:, 0, :]
    landmarks[landmarks[:, 0] == 0] = 1 / np.sqrt(8)  # every value present
    weights = np.concatenate([[3.0, 4.0], rng.normal(size=2 * entries)])
    model = Model("linear", {"weights": weights, "bias": np.array(-4.0), "widths": widths})
    a, b = _units(rng, 60, entries, 8), _units(rng, 50, entries, 8)
    a[:, 1] = landmarks[rng.integers(letters, size=60)]
    b[:, 1] = landmarks[rng.integers(letters, size=50)]
    b[:5, 1] = 0.0  # a missing initial
    exact = (Exact(1, landmarks),)
    peer = linear_form.peer_of(model, count, "digest", exact)
    x, c = linear_form.scorer_part(model, a, peer)
    y = linear_form.evaluator_part(b, peer)
    live = peer.live(entries, 8)
    assert live.sum() == (count + 1) + (letters + 1)
    assert not x[:, ~live].any() and not y[:, ~live].any()
    sealed = c[:, None] + x[:, live] @ y[:, live].T
    assert peer.kernel is not None
    z = peer.kernel.map(np.concatenate([a, b]))
    i, j = np.meshgrid(np.arange(60), np.arange(50), indexing="ij")
    kernel = np.exp(-(1.0 - a[:, 1].astype(float) @ b[:, 1].astype(float).T) / widths[1])
    kernel[:, :5] = 0.0  # a missing value's kernel value is 0
    features = pair_features(a[i.ravel()], b[j.ravel()])
    # Entry 0 through its random features, entry 1 exactly: the model's own kernel value.
    features[:, 0] = np.einsum("id,jd->ij", z[:60, 0], z[60:, 0]).reshape(-1)
    features[:, 1] = kernel.reshape(-1)
    linear = Model("linear", {"weights": weights, "bias": np.array(-4.0)})
    np.testing.assert_allclose(sealed, linear.decision(features).reshape(60, 50), atol=1e-6)
    np.testing.assert_allclose(z[:60, 1] @ z[60:, 1].T, kernel, atol=1e-9)
    # Random features on the same entry are only near it.
    drawn = linear_form.peer_of(model, count, "digest").kernel
    assert drawn is not None
    approximated = drawn.map(a)[:, 1] @ drawn.map(b)[:, 1].T
    assert np.abs(approximated - kernel).max() > 1e-3
    # An exact entry that needs more features than agreed keeps its random ones.
    assert linear_form.coordinates_live(entries, 8, 16, exact).all()


def test_the_initials_landmarks_are_the_letters_as_both_parties_smash_them() -> None:
    """exact_entries finds the mapping's initial entries and smashes A-Z from the agreement
    alone: two parties' agreements give the same vectors, each letter's its record's."""
    from pprl.protocol.agreement import Agreement
    from pprl.protocol.data import synthetic
    from pprl.protocol.data.reference import REGISTER_MAPPING, ReferenceSet
    from pprl.protocol.method import method_params
    from pprl.protocol.model.features import unit_vectors
    from pprl.protocol.sealed.exact_entries import LETTERS, exact_entries

    def agreement() -> Agreement:
        method = method_params(
            encoding="sealed", error_model="registers", sealed_keys="first:soundex+last:soundex"
        )
        reference = ReferenceSet("built-in", synthetic.default_reference(200))
        return Agreement(reference, REGISTER_MAPPING, method)

    found = exact_entries(agreement())
    initials = [m for m, (name, _) in enumerate(REGISTER_MAPPING) if name.endswith(":initial")]
    assert [one.entry for one in found] == initials and len(initials) == 2
    again = exact_entries(agreement())
    for one, other in zip(found, again, strict=True):
        assert one.landmarks.shape[0] == len(LETTERS)
        np.testing.assert_array_equal(one.landmarks, other.landmarks)
    record = {"first": ["JOHN"], "middle": ["KATE"], "last": ["SMITH"]}
    unit = unit_vectors(agreement().smash(record, None), agreement().standardise)
    np.testing.assert_allclose(found[0].landmarks[LETTERS.index("K")], unit[0, initials[0]])
    np.testing.assert_allclose(found[1].landmarks[LETTERS.index("J")], unit[0, initials[1]])
    # AGREE says so where a kernel model scores them.
    assert "initial" not in agreement().noise_words()
    kernel = Agreement(
        agreement().reference,
        REGISTER_MAPPING,
        method_params(
            encoding="sealed",
            error_model="registers",
            sealed_keys="first:soundex+last:soundex",
            sealed_kernel_features=64,
        ),
    )
    assert (
        "64 random features an entry (middle:initial, first:initial exactly, by their values)"
        in kernel.noise_words()
    )


def test_a_categorys_landmarks_are_its_reference_columns_values() -> None:
    """A category entry is read exactly by the values its reference column lists (each
    once, blanks left out); any other plain entry keeps its random features."""
    from pprl.protocol.agreement import Agreement
    from pprl.protocol.data import synthetic
    from pprl.protocol.data.reference import ReferenceSet
    from pprl.protocol.method import method_params
    from pprl.protocol.model.features import unit_vectors
    from pprl.protocol.sealed.exact_entries import exact_entries, exact_values

    columns = synthetic.default_reference(200)
    rows = len(next(iter(columns.values())))
    columns["sex"] = [("F", "M", "X", "")[i % 4] for i in range(rows)]
    method = method_params(
        encoding="sealed", sealed_keys="first:soundex+last:soundex", sealed_kernel_features=48
    )
    mapping = [("first", "first"), ("last", "last"), ("sex", "sex")]
    agreement = Agreement(ReferenceSet("built-in", columns), mapping, method, {"sex": "category"})
    assert [exact_values(agreement, m) for m in range(3)] == [None, None, ["F", "M", "X"]]
    (found,) = exact_entries(agreement)
    assert found.entry == 2 and found.landmarks.shape[0] == 3
    record = {"first": ["ANNA"], "last": ["BELL"], "sex": ["M"]}
    unit = unit_vectors(agreement.smash(record, None), agreement.standardise)
    np.testing.assert_allclose(found.landmarks[1], unit[0, 2])
    assert "(sex exactly, by their values)" in agreement.noise_words()
