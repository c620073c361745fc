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
