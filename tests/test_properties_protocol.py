"""Property tests (hypothesis) for the pure method in pprl.protocol.

The example-based tests next to this file pin concrete values; these check laws that must hold
for every input: one error per corruption, lossless CSV loading, exact smashing, cosine ranges,
the blockwise matcher against its slow oracle, metric bounds, the phase order and the digest.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import string
import tempfile
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from rapidfuzz.distance import Levenshtein

from pprl.files.records import load_records
from pprl.protocol.data.corruption import (
    ERROR_KINDS,
    OCR_PAIRS,
    PHONETIC_PAIRS,
    QWERTY_NEIGHBOURS,
    Corrupter,
)
from pprl.protocol.data.kinds import normalise_value
from pprl.protocol.data.records import normalise
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.linkage.matching import exact_scores
from pprl.protocol.method import agreement_digest
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import MISSING_CODE, pair_features, unit_vectors
from pprl.protocol.phases import Phase, PhaseOrderError, check_advance
from pprl.protocol.vectors.smashing import smash_values
from tests.oracles import brute_greedy, candidate_pairs, match, pair_list

FAST = settings(max_examples=60, deadline=None)
QUICK = settings(max_examples=25, deadline=None)

NAMES = st.text(alphabet=string.ascii_uppercase, max_size=20)
SEEDS = st.integers(min_value=0, max_value=2**63 - 1)


# --- corruption ---------------------------------------------------------------------------


def _both_ways(pairs: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    return [*pairs, *((b, a) for a, b in pairs)]


def _is_pattern_replacement(value: str, result: str, pairs: tuple[tuple[str, str], ...]) -> bool:
    """One occurrence of one rule's source (either direction of a pair) replaced by its target."""
    for source, target in _both_ways(pairs):
        start = value.find(source)
        while start != -1:
            if value[:start] + target + value[start + len(source) :] == result:
                return True
            start = value.find(source, start + 1)
    return False


def _is_one_error(kind: str, value: str, result: str) -> bool:
    """Whether ``result`` is exactly one error of ``kind`` applied to ``value``."""
    if kind == "keyboard":
        if len(result) != len(value) or Levenshtein.distance(value, result) != 1:
            return False
        (i,) = [i for i in range(len(value)) if value[i] != result[i]]
        return result[i] in QWERTY_NEIGHBOURS[value[i]]
    if kind == "insert":
        return (
            len(result) == len(value) + 1
            and Levenshtein.distance(value, result) == 1
            and all(c in string.ascii_uppercase for c in result)
        )
    if kind == "delete":
        return (
            len(value) >= 2
            and len(result) == len(value) - 1
            and (Levenshtein.distance(value, result) == 1)
        )
    if kind == "transpose":
        return any(
            value[i] != value[i + 1]
            and result == value[:i] + value[i + 1] + value[i] + value[i + 2 :]
            for i in range(len(value) - 1)
        )
    pairs = OCR_PAIRS if kind == "ocr" else PHONETIC_PAIRS
    return _is_pattern_replacement(value, result, pairs)


def _applies(kind: str, value: str) -> bool:
    """Whether one error of ``kind`` can be made in ``value``, judged from the exported tables."""
    if kind == "keyboard":
        return any(c in QWERTY_NEIGHBOURS for c in value)
    if kind == "insert":
        return True
    if kind == "delete":
        return len(value) >= 2
    if kind == "transpose":
        return any(a != b for a, b in pairwise(value))
    pairs = OCR_PAIRS if kind == "ocr" else PHONETIC_PAIRS
    return any(source in value for source, _ in _both_ways(pairs))


@FAST
@given(value=NAMES, seed=SEEDS, kind=st.sampled_from(ERROR_KINDS))
def test_corrupt_value_of_a_kind_makes_exactly_one_error_of_that_kind(
    value: str, seed: int, kind: str
) -> None:
    """An applicable kind gives a different value one error away; an inapplicable one raises."""
    corrupter = Corrupter(np.random.default_rng(seed))
    if not _applies(kind, value):
        with pytest.raises(ValueError):
            corrupter.corrupt_value(value, kind)
        return
    result = corrupter.corrupt_value(value, kind)
    assert result != value
    assert result, "a value is never emptied"
    assert _is_one_error(kind, value, result), (kind, value, result)


