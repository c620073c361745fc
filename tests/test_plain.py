"""The non-private baseline: direct edit distances per field, same training, same selection."""

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from pprl.bench import plain
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.linkage.matching import Selection, one_to_one
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model.classifier import Model, train

FIELDS = ["first", "middle", "last"]


def _columns(rng: np.random.Generator, n: int) -> dict[str, list[str]]:
    letters = np.array(list("ABCDEFGHIJKLMNOPRSTUVW"))
    return {
        name: ["".join(rng.choice(letters, size=int(rng.integers(3, 8)))) for _ in range(n)]
        for name in FIELDS
    }


def _corrupt(columns: dict[str, list[str]], seed: int) -> dict[str, list[str]]:
    corrupter = Corrupter(np.random.default_rng(seed))
    n = len(columns["first"])
    rows = [corrupter.corrupt_record([columns[f][i] for f in FIELDS]) for i in range(n)]
    return {f: [row[j] for row in rows] for j, f in enumerate(FIELDS)}


def test_pair_distances_are_levenshtein_per_field() -> None:
    a = {"first": ["ANN", "BOB", "ANN"], "last": ["LEE", "", "LEE"]}
    b = {"first": ["ANNE", "ROB"], "last": ["LI", "LEE"]}
    tables = plain.field_tables(a, b, ["first", "last"])
    rows_a, rows_b = np.array([0, 1, 2, 1]), np.array([0, 1, 1, 0])
    got = plain.pair_distances(tables, rows_a, rows_b)
    for t, (i, j) in enumerate(zip(rows_a, rows_b, strict=True)):
        expected = [Levenshtein.distance(a[f][i], b[f][j]) for f in ("first", "last")]
        assert got[t].tolist() == expected
    assert tables[0].table.shape == (2, 2)  # distinct values only: ANN twice is one row


def test_training_positives_are_one_edit_and_hard_negatives_the_closest() -> None:
    rng = np.random.default_rng(1)
    own = _columns(rng, 60)
    corrupted = _corrupt(own, 2)
    x, y = plain.training_features(own, corrupted, FIELDS, rng, 3, hard_negatives=1)
    positives = x[y == 1]
    assert len(positives) == 60
    # One edit: one field at distance 1, or 2 when an OCR/phonetic rule rewrote two letters.
    assert set(positives.sum(axis=1).tolist()) <= {1.0, 2.0}
    assert (x[y == 0].sum(axis=1) > 0).all()
    summed = sum(
        np.array([[Levenshtein.distance(p, q) for q in corrupted[f]] for p in own[f]])
        for f in FIELDS
    )
    np.fill_diagonal(summed, 10**6)
    hard = x[y == 0][::3]  # the first negative of each record is its hard one
    np.testing.assert_array_equal(hard.sum(axis=1), summed.min(axis=1))


@pytest.mark.parametrize("block_bytes", [1, 2_000, 64 << 20])
def test_scan_equals_scoring_each_pair(block_bytes: int) -> None:
    rng = np.random.default_rng(3)
    a, b = _columns(rng, 25), _columns(rng, 18)
    model = Model("linear", {"weights": np.array([-1.0, -0.5, -1.0]), "bias": np.array(9.0)})
    (found,) = plain.score_pairs(a, b, FIELDS, [Selection(model, None)], block_bytes=block_bytes)
    expected = set()
    for i in range(25):
        for j in range(18):
            d = [Levenshtein.distance(a[f][i], b[f][j]) for f in FIELDS]
            if 9.0 - d[0] - 0.5 * d[1] - d[2] > 0:
                expected.add((i, j))
    assert set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True)) == expected
    assert 0 < len(expected) < 25 * 18


def test_plain_baseline_links_a_corrupted_copy() -> None:
    rng = np.random.default_rng(4)
    alice = _columns(rng, 400)
    bob = _corrupt(alice, 5)
    own, corrupted = alice, _corrupt(alice, 6)  # training: Alice's own records, fresh errors
    x, y = plain.training_features(own, corrupted, FIELDS, rng, 1)
    model = train(x, y, "linear")
    (found,) = plain.score_pairs(alice, bob, FIELDS, [Selection(model, 10)])
    kept = one_to_one(found)
    predicted = set(zip(kept.rows_a.tolist(), kept.rows_b.tolist(), strict=True))
    quality = linkage_quality(predicted, {(i, i) for i in range(400)})
    assert quality.precision >= 0.99 and quality.recall >= 0.99
