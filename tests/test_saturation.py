"""Saturated distances: each entry's distance read as min(distance, cap), so a linear model
can accept pairs on which two of three entries agree, with candidate matching still exact."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.errors import SettingError
from pprl.protocol.linkage.candidates import accepted_pairs, bounds
from pprl.protocol.linkage.matching import Selection, one_to_one
from pprl.protocol.method import DEFAULT_SATURATION, method_params
from pprl.protocol.model.classifier import (
    KERNEL_DIVISOR,
    KERNEL_QUANTILE,
    MIN_CAP,
    Model,
    saturation_caps,
    train,
)
from pprl.protocol.model.features import MISSING_CODE
from tests.oracles import all_pair_features, pair_list


def _features(rows: list[tuple[float, int, int]]) -> np.ndarray:
    """(n, 3) features of one entry: distance, missing on one side, missing on both."""
    return np.array(rows, dtype=np.float64)


def test_caps_are_the_present_non_matches_quantile_with_a_floor() -> None:
    negatives = [(d, 0, 0) for d in (0.01, 0.02, 0.03, 0.04, 0.05)]
    # Missing on one side (distance 1) and matches must not move the cap.
    x = _features([*negatives, (1.0, 1, 0), (1.0, 0, 1), (0.0, 0, 0), (0.001, 0, 0)])
    y = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1])
    np.testing.assert_allclose(saturation_caps(x, y, 0.5), [0.03])
    np.testing.assert_allclose(saturation_caps(x, y, 0.25), [0.02])
    # Non-matches identical on the entry (namesakes) do not turn the entry off.
    same = _features([(0.0, 0, 0)] * 4 + [(0.0, 0, 0)])
    assert saturation_caps(same, np.array([0, 0, 0, 0, 1]), 0.5)[0] == MIN_CAP


def test_model_reads_capped_distances_and_keeps_caps_when_saved() -> None:
    weights = np.array([-10.0, -20.0, 0.0, 0.0, 0.0, 0.0])
    caps = np.array([0.1, 0.5])
    model = Model("linear", {"weights": weights, "bias": np.array(1.0), "caps": caps})
    x = np.array([[0.05, 0.9, 0, 0, 0, 0], [0.8, 0.2, 0, 0, 0, 0]])
    expected = np.minimum(x[:, :2], caps) @ weights[:2] + 1.0
    np.testing.assert_allclose(model.decision(x), expected)
    loaded = Model.from_bytes(model.to_bytes())
    np.testing.assert_allclose(loaded.decision(x), expected)
    assert x[0, 1] == 0.9  # the caller's features are not changed


def _two_of_three(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(6n, 9) features and labels: n matches with every entry close, n with one entry as far
    as a stranger's, and 4n strangers; nothing missing."""
    rng = np.random.default_rng(7)
    close = rng.uniform(0.0, 0.004, size=(n, 3))
    one_far = close.copy()
    one_far[np.arange(n), rng.integers(0, 3, n)] = rng.uniform(0.02, 0.05, n)
    strangers = rng.uniform(0.01, 0.05, size=(4 * n, 3))
    x = np.concatenate([close, one_far, strangers])
    x = np.concatenate([x, np.zeros((len(x), 6))], axis=1)
    return x, np.concatenate([np.ones(2 * n), np.zeros(4 * n)]).astype(int)


def test_two_of_three_agreeing_entries_are_accepted_only_with_caps() -> None:
    """Matches: all entries close, or one entry as far as a stranger's. A raw linear model
    has to trade the two; the saturated one accepts both and still rejects strangers."""
    x, y = _two_of_three(600)
    raw = train(x, y, "linear", class_weight="balanced")
    capped = train(x, y, "linear", class_weight="balanced", saturation=0.1)

    def errors(model: Model) -> int:
        accepted = model.decision(x) > 0
        return int((accepted != (y == 1)).sum())

    # Of 3,600 pairs the raw model gets about 120 wrong (it accepts strangers to keep the
    # one-far matches); the saturated one gets none.
    assert errors(raw) > 60
    assert errors(capped) < 10