@FAST
@given(value=NAMES, seed=SEEDS)
def test_corrupt_value_of_a_random_kind_makes_one_error_of_an_applicable_kind(
    value: str, seed: int
) -> None:
    """Without a kind, the result differs and is one error of some kind that applies."""
    corrupter = Corrupter(np.random.default_rng(seed))
    assert corrupter.applicable_kinds(value) == [k for k in ERROR_KINDS if _applies(k, value)]
    result = corrupter.corrupt_value(value)
    assert result != value
    assert any(_is_one_error(kind, value, result) for kind in corrupter.applicable_kinds(value))


@FAST
@given(values=st.lists(NAMES, min_size=1, max_size=5), seed=SEEDS)
def test_corrupt_record_with_one_error_changes_exactly_one_field(
    values: list[str], seed: int
) -> None:
    """One error: exactly one field differs, by one error of some kind; the input is untouched."""
    original = list(values)
    result = Corrupter(np.random.default_rng(seed)).corrupt_record(values, n_errors=1)
    assert values == original
    assert len(result) == len(values)
    changed = [i for i, (a, b) in enumerate(zip(values, result, strict=True)) if a != b]
    assert len(changed) == 1
    (field,) = changed
    assert any(_is_one_error(kind, values[field], result[field]) for kind in ERROR_KINDS)


# --- records ------------------------------------------------------------------------------

# Printable text (str.isprintable), with the characters CSV quoting cares about made common.
PRINTABLE_CHARS = st.one_of(
    st.sampled_from(" ,\"'ab"),
    st.characters(
        codec="utf-8",
        exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"),
    ),
)
PRINTABLE = st.text(PRINTABLE_CHARS, max_size=12)
IDS = st.text(PRINTABLE_CHARS, min_size=1, max_size=8).filter(lambda s: s == s.strip() != "")
COLUMNS = ("id", "first", "middle", "last")
ATTRIBUTES = COLUMNS[1:]


@FAST
@given(value=st.text())
def test_normalise_is_idempotent(value: str) -> None:
    once = normalise(value)
    assert normalise(once) == once


@QUICK
@given(
    rows=st.lists(
        st.tuples(IDS, st.tuples(PRINTABLE, PRINTABLE, PRINTABLE)),
        min_size=1,
        max_size=8,
        unique_by=(lambda row: row[0], lambda row: tuple(map(normalise, row[1]))),
    ),
    order=st.permutations(COLUMNS),
)
def test_load_records_round_trips_a_csv_writer_table(
    rows: list[tuple[str, tuple[str, str, str]]], order: list[str]
) -> None:
    """Ids come back as written; attributes come back in their kind's (a name's) canonical
    form; column order is free."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "records.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(order)
            for record_id, values in rows:
                by_column = dict(zip(COLUMNS, (record_id, *values), strict=True))
                writer.writerow([by_column[column] for column in order])
        table = load_records(path)
    assert table.ids == [record_id for record_id, _ in rows]
    assert list(table.attributes) == list(ATTRIBUTES)
    for position, attribute in enumerate(ATTRIBUTES):
        expected = [normalise_value("name", v[position]) or "" for _, v in rows]
        assert table.attributes[attribute] == expected


# --- smashing -----------------------------------------------------------------------------

SHORT = st.text(max_size=8)


@FAST
@given(
    values=st.lists(SHORT, max_size=6),
    reference=st.lists(SHORT, max_size=6),
    clamp=st.one_of(st.just(254), st.integers(min_value=1, max_value=254)),
)
def test_smash_values_is_levenshtein_clamped(
    values: list[str], reference: list[str], clamp: int
) -> None:
    """An empty value is missing: MISSING_CODE throughout, whatever the reference."""
    smashed = smash_values_checked(values, reference, clamp)
    expected = [
        [MISSING_CODE if not v else min(Levenshtein.distance(v, r), clamp) for r in reference]
        for v in values
    ]
    assert smashed.tolist() == expected


def smash_values_checked(values: list[str], reference: list[str], clamp: int) -> np.ndarray:
    """smash_values, with its dtype and shape checked on the way."""
    smashed = smash_values(values, reference, clamp)
    assert smashed.dtype == np.uint8
    assert smashed.shape == (len(values), len(reference))
    return smashed


@FAST
@given(a=SHORT, b=SHORT, clamp=st.integers(min_value=1, max_value=254))
def test_smash_values_is_symmetric(a: str, b: str, clamp: int) -> None:
    assume(a and b)  # a missing value has no distance to be symmetric about
    assert np.array_equal(
        smash_values_checked([a], [b], clamp), smash_values_checked([b], [a], clamp).T
    )


# --- features -----------------------------------------------------------------------------

DIMS = st.tuples(
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=1, max_value=8),
)
MODERATE = st.floats(-1e3, 1e3, width=32, allow_subnormal=False)


@st.composite
def tensor_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned tensors: smashed-like uint8 ones, or signed floats to reach distance 2."""
    shape = draw(DIMS)
    if draw(st.booleans()):
        return draw(arrays(np.uint8, shape)), draw(arrays(np.uint8, shape))
    return draw(arrays(np.float32, shape, elements=MODERATE)), draw(
        arrays(np.float32, shape, elements=MODERATE)
    )


