import numpy as np

from pprl.protocol.model.features import (
    MISSING_CODE,
    Standardise,
    missing_values,
    pair_features,
    unit_vectors,
)

PAPER_D = np.array([[[6, 3], [5, 5], [7, 2], [5, 5]]], dtype=np.uint8)
PAPER_D_CORRUPTED = np.array([[[6, 3], [6, 6], [7, 2], [5, 5]]], dtype=np.uint8)


def test_paper_example_2() -> None:
    # The paper prints F = [0, 0.1414, 0, 0], but 0.1414 is not a cosine distance: [5, 5] and
    # [6, 6] are parallel, so their cosine distance is exactly 0 (the raw vectors are sqrt(2)
    # apart in Euclidean terms, which may be where 0.1414 comes from).
    features = pair_features(unit_vectors(PAPER_D), unit_vectors(PAPER_D_CORRUPTED))
    assert features.dtype == np.float32
    # Four cosine distances, then (nothing missing) four "one side" and four "both" zeros.
    np.testing.assert_allclose(features, [[0] * 12], atol=1e-6)


def test_non_parallel_cosine_distance() -> None:
    a = unit_vectors(np.array([[[6, 3]]], dtype=np.uint8))
    b = unit_vectors(np.array([[[3, 6]]], dtype=np.uint8))
    # 1 - (6*3 + 3*6) / (sqrt(45) * sqrt(45)) = 1 - 36/45
    np.testing.assert_allclose(pair_features(a, b), [[0.2, 0, 0]], atol=1e-6)


def test_unit_vectors() -> None:
    tensor = np.array([[[3, 4], [0, 0]], [[0, 7], [254, 254]]], dtype=np.uint8)
    units = unit_vectors(tensor)
    assert units.dtype == np.float32
    assert units.shape == tensor.shape
    np.testing.assert_allclose(units[0, 0], [0.6, 0.8], atol=1e-7)
    assert (units[0, 1] == 0).all()
    np.testing.assert_allclose(np.linalg.norm(units[1], axis=-1), [1, 1], atol=1e-6)


def test_zero_vector_is_at_distance_one() -> None:
    zero = unit_vectors(np.zeros((1, 1, 3), dtype=np.uint8))
    other = unit_vectors(np.array([[[1, 2, 3]]], dtype=np.uint8))
    # A vector with no information reads like a missing value: distance 1, flagged.
    np.testing.assert_allclose(pair_features(zero, other), [[1.0, 1.0, 0.0]])


def test_a_missing_value_is_a_zero_vector_flagged_on_one_or_both_sides() -> None:
    missing = np.full((1, 1, 3), MISSING_CODE, dtype=np.uint8)
    present = np.array([[[1, 2, 3]]], dtype=np.uint8)
    assert missing_values(missing).tolist() == [[True]]
    assert missing_values(present).tolist() == [[False]]
    assert not unit_vectors(missing).any()
    one = pair_features(unit_vectors(present), unit_vectors(missing))
    both = pair_features(unit_vectors(missing), unit_vectors(missing))
    np.testing.assert_allclose(one, [[1.0, 1.0, 0.0]])
    np.testing.assert_allclose(both, [[1.0, 0.0, 1.0]])


def test_standardising_does_not_bring_a_missing_value_back() -> None:
    """Centring would turn the all-MISSING_CODE vector into a real-looking direction."""
    tensor = np.array([[[4, 6, 5]], [[MISSING_CODE] * 3]], dtype=np.uint8)
    shift = Standardise(np.full((1, 3), 5.0, np.float32), np.ones((1, 3), np.float32))
    units = unit_vectors(tensor, shift)
    assert units[0].any() and not units[1].any()


def test_only_released_codes_carry_the_missing_code() -> None:
    """255.0 in a float array (a scaled vector) is a value, not a missing one."""
    values = np.array([[[170.0 * 1.5]]], dtype=np.float64)
    assert not missing_values(values).any()
    assert unit_vectors(values).tolist() == [[[1.0]]]
