import numpy as np
import pytest

from pprl.protocol.features import pair_features, unit_vectors
from pprl.protocol.training import build_training_set, training_features

MAPPING = (("first", "first"), ("last", "last"), ("middle", "first"), ("middle", "last"))


def test_training_features_shape_and_labels() -> None:
    rng = np.random.default_rng(0)
    own = rng.integers(0, 30, size=(50, 4, 9), dtype=np.uint8)
    corrupted = own.copy()
    corrupted[:, 1, 0] += 1
    x, y = training_features(own, corrupted, rng, negatives_per_positive=3)
    assert x.shape == (200, 4)
    assert x.dtype == np.float32
    assert y.dtype == np.int8
    assert y.tolist() == [1] * 50 + [0] * 150
    expected = pair_features(unit_vectors(own), unit_vectors(corrupted))
    np.testing.assert_allclose(x[:50], expected)


def test_negatives_never_pair_a_record_with_itself() -> None:
    # Each corrupted row is identical to its own row and far from all others, so a negative
    # built from k == i would show up as a (near) zero feature row.
    n = 40
    own = np.full((n, 1, n), 50, dtype=np.uint8)
    own[np.arange(n), 0, np.arange(n)] = 0
    x, y = training_features(own, own.copy(), np.random.default_rng(3), negatives_per_positive=5)
    assert (x[y == 1] < 1e-6).all()
    assert (x[y == 0] > 0.01).all()


def test_two_records_negatives_are_the_other_one() -> None:
    own = np.array([[[1, 0]], [[0, 1]]], dtype=np.uint8)
    x, y = training_features(own, own, np.random.default_rng(0), negatives_per_positive=4)
    np.testing.assert_allclose(x[y == 0], 1.0)


def test_negatives_need_two_records() -> None:
    one = np.ones((1, 1, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="two"):
        training_features(one, one, np.random.default_rng(0))


def test_build_training_set() -> None:
    attributes = {
        "first": ["ADA", "BEN", "CARLA", "DAVID", "EVE"],
        "middle": ["IVY", "", "MARIE", "JON", "ANN"],
        "last": ["KING", "MILLER", "SMITH", "JONES", "BROWN"],
        "unused": ["1", "2", "3", "4", "5"],
    }
    reference = {"first": ["CHARLIE", "JAY", "ANNA"], "last": ["ADLER", "ADLER", "SMITH"]}
    x, y = build_training_set(
        attributes,
        reference,
        MAPPING,
        training_records=3,
        negatives_per_positive=2,
        rng=np.random.default_rng(5),
    )
    assert x.shape == (9, 4)
    assert y.tolist() == [1] * 3 + [0] * 6
    assert (x >= 0).all() and (x <= 2).all()
    x_all, _ = build_training_set(
        attributes,
        reference,
        MAPPING,
        training_records=100,
        negatives_per_positive=1,
        rng=np.random.default_rng(5),
    )
    assert x_all.shape == (10, 4)