@FAST
@given(tensors=tensor_pairs())
def test_pair_features_are_cosine_distances_in_0_2(tensors: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = tensors
    features = pair_features(unit_vectors(a), unit_vectors(b))
    assert features.dtype == np.float32
    m = a.shape[1]
    assert features.shape == (a.shape[0], 3 * m)
    assert np.all((features[:, :m] >= 0) & (features[:, :m] <= 2)), features
    assert set(np.unique(features[:, m:]).tolist()) <= {0.0, 1.0}


@FAST
@given(
    base=DIMS.flatmap(lambda shape: arrays(np.uint8, shape)),
    factor=st.floats(min_value=1e-3, max_value=1e3),
)
def test_pair_features_are_zero_for_a_vector_and_a_positive_multiple(
    base: np.ndarray, factor: float
) -> None:
    """Up to float32 rounding (atol 1e-6): cosine distance ignores a positive scale."""
    base = base.copy()
    base[..., 0][~base.any(axis=-1)] = 1  # the zero vector is at distance 1 from everything
    base[..., 0][base[..., 0] == MISSING_CODE] = 1  # and so is a missing value
    scaled = base.astype(np.float64) * factor
    features = pair_features(unit_vectors(base), unit_vectors(scaled))
    np.testing.assert_allclose(features[:, : base.shape[1]], 0.0, atol=1e-6)


# --- matching -----------------------------------------------------------------------------

WEIGHT = st.floats(-10, 10, allow_subnormal=False)


@st.composite
def linear_problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, Model, int]:
    """Small unit tensors, a linear model with drawn weights and bias, and a block size."""
    m = draw(st.integers(min_value=1, max_value=3))
    r = draw(st.integers(min_value=1, max_value=5))
    n_a = draw(st.integers(min_value=1, max_value=7))
    n_b = draw(st.integers(min_value=1, max_value=7))
    # No fill value: every element is drawn, so duplicate rows (exact ties) are not the norm.
    a = draw(arrays(np.uint8, (n_a, m, r), fill=st.nothing()))
    b = draw(arrays(np.uint8, (n_b, m, r), fill=st.nothing()))
    weights = draw(arrays(np.float64, (m,), elements=WEIGHT))
    model = Model("linear", {"weights": weights, "bias": np.array(draw(WEIGHT))})
    block_bytes = draw(st.integers(min_value=1, max_value=1 << 12))
    return unit_vectors(a), unit_vectors(b), model, block_bytes


def _greedy(scores: np.ndarray) -> list[tuple[int, int]]:
    """The oracle on every positive pair."""
    return brute_greedy(scores, [(i, j) for i, j in np.argwhere(scores > 0).tolist()])


def _well_separated(scores: np.ndarray, eps: float) -> bool:
    """No score within eps of 0 and no two positive scores within eps of each other."""
    positive = np.sort(scores[scores > 0])
    return bool(np.all(np.abs(scores) > eps) and np.all(np.diff(positive) > eps))


@settings(max_examples=120, deadline=None)
@given(problem=linear_problems())
def test_match_is_greedy_one_to_one_on_the_exact_scores(
    problem: tuple[np.ndarray, np.ndarray, Model, int],
) -> None:
    """match() uses each row once, and equals greedy on exact_scores wherever float32 rounding
    cannot decide (no score or score gap within eps); elsewhere it is greedy up to eps."""
    unit_a, unit_b, model, block_bytes = problem
    matched = match(unit_a, unit_b, model, top_k=len(unit_b), block_bytes=block_bytes)
    pairs = pair_list(matched)
    assert len({i for i, _ in pairs}) == len(pairs)
    assert len({j for _, j in pairs}) == len(pairs)
    scores = exact_scores(unit_a, unit_b, model)
    weights, bias = model.arrays["weights"], float(model.arrays["bias"])
    eps = 2e-5 * (1.0 + float(np.abs(weights).sum()) + abs(bias))
    np.testing.assert_allclose(matched.scores, scores[matched.rows_a, matched.rows_b], atol=eps)
    if _well_separated(scores, eps):
        event("well separated: exact comparison")
        assert pairs == _greedy(scores)
        return
    event("near ties: comparison up to eps")
    # Greedy up to eps: accepted pairs are (almost) positive, and every clearly positive pair
    # left out shares a row with a chosen pair scoring at least as high (up to eps).
    assert all(scores[p] > -eps for p in pairs)
    chosen = set(pairs)
    for i, j in np.argwhere(scores > eps).tolist():
        if (i, j) not in chosen:
            assert any(
                (a == i or b == j) and scores[a, b] >= scores[i, j] - eps for a, b in chosen
            ), (i, j)


