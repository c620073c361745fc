"""How likely checks miss a replacing evaluator (lab.check_power): the units it must
replace, largest first, and the chances, against sums worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from lab import check_power


def test_the_largest_entries_replaced_risk_the_checks_in_proportion_to_their_slots():
    rows = np.array([0, 0, 1, 1, 2, 3, 3, 4])
    counts = np.array([5, 0, 1, 4, 1, 1, 0, 3])  # six entries with slots, 15 slots
    made = np.array([-1, -1, 3, -1, -1, 2, -1, -1])  # two checks
    power = check_power.hidden(rows, counts, made, signs=9)
    assert (power.units, power.slots, power.checks, power.check_slots) == (6, 15, 2, 2)
    assert power.replaced == 2  # 5 + 4 slots
    # The checks are drawn from the entries whose row keeps another with slots: row 1's alone
    # (weights 1 and 4 of 5), so of the largest two only the 4 is at risk.
    passing = 1 - 1 / 12
    assert power.unnoticed_largest_first == pytest.approx((1 - 4 / 5 * passing) ** 2)
    assert power.unnoticed_any_slots == pytest.approx((1 - 9 / 15 * passing) ** 2)
    # More bits than slots: every slot replaced.
    every = check_power.hidden(rows, counts, made, signs=100)
    assert every.replaced == 6 and every.unnoticed_any_slots == pytest.approx((1 / 12) ** 2)


def test_a_graphs_rows_risk_the_checks_in_proportion_to_their_pairs():
    rows = np.repeat(np.arange(4000), np.where(np.arange(4000) < 100, 3, 1))
    pairs = np.stack([rows, np.arange(len(rows))], axis=1)  # 100 rows of 3 pairs, 3,900 of 1
    power = check_power.graph(pairs, np.array([0, 7, 500]), signs=400)
    assert (power.checks, power.check_slots, power.replaced) == (3, 7, 200)  # rows of 3 first
    assert power.unnoticed_largest_first == pytest.approx((1 - 400 / 4200 * 0.5) ** 3)
