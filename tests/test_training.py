import numpy as np
import pytest

from pprl.protocol.model.features import pair_features, unit_vectors
from pprl.protocol.model.training import (
    corrupt_sample,
    negative_partners,
    smashed_similarity,
    training_features,
)
from tests.oracles import training_set

MAPPING = (("first", "first"), ("last", "last"), ("middle", "first"), ("middle", "last"))


def test_training_features_shape_and_labels() -> None:
    rng = np.random.default_rng(0)
    own = rng.integers(0, 30, size=(50, 4, 9), dtype=np.uint8)
    corrupted = own.copy()
    corrupted[:, 1, 0] += 1
    x, y = training_features(own, corrupted, rng, negatives_per_positive=3)
    assert x.shape == (200, 12)  # 4 cosine distances and 8 missing indicators
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
    assert (x[y == 0][:, 0] > 0.01).all()


def test_two_records_negatives_are_the_other_one() -> None:
    own = np.array([[[1, 0]], [[0, 1]]], dtype=np.uint8)
    x, y = training_features(own, own, np.random.default_rng(0), negatives_per_positive=4)
    np.testing.assert_allclose(x[y == 0][:, 0], 1.0)
    assert not x[:, 1:].any()  # nothing is missing


def test_negatives_need_two_records() -> None:
    one = np.ones((1, 1, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="two"):
        training_features(one, one, np.random.default_rng(0))


def test_a_partys_training_set() -> None:
    attributes = {
        "first": ["ADA", "BEN", "CARLA", "DAVID", "EVE"],
        "middle": ["IVY", "", "MARIE", "JON", "ANN"],
        "last": ["KING", "MILLER", "SMITH", "JONES", "BROWN"],
        "unused": ["1", "2", "3", "4", "5"],
    }
    reference = {
        "first": ["CHARLIE", "JAY", "ANNA", "BO", "CY", "DI", "ED", "FAY", "GUS", "HAL", "IDA"],
        "last": ["ADLER", "ADLER", "SMITH", "OAK", "ASH", "ELM", "FIR", "YEW", "BAY", "BOX", "FIG"],
    }
    x, y = training_set(
        attributes,
        reference,
        MAPPING,
        np.random.default_rng(5),
        training_records=3,
        negatives_per_positive=2,
    )
    assert x.shape == (9, 12)
    assert y.tolist() == [1] * 3 + [0] * 6
    assert (x >= 0).all() and (x <= 2).all()
    x_all, _ = training_set(
        attributes,
        reference,
        MAPPING,
        np.random.default_rng(5),
        training_records=100,
        negatives_per_positive=1,
    )
    assert x_all.shape == (10, 12)


def test_hard_negatives_are_the_most_similar_others() -> None:
    similarity = np.array(
        [
            [9.0, 1.0, 5.0, 3.0],
            [0.0, 9.0, 2.0, 7.0],
            [4.0, 6.0, 9.0, 1.0],
            [8.0, 2.0, 3.0, 9.0],
        ]
    )
    partners = negative_partners(similarity, 4, np.random.default_rng(0), 3, hard_negatives=2)
    assert partners.shape == (4, 3)
    assert [sorted(row[:2].tolist()) for row in partners] == [[2, 3], [2, 3], [0, 1], [0, 2]]
    assert all(partners[i, 2] != i for i in range(4))  # the random one is never i either


@pytest.mark.parametrize(
    ("negatives", "hard", "n"), [(1, 2, 10), (2, -1, 10), (-1, 0, 10), (3, 3, 3), (1, 0, 1)]
)
def test_impossible_negative_requests_are_refused(negatives: int, hard: int, n: int) -> None:
    with pytest.raises(ValueError):
        negative_partners(np.zeros((n, n)), n, np.random.default_rng(0), negatives, hard)


def test_hard_negatives_come_from_the_smashed_similarity() -> None:
    """With one hard negative per record, each negative pair is the most similar other copy,
    so its features are no larger than those of any other pairing."""
    rng = np.random.default_rng(4)
    own = rng.integers(0, 9, size=(40, 2, 12)).astype(np.uint8)
    corrupted = np.clip(own.astype(int) + rng.integers(-1, 2, size=own.shape), 0, 255)
    corrupted = corrupted.astype(np.uint8)
    x, y = training_features(own, corrupted, rng, negatives_per_positive=1, hard_negatives=1)
    unit_own, unit_corrupted = unit_vectors(own), unit_vectors(corrupted)
    similarity = smashed_similarity(unit_own, unit_corrupted)
    np.fill_diagonal(similarity, -np.inf)
    best = similarity.max(axis=1)
    negatives = x[y == 0]
    assert len(negatives) == 40
    # Summed feature = M - summed similarity, so the hard negative's sum equals M - best.
    np.testing.assert_allclose(negatives.sum(axis=1), 2 - best, atol=1e-5)


def test_negatives_identical_to_the_record_are_dropped() -> None:
    """Two records with the same smashed vectors cannot be told apart; labelling their pair 0
    would contradict the positives."""
    own = np.array([[[1, 2, 3]], [[1, 2, 3]], [[7, 1, 0]]], dtype=np.uint8)
    x, y = training_features(own, own.copy(), np.random.default_rng(0), 2, hard_negatives=2)
    assert int(y.sum()) == 3
    assert (x[y == 0] > 0).any(axis=1).all()
    assert (y == 0).sum() == 4  # 6 negatives drawn, the 2 pairs of the twins dropped


def test_prototype_corruption_appends_a_bang_to_the_last_field_only() -> None:
    columns = {"first": ["ANN", "BO", "CY"], "last": ["LEE", "MOE", "NG"]}
    own, corrupted = corrupt_sample(
        columns, ["first", "last"], size=3, rng=np.random.default_rng(1), corruption="prototype"
    )
    assert corrupted["first"] == own["first"]
    assert corrupted["last"] == [value + "!" for value in own["last"]]
    assert sorted(own["last"]) == ["LEE", "MOE", "NG"]


def test_spread_corruption_edits_every_field_over_a_sample() -> None:
    rng = np.random.default_rng(2)
    columns = {
        "first": [f"ANNA{i}" for i in range(300)],
        "middle": [f"MARIE{i}" for i in range(300)],
        "last": [f"LEWIS{i}" for i in range(300)],
    }
    own, corrupted = corrupt_sample(columns, list(columns), size=200, rng=rng)
    changed = {
        name: sum(a != b for a, b in zip(own[name], corrupted[name], strict=True))
        for name in columns
    }
    assert sum(changed.values()) == 200  # exactly one field per record
    assert all(count > 40 for count in changed.values())


def test_unknown_corruption_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown corruption"):
        corrupt_sample({"a": ["X"]}, ["a"], size=1, rng=np.random.default_rng(0), corruption="x")
