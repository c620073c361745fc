"""The non-private linker over its own draws (benchmarks/linker_draws.py): which seeds a run
names and the median and range it reports."""

from __future__ import annotations

import pytest

from lab.in_process import Outcome
from pprl.protocol.metrics import Quality
from tests.scripts import benchmark_script

draws = benchmark_script("linker_draws")


def test_seeds_are_named_by_ranges_and_lists() -> None:
    assert draws.seeds_of("1-9") == list(range(1, 10))
    assert draws.seeds_of("1-3,8") == [1, 2, 3, 8]
    assert draws.seeds_of("5") == [5]
    with pytest.raises(ValueError):
        draws.seeds_of("one")


def test_the_summary_is_the_median_and_range_of_the_draws_f1() -> None:
    outcomes = [
        Outcome(Quality(0.0, 0.0, f1, 0, 0, 0), seconds=1.0) for f1 in (0.852, 0.858, 0.855, 0.851)
    ]
    summary = draws.summary(outcomes)
    assert summary == pytest.approx({"f1_median": 0.8535, "f1_min": 0.851, "f1_max": 0.858})
