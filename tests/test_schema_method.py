"""lab.in_process reads a schema's [method] as a daemon reads a party's file (the
thresholds written as a list of numbers reach the method as its comma-separated text), and
buckets a scoring form's scaled scores in the clear as MATCH compares them."""

from __future__ import annotations

import numpy as np

from lab.in_process import ScoringForm, schema_method
from pprl.protocol.sealed import session


def test_listed_thresholds_become_the_methods_text_and_the_rest_stays() -> None:
    read = schema_method({"sealed_thresholds": [0, 0.8, 1.6], "error_model": "registers"})
    assert session.thresholds(read["sealed_thresholds"]) == (0.0, 0.8, 1.6)
    assert read["error_model"] == "registers"
    written = schema_method({"sealed_thresholds": "0,1.6"})
    assert written["sealed_thresholds"] == "0,1.6"
    assert schema_method({}) == {}


def test_a_forms_buckets_count_the_thresholds_its_scaled_scores_pass() -> None:
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    form = ScoringForm(x, np.array([-1.0, 0.5]), evaluator=None, live=np.ones(2, dtype=bool))
    y = np.array([[3.0, 1.0], [0.5, 4.0]])
    # Scores: own 0 with peer 0: -1 + 3 = 2; own 1 with peer 1: 0.5 + 8 = 8.5; own 0 with
    # peer 1: -1 + 0.5 = -0.5; own 1 with peer 0: 0.5 + 2 = 2.5.
    own, peer = np.array([0, 1, 0, 1]), np.array([0, 1, 1, 0])
    assert form.buckets(y, own, peer, (0.0, 2.0, 8.0)).tolist() == [1, 3, 0, 2]
