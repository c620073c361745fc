import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.linkage.matching import (
    GREEDY,
    OPTIMAL,
    Matches,
    exact_scores,
    one_to_one,
)
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model.classifier import Model, train
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.vectors.smashing import smash
from tests.oracles import brute_greedy, candidate_pairs, match, pair_list, training_set

MAPPING = (("first", "first"), ("last", "last"), ("middle", "first"), ("middle", "last"))


def _units(rng: np.random.Generator, n: int, m: int = 3, r: int = 6) -> np.ndarray:
    return unit_vectors(rng.integers(0, 12, size=(n, m, r), dtype=np.uint8))


def _random_model(kind: str, unit_a: np.ndarray, unit_b: np.ndarray, seed: int) -> Model:
    """A model with a bias chosen so that about a third of all pairs are accepted."""
    rng = np.random.default_rng(seed)
    m = unit_a.shape[1]
    if kind == "linear":
        arrays = {"weights": -rng.uniform(1, 10, size=m), "bias": np.array(0.0)}
    else:
        arrays = {
            "support_vectors": rng.uniform(0, 0.6, size=(15, m)),
            "dual_coef": rng.normal(0, 1, size=15),
            "gamma": np.array(3.0),
            "bias": np.array(0.0),
        }
    scores = exact_scores(unit_a, unit_b, Model(kind, arrays))
    arrays["bias"] = np.array(-np.quantile(scores, 0.66))
    return Model(kind, arrays)


def _brute_candidates(scores: np.ndarray, top_k: int) -> list[tuple[int, int]]:
    pairs = []
    for i, row in enumerate(scores):
        ranked = sorted((-s, j) for j, s in enumerate(row) if s > 0)
        pairs += [(i, j) for _, j in ranked[:top_k]]
    return pairs


@pytest.mark.parametrize("kind", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block_bytes", [1, 300, 2_000, 64 << 20])
@pytest.mark.parametrize("top_k", [1, 3, 100])
def test_candidates_and_matches_equal_brute_force(
    kind: str, seed: int, block_bytes: int, top_k: int
) -> None:
    rng = np.random.default_rng(seed)
    unit_a, unit_b = _units(rng, 23), _units(rng, 17)
    model = _random_model(kind, unit_a, unit_b, seed)
    scores = exact_scores(unit_a, unit_b, model)
    calls = []
    candidates = candidate_pairs(
        unit_a,
        unit_b,
        model,
        top_k=top_k,
        block_bytes=block_bytes,
        progress=lambda done, total: calls.append((done, total)),
    )
    expected = _brute_candidates(scores, top_k)
    assert sorted(pair_list(candidates)) == sorted(expected)
    assert candidates.rows_a.dtype == np.int64 and candidates.rows_b.dtype == np.int64
    assert candidates.scores.dtype == np.float32
    np.testing.assert_allclose(
        candidates.scores, scores[candidates.rows_a, candidates.rows_b], rtol=1e-4, atol=1e-5
    )
    assert calls[-1] == (23, 23)
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})
    if block_bytes == 1:
        assert len(calls) == 23
    matched = match(unit_a, unit_b, model, top_k=top_k, block_bytes=block_bytes)
    assert pair_list(matched) == brute_greedy(scores, expected)


def test_ties_go_to_the_lower_b_row() -> None:
    rng = np.random.default_rng(4)
    unit_a = _units(rng, 5)
    unit_b = np.repeat(_units(rng, 4), 3, axis=0)
    model = _random_model("linear", unit_a, unit_b, 4)
    candidates = candidate_pairs(unit_a, unit_b, model, top_k=1)
    assert (candidates.rows_b % 3 == 0).all()


def test_empty_inputs() -> None:
    rng = np.random.default_rng(5)
    unit = _units(rng, 4)
    model = Model("linear", {"weights": -np.ones(3), "bias": np.array(5.0)})
    assert len(candidate_pairs(unit[:0], unit, model)) == 0
    assert len(match(unit, unit[:0], model)) == 0