def _tensors(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small integer distance vectors with some values missing on some entries."""
    rng = np.random.default_rng(seed)
    tensor_a = rng.integers(0, 6, size=(70, 3, 6), dtype=np.uint8)
    tensor_b = rng.integers(0, 6, size=(60, 3, 6), dtype=np.uint8)
    tensor_b[:20] = tensor_a[:20]
    tensor_a[rng.random((70, 3)) < 0.15] = MISSING_CODE
    tensor_b[rng.random((60, 3)) < 0.15] = MISSING_CODE
    return tensor_a, tensor_b


def _all_pairs(tensor_a: np.ndarray, tensor_b: np.ndarray, model: Model) -> np.ndarray:
    """Every pair's decision from the features, written out directly: the oracle."""
    x = all_pair_features(tensor_a, tensor_b)
    x[:, :3] = np.minimum(x[:, :3], model.arrays["caps"])
    scores = x @ model.arrays["weights"] + float(model.arrays["bias"])
    return scores.reshape(len(tensor_a), len(tensor_b))


@pytest.mark.parametrize(
    ("caps", "bounded"),
    [
        # The first entry's bound lies below its cap: it still blocks.
        (np.array([0.9, 0.05, 0.05]), True),
        # Every bound reaches its cap: no entry can exclude a pair, all pairs are scored.
        (np.array([0.02, 0.02, 0.02]), False),
    ],
)
def test_candidates_with_caps_equal_all_pairs_scoring(caps: np.ndarray, bounded: bool) -> None:
    tensor_a, tensor_b = _tensors(11)
    weights = np.array([-60.0, -30.0, -30.0, -0.5, -0.2, -1.0, 0.3, 0.1, 0.2])
    probe = Model("linear", {"weights": weights, "bias": np.array(0.0), "caps": caps})
    bias = -np.quantile(_all_pairs(tensor_a, tensor_b, probe), 0.97)
    model = Model("linear", {"weights": weights, "bias": np.array(bias), "caps": caps})
    selection = Selection(model, None)
    got = accepted_pairs(tensor_a, tensor_b, selection)
    scores = _all_pairs(tensor_a, tensor_b, model)
    expected = set(zip(*np.nonzero(scores > 1e-4), strict=True))
    borderline = set(zip(*np.nonzero(np.abs(scores) <= 1e-4), strict=True))
    found = set(pair_list(got.matches))
    assert len(expected) > 20
    assert expected <= found <= expected | borderline
    assert (got.candidates is not None) == bounded
    assert np.isfinite(bounds(model, 3).limits).any() == bounded
    assert len(one_to_one(got.matches)) > 0


def test_multi_error_models_saturate_by_default_and_one_error_does_not() -> None:
    assert method_params(error_model="registers").saturation == DEFAULT_SATURATION
    assert method_params(error_model="registers").hard_negatives == 2
    assert method_params().saturation == 0.0
    assert method_params().hard_negatives == 2
    assert method_params(error_model="registers", noise_sigma=1.0).saturation == 0.0
    assert method_params(error_model="registers", saturation=0.1).saturation == 0.1
    with pytest.raises(ValueError, match="saturation"):
        method_params(saturation=1.5)


def test_multi_error_models_train_a_logistic_regression_by_default() -> None:
    assert method_params().classifier == "linear"
    registers = method_params(error_model="registers")
    assert registers.classifier == "logistic"
    assert registers.c == 100.0
    assert method_params(error_model="variants", classifier="linear").classifier == "linear"
    assert method_params(classifier="logistic").classifier == "logistic"
    with pytest.raises(ValueError, match="logistic"):
        method_params(classifier="tree")


def test_a_kernel_model_reads_each_distance_as_its_kernel_value() -> None:
    """The kernel model (sealed_kernel_features > 0): widths at KERNEL_QUANTILE of the
    non-matches' distances over KERNEL_DIVISOR, each present entry read as exp(-d / width)
    and a missing one as 0; like caps it lets two agreeing entries of three outweigh a far
    one, and it is saved with its widths."""
    n = 600
    x, y = _two_of_three(n)
    model = train(x, y, "logistic", class_weight="balanced", kernel=True)
    widths = model.widths
    assert widths is not None and model.caps is None
    np.testing.assert_allclose(widths, saturation_caps(x, y, KERNEL_QUANTILE) / KERNEL_DIVISOR)
    decisions = model.decision(x)
    assert (decisions[: 2 * n] > 0).mean() > 0.95 and (decisions[2 * n :] < 0).mean() > 0.95
    # The decision is linear in the kernel values; a missing value's kernel value is 0.
    weights, bias = model.arrays["weights"], float(model.arrays["bias"])
    row = np.array([[0.01, 0.3, 1.0, 0, 0, 1, 0, 0, 0]])
    kernel = [np.exp(-0.01 / widths[0]), np.exp(-0.3 / widths[1]), 0.0]
    expected = bias + kernel @ weights[:3] + weights[5]
    np.testing.assert_allclose(model.decision(row), [expected])
    assert not model.linear_in_distances and model.linear_parts() is not None
    loaded = Model.from_bytes(model.to_bytes())
    np.testing.assert_allclose(loaded.decision(x), decisions)
    with pytest.raises(SettingError, match="kernel"):
        train(x, y, "rbf", kernel=True)