@st.composite
def any_problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, Model, int, int]:
    """As linear_problems, but the model may also be an rbf one; top_k is drawn too."""
    unit_a, unit_b, linear, block_bytes = draw(linear_problems())
    m = unit_a.shape[1]
    if draw(st.booleans()):
        support = draw(st.integers(min_value=1, max_value=6))
        model = Model(
            "rbf",
            {
                "support_vectors": draw(arrays(np.float64, (support, m), elements=st.floats(0, 2))),
                "dual_coef": draw(arrays(np.float64, (support,), elements=WEIGHT)),
                "gamma": np.array(draw(st.floats(0.01, 10))),
                "bias": np.array(draw(WEIGHT)),
            },
        )
    else:
        model = linear
    top_k = draw(st.integers(min_value=1, max_value=8))
    return unit_a, unit_b, model, block_bytes, top_k


@settings(max_examples=80, deadline=None)
@given(problem=any_problems())
def test_candidate_pairs_never_returns_a_non_positive_score(
    problem: tuple[np.ndarray, np.ndarray, Model, int, int],
) -> None:
    unit_a, unit_b, model, block_bytes, top_k = problem
    candidates = candidate_pairs(unit_a, unit_b, model, top_k=top_k, block_bytes=block_bytes)
    assert np.all(candidates.scores > 0), candidates.scores
    counts = np.bincount(candidates.rows_a, minlength=len(unit_a))
    assert np.all(counts <= top_k)


# --- metrics ------------------------------------------------------------------------------

PAIRS = st.sets(st.tuples(st.sampled_from("abcde"), st.sampled_from("vwxyz")), max_size=12)


@FAST
@given(
    predicted=st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from("vwxyz"))), truth=PAIRS
)
def test_quality_is_bounded_and_f1_is_the_harmonic_mean(
    predicted: list[tuple[str, str]], truth: set[tuple[str, str]]
) -> None:
    quality = linkage_quality(predicted, truth)
    for value in (quality.precision, quality.recall, quality.f1):
        assert 0.0 <= value <= 1.0
    p, r = quality.precision, quality.recall
    assert quality.f1 == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


@FAST
@given(truth=PAIRS.filter(bool))
def test_predicting_exactly_the_truth_is_perfect(truth: set[tuple[str, str]]) -> None:
    quality = linkage_quality(sorted(truth), truth)
    assert (quality.precision, quality.recall, quality.f1) == (1.0, 1.0, 1.0)


@FAST
@given(predicted=PAIRS, truth=PAIRS, extra=st.tuples(st.sampled_from("abcdef"), st.text()))
def test_adding_a_false_pair_never_increases_precision(
    predicted: set[tuple[str, str]], truth: set[tuple[str, str]], extra: tuple[str, str]
) -> None:
    assume(extra not in truth)
    before = linkage_quality(predicted, truth).precision
    after = linkage_quality([*predicted, extra], truth).precision
    assert after <= before


# --- phases -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(completed=st.sampled_from(list(Phase)), requested=st.sampled_from(list(Phase)))
def test_check_advance_runs_next_skips_done_and_refuses_the_rest(
    completed: Phase, requested: Phase
) -> None:
    """True iff requested is the next phase; False iff 1 <= requested <= completed; else raises."""
    if requested == completed + 1:
        assert check_advance(completed, requested) is True
    elif 1 <= requested <= completed:
        assert check_advance(completed, requested) is False
    else:
        with pytest.raises(PhaseOrderError):
            check_advance(completed, requested)


# --- agreement digest ---------------------------------------------------------------------

PARAM_FIELDS = dataclasses.fields(MethodParams)
# C as the configuration admits it (config.number: finite and > 0). Outside that domain -0.0
# and 0 are equal MethodParams with different digests, which no party can configure.
POSITIVE = st.floats(min_value=0.0, exclude_min=True, allow_infinity=False)


