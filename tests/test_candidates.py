"""Candidate generation: the pairs it scores hold every pair all-pairs scoring accepts."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from pprl.protocol.data.reference import DEFAULT_MAPPING
from pprl.protocol.data.synthetic import default_reference, generate
from pprl.protocol.linkage import candidates, plans
from pprl.protocol.linkage.candidates import CandidatesUnavailable, accepted_pairs, distinct_entries
from pprl.protocol.linkage.matching import Selection, exact_scores, score_pairs
from pprl.protocol.model.classifier import Model, train
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.vectors.smashing import smash
from tests.oracles import pair_list, training_set

ATTRIBUTES = ("first", "middle", "last")


@cache
def _linkage(size: int = 400, errors: int | tuple[int, int] = 1) -> tuple:
    """Smashed voter-like data of both sides, the true pairs, and a linear and an rbf model."""
    data = generate(size, seed=3, errors_per_row=errors)
    reference = default_reference(150)

    def columns(people: list) -> dict[str, list[str]]:
        return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}

    alice, bob = columns(data.alice), columns(data.bob)
    row_a = {p.id: i for i, p in enumerate(data.alice)}
    row_b = {p.id: i for i, p in enumerate(data.bob)}
    truth = {(row_a[a], row_b[b]) for a, b in data.truth}
    x, y = training_set(
        alice,
        reference,
        DEFAULT_MAPPING,
        np.random.default_rng(1),
        training_records=300,
        negatives_per_positive=4,
        hard_negatives=2,
    )
    models = {kind: train(x, y, kind, class_weight="balanced") for kind in ("linear", "rbf")}
    models["kernel"] = train(x, y, "logistic", class_weight="balanced", kernel=True)
    return (
        smash(alice, reference, DEFAULT_MAPPING),
        smash(bob, reference, DEFAULT_MAPPING),
        truth,
        models,
    )


def _oracle(tensor_a: np.ndarray, tensor_b: np.ndarray, selection: Selection):
    return score_pairs(unit_vectors(tensor_a), unit_vectors(tensor_b), [selection])[0]


def test_distinct_entries_rebuild_every_unit_vector() -> None:
    rng = np.random.default_rng(0)
    tensor = rng.integers(0, 3, size=(300, 3, 4), dtype=np.uint8)  # few values: many repeats
    entries = distinct_entries(tensor, chunk_rows=7)
    units = unit_vectors(tensor)
    for m, entry in enumerate(entries):
        assert len(entry.vectors) == len(np.unique(tensor[:, m], axis=0)) < 300
        np.testing.assert_array_equal(entry.vectors[entry.codes], units[:, m])
        assert entry.counts.sum() == 300


def test_hash_grouping_agrees_with_byte_grouping() -> None:
    """The byte-by-byte grouping is what a hash collision would fall back to."""
    rng = np.random.default_rng(1)
    tensor = rng.integers(0, 2, size=(500, 2, 6), dtype=np.uint8)
    for m, entry in enumerate(distinct_entries(tensor, chunk_rows=64)):
        rows, codes = candidates._distinct_by_bytes(tensor, m, 64)
        np.testing.assert_array_equal(rows[codes], tensor[:, m])
        # The same partition of the rows, whatever the numbering.
        assert len(
            {(a, b) for a, b in zip(entry.codes.tolist(), codes.tolist(), strict=True)}
        ) == len(rows)


def test_empty_tensor_has_no_distinct_vectors() -> None:
    (entry,) = distinct_entries(np.zeros((0, 1, 5), dtype=np.uint8))
    assert entry.vectors.shape == (0, 5) and len(entry.codes) == 0


@pytest.mark.parametrize("rows_of", ["a", "b"])
@pytest.mark.parametrize("top_k", [1, 10, None])
def test_candidate_path_equals_all_pairs_scoring(rows_of: str, top_k: int | None) -> None:
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models["linear"], top_k, rows_of)
    expected = _oracle(tensor_a, tensor_b, selection)
    side_a, side_b = distinct_entries(tensor_a), distinct_entries(tensor_b)
    work = candidates.plan(side_a, side_b, selection, block_bytes=4096, dense=False)
    work.pairs_per_chunk = 50  # many chunks per block, many blocks
    assert len(work.blocks) > 5
    got = plans.run_here(work)
    assert pair_list(got.matches) == pair_list(expected)  # same pairs, same order
    np.testing.assert_allclose(got.matches.scores, expected.scores, rtol=1e-4, atol=1e-3)
    # It scored a minority of the 160,000 pairs (tiny data repeats few names).
    assert 0 < got.candidates < 0.4 * len(tensor_a) * len(tensor_b)


# Every selection with the linear model; the RBF model (dense scoring, about 12 s a case)
# with the one-best and the every-pair selections, the two ends of the slicing's bookkeeping.
SLICED = [
    *(("linear", k, t) for k, t in [(1, 0.0), (10, 0.0), (None, 0.0), (3, -np.inf)]),
    ("rbf", 1, 0.0),
    ("rbf", 3, -np.inf),
]


@pytest.mark.parametrize(("kind", "top_k", "threshold"), SLICED)
def test_the_peer_matched_a_slice_at_a_time_gives_the_same_pairs(
    kind: str, top_k: int | None, threshold: float
) -> None:
    """MATCH's memory bound: the peer's rows in slices of 37 (eleven slices) give exactly the
    pairs, order and scores of one pass over all of them, for the candidate path, the dense
    product and soft linkage's every-pair scoring alike."""
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models[kind], top_k, "a", threshold=threshold)
    whole = accepted_pairs(tensor_a, tensor_b, selection)
    seen: list[tuple[int, int]] = []
    sliced = accepted_pairs(
        tensor_a, tensor_b, selection, slice_rows=37, progress=lambda d, t: seen.append((d, t))
    )
    assert pair_list(sliced.matches) == pair_list(whole.matches)
    # Float32 products of other shapes round differently by BLAS kernel (3.5e-5 relative on
    # OpenBLAS's Haswell kernel), as for the blocks above: the pairs are exact, not the bits.
    np.testing.assert_allclose(sliced.matches.scores, whole.matches.scores, rtol=1e-4, atol=1e-3)
    assert (sliced.candidates is None) == (whole.candidates is None)
    assert seen and seen[-1] == (len(tensor_b), len(tensor_b))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_peer_larger_than_a_slice_is_matched_in_slices_of_bounded_bytes() -> None:
    wide = np.zeros((10, 6, 1000), dtype=np.uint8)
    assert candidates.peer_slice_rows(wide, slice_bytes=240 << 20) == 10_485
    assert candidates.peer_slice_rows(wide, slice_bytes=1 << 20) == candidates.MIN_SLICE_ROWS


