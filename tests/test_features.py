import numpy as np

from pprl.protocol.features import pair_features, unit_vectors

PAPER_D = np.array([[[6, 3], [5, 5], [7, 2], [5, 5]]], dtype=np.uint8)
PAPER_D_CORRUPTED = np.array([[[6, 3], [6, 6], [7, 2], [5, 5]]], dtype=np.uint8)


def test_paper_example_2() -> None:
    # The paper prints F = [0, 0.1414, 0, 0], but 0.1414 is not a cosine distance: [5, 5] and
    # [6, 6] are parallel, so their cosine distance is exactly 0 (the raw vectors are sqrt(2)
    # apart in Euclidean terms, which may be where 0.1414 comes from).
    features = pair_features(unit_vectors(PAPER_D), unit_vectors(PAPER_D_CORRUPTED))
    assert features.dtype == np.float32
    np.testing.assert_allclose(features, [[0, 0, 0, 0]], atol=1e-6)


def test_non_parallel_cosine_distance() -> None:
    a = unit_vectors(np.array([[[6, 3]]], dtype=np.uint8))
    b = unit_vectors(np.array([[[3, 6]]], dtype=np.uint8))
    # 1 - (6*3 + 3*6) / (sqrt(45) * sqrt(45)) = 1 - 36/45
    np.testing.assert_allclose(pair_features(a, b), [[0.2]], atol=1e-6)


def test_unit_vectors() -> None:
    tensor = np.array([[[3, 4], [0, 0]], [[0, 7], [255, 255]]], dtype=np.uint8)
    units = unit_vectors(tensor)
    assert units.dtype == np.float32
    assert units.shape == tensor.shape
    np.testing.assert_allclose(units[0, 0], [0.6, 0.8], atol=1e-7)
    assert (units[0, 1] == 0).all()
    np.testing.assert_allclose(np.linalg.norm(units[1], axis=-1), [1, 1], atol=1e-6)


def test_zero_vector_is_at_distance_one() -> None:
    zero = unit_vectors(np.zeros((1, 1, 3), dtype=np.uint8))
    other = unit_vectors(np.array([[[1, 2, 3]]], dtype=np.uint8))
    np.testing.assert_allclose(pair_features(zero, other), [[1.0]])