def test_top_k_must_be_positive() -> None:
    unit = _units(np.random.default_rng(6), 2)
    model = Model("linear", {"weights": -np.ones(3), "bias": np.array(1.0)})
    with pytest.raises(ValueError, match="top_k"):
        candidate_pairs(unit, unit, model, top_k=0)


def test_one_to_one_is_greedy() -> None:
    rng = np.random.default_rng(7)
    n = 400
    candidates = Matches(
        rows_a=rng.integers(0, 30, size=n).astype(np.int64),
        rows_b=rng.integers(0, 30, size=n).astype(np.int64),
        scores=rng.integers(1, 20, size=n).astype(np.float32),  # many ties
    )
    chosen = one_to_one(candidates)
    assert len(set(chosen.rows_a.tolist())) == len(chosen)
    assert len(set(chosen.rows_b.tolist())) == len(chosen)
    keys = list(
        zip((-chosen.scores).tolist(), chosen.rows_a.tolist(), chosen.rows_b.tolist(), strict=True)
    )
    assert keys == sorted(keys)
    # Every dropped pair lost to an earlier-ranked chosen pair sharing one of its rows.
    best_a = dict(zip(chosen.rows_a.tolist(), keys, strict=True))
    best_b = dict(zip(chosen.rows_b.tolist(), keys, strict=True))
    for s, a, b in zip(candidates.scores, candidates.rows_a, candidates.rows_b, strict=True):
        key = (-float(s), int(a), int(b))
        winners = [best.get(row) for best, row in ((best_a, int(a)), (best_b, int(b)))]
        assert any(w is not None and w <= key for w in winners)


