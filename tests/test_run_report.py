"""The run report: the trade-off against the truth counted from the agreed pairs, the page
saying what each part rests on, figures when matplotlib is there, and the expected curve
taken from the simulation nearest the fitted error rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from pprl.party.reporting.facts import OwnPair, RunFacts
from pprl.party.reporting.render import (
    QUALITY_PNG,
    REPORT_MD,
    SCORES_PNG,
    truth_curve,
    write_report,
)
from pprl.protocol.expectation import Simulation


def _simulation(rate: float, precision: float) -> Simulation:
    curve = ((0.0, precision, 0.9), (1.0, precision + 0.05, 0.8))
    return Simulation(rate, 100, 0.9, 0.05, 0.1, 2.0, 0.5, 0.4, curve)


def _facts(tmp_path: Path) -> RunFacts:
    pairs = (
        OwnPair("a1", "b1", 1.0, True),
        OwnPair("a2", "b2", 2.0, True),
        OwnPair("a3", "b3", 3.0, True),
        OwnPair("a4", "b4", 4.0, True),
        OwnPair("a5", "b9", 0.5, False),
    )
    return RunFacts(
        run_id="r" * 32,
        identity="alice",
        peer="bob",
        directory=tmp_path,
        records=10,
        threshold=0.0,
        pairs=pairs,
        review=1,
        fitted={"error_rate": 0.42},
        simulations=(_simulation(0.15, 0.7), _simulation(0.45, 0.6)),
        privacy={"audited_records": 200, "reidentified": 0.05, "exposed": 0.1,
                 "recovered": {"last": 0.2}, "noise_edits": 1.5},
    )  # fmt: skip


def test_the_truth_curve_counts_the_agreed_pairs_above_each_cut(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    truth = {("a3", "b3"), ("a4", "b4"), ("a7", "b7"), ("a5", "b9")}
    curve = truth_curve(facts, truth, points=4)
    assert [round(cut, 6) for cut, _, _ in curve] == [0.0, 1.0, 2.0, 3.0]
    # the pair alice alone accepted (a5, b9) is not in the agreed linkage, true or not
    assert curve[0][1:] == (0.5, 0.5)
    assert curve[1][1:] == (pytest.approx(2 / 3), 0.5)
    assert curve[3][1:] == (1.0, 0.25)


def test_the_expected_curve_is_the_simulation_nearest_the_fitted_rate(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    chosen = facts.curve_simulation()
    assert chosen is not None and chosen.error_rate == 0.45
    assert Simulation.from_dict(chosen.as_dict()) == chosen
    # a model stored before curves were kept: no curve, no expected trade-off
    old = {k: v for k, v in chosen.as_dict().items() if k != "curve"}
    assert Simulation.from_dict(old).curve == ()


def test_the_page_says_what_each_part_rests_on(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    facts = _facts(tmp_path)
    written = write_report(facts, tmp_path, truth={("a4", "b4")})
    assert {p.name for p in written} == {REPORT_MD, SCORES_PNG, QUALITY_PNG}
    for png in (SCORES_PNG, QUALITY_PNG):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / REPORT_MD).read_text()
    assert "4 pairs agreed by both (1 marked for review)" in page
    assert "bob's did not accept 1 of them" in page
    assert f"pprl coordinate --run-id {facts.run_id} --threshold SCORE" in page
    assert "about 45% of their compared values" in page
    assert "| 0.00 | 0.600 | 0.900 |" in page  # the chosen simulation's curve
    assert "Against the truth (1 true pairs)" in page
    assert "| 0.00 (now) | 0.250 | 1.000 |" in page
    assert "re-identified 5.0% of them" in page and "last 20.0%" in page