def test_candidates_keep_every_true_match() -> None:
    tensor_a, tensor_b, truth, models = _linkage()
    work = candidates.plan(
        distinct_entries(tensor_a),
        distinct_entries(tensor_b),
        Selection(models["linear"]),
        dense=False,
    )
    rows_a, rows_b = np.array(sorted(truth)).T
    assert work.is_candidate(rows_a, rows_b).all()
    # ...while a pair of strangers is mostly not a candidate.
    strangers = work.is_candidate(rows_a, np.roll(rows_b, 1))
    assert strangers.mean() < 0.5


def test_harder_errors_candidates_still_hold_what_the_classifier_accepts() -> None:
    """With 1-3 errors a row some true pairs fall outside; none the classifier accepts does."""
    tensor_a, tensor_b, _, models = _linkage(300, (1, 3))
    selection = Selection(models["linear"], None)
    got = accepted_pairs(tensor_a, tensor_b, selection)
    assert got.candidates is not None
    assert pair_list(got.matches) == pair_list(_oracle(tensor_a, tensor_b, selection))


def test_mixed_sign_weights_still_bound_exactly() -> None:
    rng = np.random.default_rng(4)
    tensor_a = rng.integers(0, 6, size=(60, 3, 5), dtype=np.uint8)
    tensor_b = rng.integers(0, 6, size=(50, 3, 5), dtype=np.uint8)
    weights = np.array([-40.0, 3.0, -25.0])
    probe = Model("linear", {"weights": weights, "bias": np.array(0.0)})
    scores = exact_scores(unit_vectors(tensor_a), unit_vectors(tensor_b), probe)
    model = Model("linear", {"weights": weights, "bias": np.array(-np.quantile(scores, 0.9))})
    selection = Selection(model, 3)
    got = accepted_pairs(tensor_a, tensor_b, selection)
    expected = _oracle(tensor_a, tensor_b, selection)
    assert got.candidates is not None and len(expected) > 10
    assert pair_list(got.matches) == pair_list(expected)


