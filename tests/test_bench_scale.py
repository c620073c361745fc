"""`pprl bench scale` on tiny sizes: real daemons, the oracle in full and on a sample."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from pprl.bench import scale
from pprl.bench.scale import growth_exponent, scale_table
from pprl.cli import main
from pprl.party.local import Privacy

pytestmark = pytest.mark.integration


@pytest.fixture
def trial_gate(monkeypatch: pytest.MonkeyPatch, trial_privacy: Privacy) -> None:
    """The bench's daemons run the trial gate (conftest), as the other daemon tests that do not
    test the gate: without noise it only reports, and on the census dictionary's 200 sampled
    records it took two thirds of each run's time."""
    trial = partial(
        Privacy, audit_records=trial_privacy.audit_records, dictionary=trial_privacy.dictionary
    )
    monkeypatch.setattr(scale, "Privacy", trial)


@pytest.mark.usefixtures("trial_gate")
def test_scale_bench_compares_candidates_with_the_oracle(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "bench", "scale", "--sizes", "300,600", "--reference-rows", "120",
            "--oracle-full-max", "300", "--oracle-sample", "150", "--out", str(out),
            "--workdir", str(tmp_path / "work"), "--plots",
        ]
    )  # fmt: skip
    assert code == 0
    rows = json.loads((out / "scale.json").read_text())["rows"]
    assert [r["size"] for r in rows] == [300, 600]
    full, sampled = rows
    assert not full["oracle_estimated"] and full["oracle_rows"] == 300
    assert sampled["oracle_estimated"] and sampled["oracle_rows"] == 150
    for row in rows:
        # Candidates hold every pair the all-pairs scorer keeps. A true match the classifier
        # rejects anyway may fall outside the bound (the cut is exact per missing pattern), so
        # completeness is near 1, not always 1; what is kept is the same either way, except
        # a pair whose decision ties 0 or the top_k cut to float32 rounding (the dense product
        # and the per-entry sum round differently).
        assert row["differing_beyond_rounding"] == 0, row["differing_pairs"]
        assert row["pair_completeness"] >= 0.99
        # At these sizes one product over all pairs may cost less than the join (PAIR_COST).
        assert 0 < row["candidates"] <= row["size"] ** 2
        assert row["reduction_ratio"] == pytest.approx(1 - row["candidates"] / row["size"] ** 2)
        assert row["f1"] >= 0.95 and row["end_to_end_f1"]["linkage"] >= 0.95
        assert set(row["peak_rss_gib"]) == {"alice", "bob"}
        assert list(row["phases"])[-1] == "link"
    assert full["f1"] == full["oracle_f1"]
    assert {r["classifier"] for r in rows} == {"linear"}
    printed = capsys.readouterr().out
    assert "| 300 |" in printed and "time grows as n^" in printed
    assert "over all sizes" in printed
    assert "all-pairs oracle" not in printed.split("|")[-1]  # one measured size: no fit
    assert (out / "scale_time.png").stat().st_size > 10_000


@pytest.mark.usefixtures("trial_gate")
def test_scale_bench_runs_the_requested_classifier(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "bench", "scale", "--sizes", "300", "--reference-rows", "120", "--classifier",
            "rbf", "--runs", "2", "--out", str(out), "--workdir", str(tmp_path / "work"),
        ]
    )  # fmt: skip
    assert code == 0
    (row,) = json.loads((out / "scale.json").read_text())["rows"]
    assert row["classifier"] == "rbf"
    # The second run on the same daemons is reported beside the first.
    assert len(row["warm_cache"]["runs"]) == 1
    assert row["warm_cache"]["seconds"] == row["warm_cache"]["runs"][0]
    assert list(row["warm_cache"]["phases"])[-1] == "link"
    assert row["f1"] == row["oracle_f1"]
    # The same kept pairs, except a swap at the top_k cut between decisions that tie to
    # float32 rounding (an rbf trained on 300 records scores many pairs alike).
    assert row["differing_beyond_rounding"] == 0, row["differing_pairs"]


def test_growth_exponent_of_known_powers() -> None:
    sizes = [1000, 2000, 4000, 8000]
    assert growth_exponent(sizes, [3e-6 * n**2 for n in sizes]) == pytest.approx(2.0)
    assert growth_exponent(sizes, [0.5 * n**1.3 for n in sizes]) == pytest.approx(1.3)


def test_table_marks_estimated_oracle_times() -> None:
    row = {
        "size": 1000, "end_to_end_seconds": 9.0, "phases": {"match": 2.0},
        "peak_rss_gib": {"alice": 0.3, "bob": 0.31}, "end_to_end_f1": {"linkage": 0.99},
        "matching_seconds": 1.0, "oracle_seconds": 30.0, "oracle_estimated": True,
        "speedup": 30.0, "candidates": 5000, "reduction_ratio": 0.995,
        "pair_completeness": 1.0, "f1": 0.99,
    }  # fmt: skip
    table = scale_table([row])
    assert "30.0 (est.)" in table and "30.0x" in table and table.endswith("| 0.9900 | - | - |")
    row["warm_cache"] = {"runs": [7.5, 7.0], "seconds": 7.0, "phases": {"match": 1.5}}
    assert scale_table([row]).endswith("| 0.9900 | - | 7.0 |")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--oracle-sample", "0"], "must be positive"),
        (["--reference-rows", "1"], "must be positive"),
        (["--runs", "0"], "--runs must be at least 1"),
    ],
)
def test_bad_scale_options_are_refused(
    tmp_path: Path, args: list[str], message: str, capsys
) -> None:
    assert main(["bench", "scale", "--out", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "scale.json").exists()


def test_sizes_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "scale", "--sizes", "0", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
