"""Soft linkage: each own row's K best peer rows whatever they score, and the tokens that
stand for the peer's rows."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.linkage import candidates, plans, soft_links
from pprl.protocol.linkage.candidates import CandidatesUnavailable, distinct_entries
from pprl.protocol.linkage.matching import Selection, exact_scores
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import MISSING_CODE, unit_vectors


def _tensors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    tensor_a = rng.integers(0, 9, size=(40, 2, 5), dtype=np.uint8)
    tensor_b = rng.integers(0, 9, size=(33, 2, 5), dtype=np.uint8)
    tensor_b[rng.random(33) < 0.2, 1] = MISSING_CODE
    return tensor_a, tensor_b


MODELS = {
    # One product over every pair.
    "linear": Model("linear", {"weights": np.array([-8.0, -3.0, 1.0, 0.5, -1.0, 0.2]),
                               "bias": np.array(-2.0)}),
    # Caps: scored block by block.
    "capped": Model("linear", {"weights": np.array([-8.0, -3.0, 1.0, 0.5, -1.0, 0.2]),
                               "bias": np.array(-2.0), "caps": np.array([0.6, 0.8])}),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("top_k", [1, 4])
def test_each_row_gets_its_best_peer_rows_even_when_all_score_below_zero(
    kind: str, top_k: int
) -> None:
    tensor_a, tensor_b = _tensors()
    model = MODELS[kind]
    exact = exact_scores(unit_vectors(tensor_a), unit_vectors(tensor_b), model)
    assert (exact < 0).mean() > 0.95  # a hard linkage would keep almost nothing
    selection = Selection(model, top_k, "a", threshold=-np.inf)
    found = candidates.accepted_pairs(tensor_a, tensor_b, selection).matches
    assert len(found) == top_k * len(tensor_a)
    for row in range(len(tensor_a)):
        mine = found.rows_a == row
        assert found.rows_a[mine].size == top_k
        best = np.sort(exact[row])[::-1][:top_k]
        np.testing.assert_allclose(found.scores[mine], best, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(exact[row, found.rows_b[mine]], best, rtol=1e-4, atol=1e-4)


def test_the_candidate_bounds_refuse_any_threshold_but_zero() -> None:
    tensor_a, tensor_b = _tensors()
    exact = exact_scores(unit_vectors(tensor_a), unit_vectors(tensor_b), MODELS["linear"])
    threshold = float(np.quantile(exact, 0.9))
    selection = Selection(MODELS["linear"], None, threshold=threshold)
    with pytest.raises(CandidatesUnavailable, match="above 0"):
        candidates.plan(distinct_entries(tensor_a), distinct_entries(tensor_b), selection)
    # The product honours the threshold: only pairs above it are kept.
    work = candidates.dense_plan(distinct_entries(tensor_a), distinct_entries(tensor_b), selection)
    kept = plans.run_here(work).matches
    assert len(kept) == np.count_nonzero(exact > threshold) > 0


def test_tokens_are_per_run_per_owner_and_distinct() -> None:
    rows = np.arange(20_000)
    these = soft_links.tokens("run-1", "bob", rows)
    assert these == soft_links.tokens("run-1", "bob", rows)  # both parties compute them
    assert len(set(these)) == len(rows)
    assert all(len(t) == soft_links.TOKEN_HEX and int(t, 16) >= 0 for t in these[:50])
    assert not set(these) & set(soft_links.tokens("run-2", "bob", rows))
    assert not set(these) & set(soft_links.tokens("run-1", "alice", rows))


def test_k_must_be_positive_and_at_most_the_peer_records() -> None:
    soft_links.check_top_k(5, 5)
    with pytest.raises(ValueError, match="at least 1"):
        soft_links.check_top_k(0, 10)
    with pytest.raises(ValueError, match=r"more peer records .* than the peer has \(4\)"):
        soft_links.check_top_k(5, 4)
