"""benchmarks/soft_vfl.py: soft linkage's neighbours and the features a model trains on."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.scripts import benchmark_script


def test_soft_features_hold_each_rank_and_the_score_weighted_mean() -> None:
    script = benchmark_script("soft_vfl")
    own = np.array([[7.0], [8.0]])
    peer_features = np.array([[0.0, 10.0], [2.0, 20.0], [4.0, 40.0]])
    peer = np.array([[1, 2], [0, 1]])
    scores = np.array([[np.log(3.0), 0.0], [0.0, 0.0]])
    top_1 = script.features(own, peer_features, peer, scores, 1)
    np.testing.assert_allclose(top_1, [[7, 2, 20, np.log(3)], [8, 0, 10, 0]])
    soft = script.features(own, peer_features, peer, scores, 2)
    assert soft.shape == (2, 1 + 2 * 3 + 2)
    # Weights 3/4 and 1/4 for scores log 3 and 0; equal for equal scores.
    np.testing.assert_allclose(soft[0, -2:], [0.75 * 2 + 0.25 * 4, 0.75 * 20 + 0.25 * 40])
    np.testing.assert_allclose(soft[1, -2:], [1.0, 15.0])


def test_a_small_run_links_trains_and_tabulates(tmp_path: Path, capsys) -> None:
    script = benchmark_script("soft_vfl")
    out = tmp_path / "soft.json"
    args = ["--size", "300", "--sigmas", "1", "--seeds", "1", "--top-k", "3"]
    assert script.main([*args, "--reference-rows", "200", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())
    assert 0.5 < row["partner_first"] <= row["partner_in_top_k"] <= 1.0
    # The label leans on Bob's features: his true record helps far more than none.
    assert row["r2"]["exact"] > row["r2"]["solo"] + 0.3
    assert "| 300 | 1 | 3 | 1 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        script.main(["--top-k", "1", "--out", str(out)])