def _field_values(field_type: str) -> st.SearchStrategy[object]:
    return {"str": st.text(max_size=10), "int": st.integers(), "float": POSITIVE}[field_type]


@st.composite
def references(draw: st.DrawFn) -> ReferenceSet:
    names = draw(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3, unique=True))
    rows = draw(st.integers(min_value=1, max_value=5))
    value_lists = st.lists(st.text(max_size=6), min_size=rows, max_size=rows)
    return ReferenceSet("reference.csv", {name: draw(value_lists) for name in names})


@st.composite
def agreements(draw: st.DrawFn) -> tuple[ReferenceSet, list[tuple[str, str]], MethodParams]:
    reference = draw(references())
    mapping = draw(
        st.lists(
            st.tuples(st.text(min_size=1, max_size=5), st.sampled_from(list(reference.columns))),
            min_size=1,
            max_size=4,
        )
    )
    params = MethodParams(
        **{field.name: draw(_field_values(str(field.type))) for field in PARAM_FIELDS}
    )
    return reference, mapping, params


def _other(value: object, old: object) -> object:
    """``value``, or if it equals ``old``, the nearest value of the same type that does not."""
    if value != old:
        return value
    if isinstance(old, str):
        return old + "X"
    if isinstance(old, float):
        return math.nextafter(old, math.inf)
    assert isinstance(old, int)
    return old + 1


def _copy(reference: ReferenceSet, path: str = "elsewhere.csv") -> ReferenceSet:
    return ReferenceSet(path, {name: list(values) for name, values in reference.columns.items()})


@FAST
@given(agreement=agreements())
def test_equal_inputs_give_equal_digests(
    agreement: tuple[ReferenceSet, list[tuple[str, str]], MethodParams],
) -> None:
    reference, mapping, params = agreement
    same_params = dataclasses.replace(params)
    if params.c.is_integer() and abs(params.c) < 2**53:
        same_params = dataclasses.replace(params, c=int(params.c))  # 100 and 100.0 agree
    assert agreement_digest(reference, mapping, params) == agreement_digest(
        _copy(reference), tuple(tuple(entry) for entry in mapping), same_params
    )


@FAST
@given(agreement=agreements(), data=st.data())
def test_changing_one_reference_value_changes_the_digest(
    agreement: tuple[ReferenceSet, list[tuple[str, str]], MethodParams], data: st.DataObject
) -> None:
    reference, mapping, params = agreement
    changed = _copy(reference, reference.path)
    column = data.draw(st.sampled_from(sorted(changed.columns)))
    row = data.draw(st.integers(min_value=0, max_value=len(changed) - 1))
    old = changed.columns[column][row]
    changed.columns[column][row] = data.draw(st.text(max_size=6).map(lambda v: _other(v, old)))
    assert agreement_digest(changed, mapping, params) != agreement_digest(
        reference, mapping, params
    )


@FAST
@given(agreement=agreements(), data=st.data())
def test_swapping_two_different_rows_changes_the_digest(
    agreement: tuple[ReferenceSet, list[tuple[str, str]], MethodParams], data: st.DataObject
) -> None:
    reference, mapping, params = agreement
    columns = reference.columns
    rows = list(zip(*columns.values(), strict=True))
    different = [
        (i, j) for i in range(len(rows)) for j in range(i + 1, len(rows)) if rows[i] != rows[j]
    ]
    assume(different)
    i, j = data.draw(st.sampled_from(different))
    swapped = _copy(reference, reference.path)
    for values in swapped.columns.values():
        values[i], values[j] = values[j], values[i]
    assert agreement_digest(swapped, mapping, params) != agreement_digest(
        reference, mapping, params
    )


@FAST
@given(agreement=agreements(), field=st.sampled_from(PARAM_FIELDS), data=st.data())
def test_changing_any_method_param_changes_the_digest(
    agreement: tuple[ReferenceSet, list[tuple[str, str]], MethodParams],
    field: dataclasses.Field[object],
    data: st.DataObject,
) -> None:
    reference, mapping, params = agreement
    old = getattr(params, field.name)
    new = data.draw(_field_values(str(field.type)).map(lambda value: _other(value, old)))
    changed = dataclasses.replace(params, **{field.name: new})
    assert agreement_digest(reference, mapping, changed) != agreement_digest(
        reference, mapping, params
    )
