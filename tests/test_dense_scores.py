"""All pairs scored by one matrix product: the same pairs as all-pairs scoring, missing
values included, and chosen only where the candidate bounds would keep most pairs."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.linkage import candidates, dense_scores, plans
from pprl.protocol.linkage.candidates import distinct_entries
from pprl.protocol.linkage.matching import Selection, exact_scores, score_pairs
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import MISSING_CODE, unit_vectors
from tests.oracles import pair_list


def _tensors(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random codes with missing values on either side, in every entry."""
    rng = np.random.default_rng(seed)
    tensor_a = rng.integers(0, 9, size=(70, 3, 6), dtype=np.uint8)
    tensor_b = rng.integers(0, 9, size=(55, 3, 6), dtype=np.uint8)
    for tensor in (tensor_a, tensor_b):
        rows, entries = np.nonzero(rng.random(tensor.shape[:2]) < 0.2)
        tensor[rows, entries] = MISSING_CODE
    return tensor_a, tensor_b


def _model(tensor_a: np.ndarray, tensor_b: np.ndarray) -> Model:
    """Distance weights of both signs and weights on both missing indicators, with the bias
    set so that about a tenth of all pairs are accepted."""
    weights = np.array([-30.0, 4.0, -20.0, 2.5, -3.0, 1.5, -6.0, 5.0, 0.5])
    probe = Model("linear", {"weights": weights, "bias": np.array(0.0)})
    scores = exact_scores(unit_vectors(tensor_a), unit_vectors(tensor_b), probe)
    return Model("linear", {"weights": weights, "bias": np.array(-np.quantile(scores, 0.9))})


@pytest.mark.parametrize("rows_of", ["a", "b"])
@pytest.mark.parametrize("top_k", [1, 3, None])
def test_one_product_keeps_what_all_pairs_scoring_keeps(rows_of: str, top_k: int | None) -> None:
    tensor_a, tensor_b = _tensors(6)
    selection = Selection(_model(tensor_a, tensor_b), top_k, rows_of)
    expected = score_pairs(unit_vectors(tensor_a), unit_vectors(tensor_b), [selection])[0]
    work = candidates.plan(
        distinct_entries(tensor_a), distinct_entries(tensor_b), selection, dense=True
    )
    assert isinstance(work, dense_scores.DensePlan)
    work.blocks = [(s, min(s + 8, len(tensor_a))) for s in range(0, len(tensor_a), 8)]
    got = plans.run_here(work)
    assert len(expected) > 30
    assert pair_list(got.matches) == pair_list(expected)  # same pairs, same order
    np.testing.assert_allclose(got.matches.scores, expected.scores, rtol=1e-4, atol=1e-3)
    assert got.candidates == len(tensor_a) * len(tensor_b)


def test_the_product_is_chosen_only_where_the_bounds_keep_most_pairs() -> None:
    """Distinct random vectors and a loose bound (as under noise) against repeated values
    and a bound that only equal ones pass (as without noise): the product, then the join."""
    tensor_a, tensor_b = _tensors(7)
    loose = Selection(_model(tensor_a, tensor_b))
    chosen = candidates.plan(distinct_entries(tensor_a), distinct_entries(tensor_b), loose)
    assert isinstance(chosen, dense_scores.DensePlan)
    rng = np.random.default_rng(8)
    values = rng.integers(0, 60, size=(100, 3, 40), dtype=np.uint8)  # 100 names an entry
    repeated_a = values[rng.integers(0, 100, 1000)]
    repeated_b = values[rng.integers(0, 100, 1000)]
    weights = np.array([-50.0, -50.0, -50.0])
    tight = Selection(Model("linear", {"weights": weights, "bias": np.array(1.0)}))
    chosen = candidates.plan(distinct_entries(repeated_a), distinct_entries(repeated_b), tight)
    assert isinstance(chosen, candidates.CandidatePlan)


def test_only_a_linear_model_without_caps_is_one_product() -> None:
    weights, bias = np.array([-1.0, -2.0]), np.array(0.5)
    assert dense_scores.applies(Model("linear", {"weights": weights, "bias": bias}))
    capped = {"weights": weights, "bias": bias, "caps": np.array([0.5, 0.5])}
    assert not dense_scores.applies(Model("linear", capped))
    rbf = {"support_vectors": np.zeros((1, 2)), "dual_coef": np.ones(1), "gamma": bias}
    assert not dense_scores.applies(Model("rbf", {**rbf, "bias": bias}))
    with pytest.raises(ValueError, match="linear in the distances, without caps"):
        dense_scores.plan(
            ([np.zeros((1, 2))], [np.zeros(1, bool)]),
            ([np.zeros((1, 2))], [np.zeros(1, bool)]),
            Selection(Model("linear", capped)),
        )
