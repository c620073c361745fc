"""benchmarks/plain_names_ceiling.py: the greedy one-to-one walk and its best threshold."""

import numpy as np
import pytest

from tests.scripts import benchmark_script


def test_greedy_links_and_the_threshold_that_maximises_f1() -> None:
    ids_a, ids_b = ["a0", "a1", "a2"], ["b0", "b1", "b2"]
    truth = {("a0", "b0"), ("a1", "b1"), ("a2", "b2")}
    scores = np.array(
        [
            [1.9, 1.95, 0.0],  # a0's best is b1, which a1 needs: greedy takes it anyway
            [0.0, 1.8, 0.0],
            [0.0, 0.0, 1.5],  # a true link below the false one
        ],
        dtype=np.float32,
    )
    threshold, precision, recall, f1 = benchmark_script("plain_names_ceiling").best_threshold_f1(
        scores, ids_a, ids_b, truth, floor=1.0
    )
    # Greedy: (a0, b1) 1.95 wrong, then a1 and b0 are left with nothing above the floor
    # except a2-b2 at 1.5: links 1.95 (wrong) and 1.5 (right). Keeping both: P 1/2, R 1/3.
    assert threshold == pytest.approx(1.5)
    assert (precision, recall) == pytest.approx((0.5, 1 / 3))
    assert f1 == pytest.approx(0.4)


def test_equal_scores_are_kept_or_dropped_together() -> None:
    ids = ["x0", "x1"]
    truth = {("x0", "x0")}
    scores = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    _, precision, recall, _ = benchmark_script("plain_names_ceiling").best_threshold_f1(
        scores, ids, ids, truth, floor=0.5
    )
    assert (precision, recall) == (0.5, 1.0)


def test_the_optimal_assignment_finds_what_greedy_gives_away() -> None:
    ids_a, ids_b = ["a0", "a1", "a2"], ["b0", "b1", "b2"]
    truth = {("a0", "b0"), ("a1", "b1"), ("a2", "b2")}
    scores = np.array([[1.9, 1.95, 0.0], [0.0, 1.8, 0.0], [0.0, 0.0, 1.5]], dtype=np.float32)
    threshold, precision, recall, f1 = benchmark_script(
        "plain_names_ceiling"
    ).best_threshold_f1_optimal(scores, ids_a, ids_b, truth, floor=1.0)
    # a0-b0 plus a1-b1 (3.7) outweighs a0-b1 alone (1.95): every link is right.
    assert (precision, recall, f1) == pytest.approx((1.0, 1.0, 1.0))
    assert threshold <= 1.5
