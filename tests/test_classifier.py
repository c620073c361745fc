import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from pprl.protocol.model.classifier import Model, saturate, saturation_caps, train


def _data(rng: np.random.Generator, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    positives = np.abs(rng.normal(0.0, 0.05, size=(n, 4)))
    negatives = np.abs(rng.normal(0.12, 0.06, size=(n, 4)))
    x = np.vstack([positives, negatives]).astype(np.float32)
    y = np.r_[np.ones(n), np.zeros(n)].astype(np.int8)
    return x, y


@pytest.mark.parametrize(("kind", "c"), [("linear", 100.0), ("rbf", 0.01), ("rbf", 10.0)])
def test_decision_equals_sklearn(kind: str, c: float) -> None:
    rng = np.random.default_rng(0)
    x, y = _data(rng)
    model = train(x, y, kind, c)
    reference = SVC(kernel=kind, C=c, gamma="scale").fit(x.astype(np.float64), y)
    probe = np.abs(rng.normal(0.06, 0.08, size=(300, 4))).astype(np.float32)
    expected = reference.decision_function(probe)
    np.testing.assert_allclose(model.decision(probe), expected, rtol=1e-6, atol=1e-9)
    assert ((model.decision(probe) > 0) == (reference.predict(probe) == 1)).all()


def test_logistic_is_a_linear_model_with_sklearns_logistic_decision() -> None:
    rng = np.random.default_rng(5)
    x, y = _data(rng)
    model = train(x, y, "logistic")
    assert model.kind == "linear"  # scored, bounded and saved as any linear model
    reference = LogisticRegression(C=100.0, max_iter=1000).fit(x.astype(np.float64), y)
    probe = np.abs(rng.normal(0.06, 0.08, size=(300, 4))).astype(np.float32)
    np.testing.assert_allclose(
        model.decision(probe), reference.decision_function(probe), rtol=1e-6, atol=1e-8
    )
    restored = Model.from_bytes(model.to_bytes())
    np.testing.assert_array_equal(restored.decision(probe), model.decision(probe))


def test_logistic_learns_capped_distances_scaled_by_their_caps() -> None:
    rng = np.random.default_rng(6)
    x, y = _data(rng)
    features = np.concatenate([x[:, :2], np.zeros((len(x), 4), dtype=np.float32)], axis=1)
    model = train(features, y, "logistic", saturation=0.25)
    caps = saturation_caps(features.astype(np.float64), y, 0.25)
    np.testing.assert_array_equal(model.caps, caps)
    scale = np.ones(6)
    scale[:2] = caps
    capped = saturate(features.astype(np.float64), caps)
    reference = LogisticRegression(C=100.0, max_iter=1000).fit(capped / scale, y)
    probe = np.abs(rng.normal(0.06, 0.08, size=(300, 6))).astype(np.float32)
    probe[:, 2:] = 0.0
    expected = reference.decision_function(saturate(probe.astype(np.float64), caps) / scale)
    # The model caps float32 features, the reference float64 ones.
    np.testing.assert_allclose(model.decision(probe), expected, rtol=1e-5, atol=1e-5)


def test_default_c_and_gamma_value() -> None:
    x, y = _data(np.random.default_rng(1))
    model = train(x, y, "rbf")
    assert model.arrays["gamma"].shape == ()
    assert float(model.arrays["gamma"]) == pytest.approx(1.0 / (4 * x.astype(np.float64).var()))
    assert model.arrays["dual_coef"].shape == (len(model.arrays["support_vectors"]),)
    assert np.abs(model.arrays["dual_coef"]).max() <= 0.01 + 1e-12


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_bytes_round_trip(kind: str) -> None:
    rng = np.random.default_rng(2)
    x, y = _data(rng)
    model = train(x, y, kind)
    restored = Model.from_bytes(model.to_bytes())
    assert restored.kind == kind
    assert restored.arrays.keys() == model.arrays.keys()
    for name, array in model.arrays.items():
        np.testing.assert_array_equal(restored.arrays[name], array)
    np.testing.assert_array_equal(restored.decision(x), model.decision(x))


def test_unknown_kind() -> None:
    x, y = _data(np.random.default_rng(3))
    with pytest.raises(ValueError, match="poly"):
        train(x, y, "poly")
    with pytest.raises(ValueError, match="poly"):
        Model("poly", {"bias": np.array(0.0)}).decision(x)


def test_labels_need_both_classes() -> None:
    x, _ = _data(np.random.default_rng(4))
    with pytest.raises(ValueError, match="both"):
        train(x, np.ones(len(x), dtype=np.int8))