def test_the_optimal_assignment_weighs_both_records_alternatives() -> None:
    # a0's best pair is b0, which is also a1's only pair: greedy strands a1, optimal does not.
    pairs = Matches(
        rows_a=np.array([0, 0, 1], dtype=np.int64),
        rows_b=np.array([0, 1, 0], dtype=np.int64),
        scores=np.array([10.0, 9.0, 9.0], dtype=np.float32),
    )
    greedy = one_to_one(pairs, GREEDY)
    optimal = one_to_one(pairs, OPTIMAL)
    assert sorted(zip(greedy.rows_a.tolist(), greedy.rows_b.tolist(), strict=True)) == [(0, 0)]
    assert sorted(zip(optimal.rows_a.tolist(), optimal.rows_b.tolist(), strict=True)) == [
        (0, 1),
        (1, 0),
    ]
    assert one_to_one(pairs) == greedy  # greedy unless asked
    empty = Matches(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
    assert len(one_to_one(empty, OPTIMAL)) == 0
    with pytest.raises(ValueError, match="assignment"):
        one_to_one(pairs, "stable-marriage")
    with pytest.raises(ValueError, match="assignment"):
        method_params(assignment="stable-marriage")
    assert method_params().assignment == GREEDY  # the paper's setting
    assert method_params(noise_sigma=1.0).assignment == OPTIMAL
    assert method_params(error_model="registers").assignment == OPTIMAL


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_a, n_b", [(25, 30), (30, 25)])  # either side the smaller
def test_the_optimal_assignment_has_the_largest_total_score_of_any_one_to_one_subset(
    seed: int, n_a: int, n_b: int
) -> None:
    rng = np.random.default_rng(seed)
    kept = 120
    cells = rng.choice(n_a * n_b, size=kept, replace=False)
    pairs = Matches(
        rows_a=(cells // n_b + 100).astype(np.int64),  # row numbers need not start at 0
        rows_b=(cells % n_b).astype(np.int64),
        scores=rng.integers(1, 12, size=kept).astype(np.float32),  # ties on purpose
    )
    chosen = one_to_one(pairs, OPTIMAL)
    assert len(set(chosen.rows_a.tolist())) == len(set(chosen.rows_b.tolist())) == len(chosen)
    given = {
        (a, b): score for a, b, score in zip(pairs.rows_a, pairs.rows_b, pairs.scores, strict=True)
    }
    picked = zip(chosen.rows_a, chosen.rows_b, chosen.scores, strict=True)
    assert all(given[(a, b)] == score for a, b, score in picked)  # accepted pairs, own scores
    # The best total by a dense solver over the same pairs (absent pairs weigh nothing).
    dense = np.zeros((n_a, n_b))
    dense[cells // n_b, cells % n_b] = pairs.scores
    best_rows, best_cols = linear_sum_assignment(dense, maximize=True)
    assert float(chosen.scores.sum()) == pytest.approx(dense[best_rows, best_cols].sum())
    assert float(chosen.scores.sum()) >= float(one_to_one(pairs, GREEDY).scores.sum())


@pytest.mark.parametrize("seed", range(3))
def test_pairs_in_no_conflict_skip_the_solver_and_keep_the_best_total(seed: int) -> None:
    """Most accepted pairs at scale share neither row with another: each is kept when its
    score is above 0 (a stand-in's), dropped otherwise, and the solver sees only the
    conflicted rest; the total is still the best one-to-one subset's."""
    rng = np.random.default_rng(seed)
    alone_scores = rng.uniform(-3.0, 10.0, size=150)
    cells = rng.choice(50 * 50, size=160, replace=False)
    rows_a = np.concatenate([np.arange(150), 150 + cells // 50]).astype(np.int64)
    rows_b = np.concatenate([np.arange(150), 150 + cells % 50]).astype(np.int64)
    scores = np.concatenate([alone_scores, rng.uniform(0.5, 12.0, size=160)])
    pairs = Matches(rows_a, rows_b, scores)
    chosen = one_to_one(pairs, OPTIMAL)
    kept = {(int(a), int(b)) for a, b in zip(chosen.rows_a, chosen.rows_b, strict=True)}
    for i, score in enumerate(alone_scores):
        assert ((i, i) in kept) == (score > 0)
    dense = np.zeros((200, 200))
    dense[rows_a, rows_b] = scores
    best_rows, best_cols = linear_sum_assignment(dense, maximize=True)
    best = dense[best_rows, best_cols]
    assert float(chosen.scores.sum()) == pytest.approx(best[best > 0].sum())
    # In the order the pairs were given, as before the split.
    given = {(int(a), int(b)): t for t, (a, b) in enumerate(zip(rows_a, rows_b, strict=True))}
    order = [given[pair] for pair in zip(chosen.rows_a, chosen.rows_b, strict=True)]
    assert np.all(np.diff(order) > 0)


def _made_up_names(rng: np.random.Generator, n: int) -> list[str]:
    onsets = ["B", "D", "K", "L", "M", "N", "R", "S", "T", "V", "BR", "ST", "CH", "GR", "SH"]
    vowels = ["A", "E", "I", "O", "U", "AI", "EO", "OU"]
    codas = ["", "", "N", "L", "R", "S", "TH", "X", "NE"]
    return [
        "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(int(rng.integers(1, 4))))
        + rng.choice(codas)
        for _ in range(n)
    ]


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_end_to_end_linkage_of_a_corrupted_copy(kind: str) -> None:
    rng = np.random.default_rng(8)
    n = 300
    alice = {column: _made_up_names(rng, n) for column in ("first", "middle", "last")}
    reference = {column: _made_up_names(rng, 60) for column in ("first", "last")}
    names = ["first", "last", "middle"]
    corrupter = Corrupter(rng)
    rows = [corrupter.corrupt_record([alice[c][i] for c in names]) for i in range(n)]
    bob = {c: [row[j] for row in rows] for j, c in enumerate(names)}
    features, labels = training_set(
        alice, reference, MAPPING, rng, training_records=n, negatives_per_positive=1
    )
    model = train(features, labels, kind)
    unit_a = unit_vectors(smash(alice, reference, MAPPING))
    unit_b = unit_vectors(smash(bob, reference, MAPPING))
    matched = match(unit_a, unit_b, model)
    truth = [(str(i), str(i)) for i in range(n)]
    predicted = [(str(a), str(b)) for a, b in pair_list(matched)]
    assert linkage_quality(predicted, truth).f1 >= 0.9
