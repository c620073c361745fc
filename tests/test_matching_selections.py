"""One scan, several selections: per-B-row top-k, every accepted pair, the memory cap."""

import numpy as np
import pytest

from pprl.protocol.linkage import matching
from pprl.protocol.linkage.matching import (
    PassTimes,
    Selection,
    TooManyPairs,
    exact_scores,
    score_pairs,
)
from tests.oracles import candidate_pairs, pair_list
from tests.test_matching import _brute_candidates, _random_model, _units


@pytest.mark.parametrize("kind", ["linear", "rbf"])
@pytest.mark.parametrize("block_bytes", [1, 500, 64 << 20])
@pytest.mark.parametrize("top_k", [1, 2, 50])
def test_top_k_per_b_row_equals_scoring_from_b(kind: str, block_bytes: int, top_k: int) -> None:
    """What Bob's daemon keeps (his rows first) equals a per-B-row selection of Alice's scan."""
    rng = np.random.default_rng(top_k)
    unit_a, unit_b = _units(rng, 29), _units(rng, 13)
    model = _random_model(kind, unit_a, unit_b, seed=3)
    (found,) = score_pairs(unit_a, unit_b, [Selection(model, top_k, "b")], block_bytes=block_bytes)
    expected = _brute_candidates(exact_scores(unit_b, unit_a, model), top_k)
    assert sorted((b, a) for a, b in pair_list(found)) == sorted(expected)
    # Sorted by B row, then by descending score.
    keys = list(zip(found.rows_b.tolist(), (-found.scores).tolist(), strict=True))
    assert keys == sorted(keys)


@pytest.mark.parametrize("block_bytes", [1, 700, 64 << 20])
def test_every_accepted_pair_is_kept_without_top_k(block_bytes: int) -> None:
    rng = np.random.default_rng(5)
    unit_a, unit_b = _units(rng, 31), _units(rng, 19)
    model = _random_model("linear", unit_a, unit_b, seed=1)
    (found,) = score_pairs(unit_a, unit_b, [Selection(model, None)], block_bytes=block_bytes)
    scores = exact_scores(unit_a, unit_b, model)
    confident = np.abs(scores) > 1e-4  # float32 rounding may flip a pair at the threshold
    expected = {
        (int(i), int(j)) for i, j in zip(*np.nonzero((scores > 0) & confident), strict=True)
    }
    got = set(pair_list(found))
    assert expected <= got
    assert all(not confident[i, j] for i, j in got - expected)
    assert len(got) > 100  # a third of the 589 pairs: the case is not trivial


def test_one_pass_for_many_selections_equals_separate_passes() -> None:
    rng = np.random.default_rng(11)
    unit_a, unit_b = _units(rng, 40), _units(rng, 35)
    linear = _random_model("linear", unit_a, unit_b, seed=2)
    rbf = _random_model("rbf", unit_a, unit_b, seed=4)
    selections = [
        Selection(linear, 3, "a"),
        Selection(rbf, None, "a"),
        Selection(linear, 2, "b"),
        Selection(rbf, 1, "b"),
    ]
    times = PassTimes()
    together = score_pairs(unit_a, unit_b, selections, block_bytes=900, times=times)
    for selection, found in zip(selections, together, strict=True):
        (alone,) = score_pairs(unit_a, unit_b, [selection], block_bytes=900)
        assert pair_list(found) == pair_list(alone)
        np.testing.assert_array_equal(found.scores, alone.scores)
    assert len(times.selections) == 4
    assert times.shared > 0 and all(t > 0 for t in times.selections)


def test_candidate_pairs_is_the_per_a_row_selection() -> None:
    rng = np.random.default_rng(2)
    unit_a, unit_b = _units(rng, 20), _units(rng, 20)
    model = _random_model("linear", unit_a, unit_b, seed=0)
    (found,) = score_pairs(unit_a, unit_b, [Selection(model, 4)])
    assert pair_list(found) == pair_list(candidate_pairs(unit_a, unit_b, model, top_k=4))


def test_a_classifier_that_accepts_too_much_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    unit = _units(rng, 30)
    everything = matching.Model("linear", {"weights": np.zeros(3), "bias": np.array(1.0)})
    monkeypatch.setattr(matching, "MAX_KEPT_PAIRS", 500)
    with pytest.raises(TooManyPairs, match="more than 500 pairs"):
        score_pairs(unit, unit, [Selection(everything, None)], block_bytes=1)
    # With top_k the same classifier keeps only k per row, far under the cap.
    (found,) = score_pairs(unit, unit, [Selection(everything, 2)], block_bytes=1)
    assert len(found) == 60


@pytest.mark.parametrize(("top_k", "rows_of"), [(0, "a"), (-1, "b"), (3, "c")])
def test_bad_selections_are_refused(top_k: int, rows_of: str) -> None:
    model = matching.Model("linear", {"weights": np.ones(3), "bias": np.array(0.0)})
    with pytest.raises(ValueError):
        Selection(model, top_k, rows_of)
