import pytest

from pprl.protocol.metrics import agreed, linkage_quality

TRUTH = {("a1", "b1"), ("a2", "b2"), ("a3", "b3"), ("a4", "b4")}


def test_counts() -> None:
    quality = linkage_quality([("a1", "b1"), ("a2", "b2"), ("a3", "b9")], TRUTH)
    assert (quality.true_positives, quality.false_positives, quality.false_negatives) == (2, 1, 2)
    assert quality.precision == pytest.approx(2 / 3)
    assert quality.recall == pytest.approx(0.5)
    assert quality.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_empty_prediction() -> None:
    quality = linkage_quality([], TRUTH)
    assert (quality.precision, quality.recall, quality.f1) == (0.0, 0.0, 0.0)
    assert quality.false_negatives == 4


def test_empty_truth_and_prediction() -> None:
    quality = linkage_quality([], [])
    assert (quality.precision, quality.recall, quality.f1) == (0.0, 0.0, 0.0)
    assert (quality.true_positives, quality.false_positives, quality.false_negatives) == (0, 0, 0)


def test_only_matches_predicted_still_counts_missed_pairs() -> None:
    # Scored on the predicted pairs alone every prediction is right (a single predicted class);
    # counted over all pairs, the two true pairs never predicted are false negatives.
    quality = linkage_quality([("a1", "b1"), ("a2", "b2")], TRUTH)
    assert quality.precision == 1.0
    assert quality.recall == 0.5
    assert quality.false_negatives == 2
    assert quality.f1 == pytest.approx(2 / 3)


def test_duplicates_count_once() -> None:
    quality = linkage_quality([("a1", "b1"), ("a1", "b1")], [("a1", "b1")])
    assert (quality.precision, quality.recall, quality.f1) == (1.0, 1.0, 1.0)


def test_agreed() -> None:
    assert agreed([("a", "b"), ("c", "d")], iter([("c", "d"), ("e", "f")])) == {("c", "d")}
    assert agreed([], [("a", "b")]) == set()


def _prototype_recall(partitions: list[tuple[set, set]]) -> float:
    """How the published tester counted: partitions whose predictions hold one class only
    were skipped, so their missed matches never reached the false negatives."""
    tp = fn = 0
    for predicted, truth in partitions:
        if not predicted:  # every pair of the partition predicted "non-match"
            continue
        tp += len(predicted & truth)
        fn += len(truth - predicted)
    return tp / (tp + fn)


def test_a_partition_with_one_predicted_class_still_counts_its_missed_matches() -> None:
    """Scan 12 A rows in blocks of 4 (the partitions); the classifier accepts nothing in the
    second block, which holds 4 true matches."""
    import numpy as np

    from pprl.protocol.linkage.matching import Selection, score_pairs
    from pprl.protocol.model.classifier import Model

    rng = np.random.default_rng(0)
    unit = rng.random((12, 1, 5)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=-1, keepdims=True)
    unit[4:8] = 0  # a zero vector has cosine distance 1 to everything: rejected below
    model = Model("linear", {"weights": np.array([-10.0]), "bias": np.array(5.0)})
    block_bytes = 4 * 12 * 4 * (1 + 2)  # 4 rows per block for M = 1
    (found,) = score_pairs(unit, unit, [Selection(model, 1)], block_bytes=block_bytes)
    predicted = {(f"a{i}", f"b{j}") for i, j in zip(found.rows_a, found.rows_b, strict=True)}
    truth = {(f"a{i}", f"b{i}") for i in range(12)}
    assert predicted == {(f"a{i}", f"b{i}") for i in (0, 1, 2, 3, 8, 9, 10, 11)}
    quality = linkage_quality(predicted, truth)
    assert (quality.false_negatives, quality.recall) == (4, pytest.approx(8 / 12))
    partitions = [
        (
            {p for p in predicted if int(p[0][1:]) // 4 == block},
            {(f"a{i}", f"b{i}") for i in range(4 * block, 4 * block + 4)},
        )
        for block in range(3)
    ]
    assert _prototype_recall(partitions) == 1.0  # the inflated figure the brief warns about