def test_no_bounding_weight_falls_back_to_all_pairs() -> None:
    """A linear model is then scored by one product over all pairs (dense_scores)."""
    rng = np.random.default_rng(5)
    tensor_a = rng.integers(0, 6, size=(20, 2, 5), dtype=np.uint8)
    tensor_b = rng.integers(0, 6, size=(15, 2, 5), dtype=np.uint8)
    model = Model("linear", {"weights": np.array([1.0, 2.0]), "bias": np.array(-2.5)})
    with pytest.raises(CandidatesUnavailable):
        candidates.plan(distinct_entries(tensor_a), distinct_entries(tensor_b), Selection(model))
    got = accepted_pairs(tensor_a, tensor_b, Selection(model, None))
    assert got.candidates == 20 * 15
    assert pair_list(got.matches) == pair_list(_oracle(tensor_a, tensor_b, Selection(model, None)))


def test_rbf_envelope_holds_every_training_pair_the_rbf_accepts() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 0.05, size=(400, 3))
    y = (x.sum(axis=1) < 0.06).astype(int)
    model = train(x, y, "rbf", class_weight="balanced")
    accepted = model.decision(x) > 0
    assert accepted.sum() > 50
    envelope = x @ model.arrays["envelope_weights"] + model.arrays["envelope_bias"]
    assert (envelope[accepted] > 0).all()
    assert (envelope <= 0).any()  # it does exclude something
    # A model saved and loaded keeps its envelope.
    assert "envelope_weights" in Model.from_bytes(model.to_bytes()).arrays


def test_rbf_on_candidates_equals_rbf_on_all_pairs_on_generated_data() -> None:
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models["rbf"], 10)
    got = accepted_pairs(tensor_a, tensor_b, selection)
    assert got.candidates is not None
    expected = _oracle(tensor_a, tensor_b, selection)
    # The same pairs in the same order, except where two scores tie to float32 rounding (the
    # candidate path reads cosines from tables, all-pairs from one product): then the order,
    # and so which one top_k keeps, may swap.
    np.testing.assert_array_equal(got.matches.rows_a, expected.rows_a)
    np.testing.assert_allclose(got.matches.scores, expected.scores, rtol=1e-5, atol=1e-5)
    differ = set(pair_list(got.matches)) ^ set(pair_list(expected))
    assert len(differ) <= 0.001 * len(expected)


def test_rbf_without_envelope_is_refused_by_the_planner() -> None:
    _, _, _, models = _linkage()
    arrays = {k: v for k, v in models["rbf"].arrays.items() if not k.startswith("envelope")}
    with pytest.raises(CandidatesUnavailable, match="envelope"):
        candidates.bounds(Model("rbf", arrays), 4)


def test_a_kernel_model_on_candidates_equals_it_on_all_pairs() -> None:
    """The kernel's chord envelope bounds it from above (candidates.kernel_envelope), so the
    blocking join keeps every pair the kernel model accepts, while cutting most pairs."""
    tensor_a, tensor_b, _, models = _linkage()
    model = models["kernel"]
    assert model.widths is not None and not model.linear_in_distances
    selection = Selection(model, 10)
    got = accepted_pairs(tensor_a, tensor_b, selection)
    expected = _oracle(tensor_a, tensor_b, selection)
    assert len(expected) > 100
    assert got.candidates is not None and got.candidates < 0.7 * len(tensor_a) * len(tensor_b)
    np.testing.assert_array_equal(got.matches.rows_a, expected.rows_a)
    differ = set(pair_list(got.matches)) ^ set(pair_list(expected))
    assert len(differ) <= 0.001 * len(expected)


def test_the_kernel_envelope_is_above_the_kernel_decision_everywhere() -> None:
    rng = np.random.default_rng(5)
    m = 3
    widths = np.array([0.05, 0.2, 5e-5])
    weights = np.concatenate([[4.0, -1.0, 2.5], rng.normal(size=2 * m)])
    model = Model("linear", {"weights": weights, "bias": np.array(-3.0), "widths": widths})
    distances = rng.uniform(0, 1.2, size=(5000, m))
    distances[:100] = 0.0
    one = (rng.random((5000, m)) < 0.1).astype(float)
    both = (rng.random((5000, m)) < 0.05).astype(float) * (1 - one)
    features = np.concatenate([distances, one, both], axis=1)
    bound = candidates.envelope(model)
    capped = np.minimum(distances, bound.caps)
    linear = capped @ bound.weights[:m] + one @ bound.weights[m : 2 * m]
    linear += both @ bound.weights[2 * m :] + bound.bias
    decision = model.decision(features)
    assert (linear >= decision - 1e-9).all()
    assert (linear <= 0).any()  # and it bounds something
