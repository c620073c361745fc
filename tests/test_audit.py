"""The dictionary attack on a hand-made case whose answers were worked out on paper."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.audit import audit_entry
from pprl.protocol.smashing import smash_values

REFERENCE = ["ANN", "BOB"]
# Edit distances to (ANN, BOB): ANN (0, 3), ANNA (1, 4), BOB (3, 0), BOBBY (5, 2),
# AN (1, 3), ANX (1, 3): AN and ANX share a vector.
DICTIONARY = ["ANN", "ANNA", "BOB", "BOBBY", "AN", "ANX"]
# ZED is (3, 3): no dictionary name has it; its nearest vector is AN/ANX's (1, 3), a tie.
TRUTH = ["ANNA", "BOB", "ZED", "AN"]


def _vectors(names: list[str]) -> np.ndarray:
    return smash_values(names, REFERENCE)


def test_hand_made_vectors_are_what_the_comments_say() -> None:
    assert _vectors(DICTIONARY).tolist() == [[0, 3], [1, 4], [3, 0], [5, 2], [1, 3], [1, 3]]
    assert _vectors(["ZED"]).tolist() == [[3, 3]]


def test_exact_lookup_and_nearest_neighbour_on_raw_vectors() -> None:
    result = audit_entry(_vectors(TRUTH), TRUTH, DICTIONARY, _vectors(DICTIONARY))
    assert result.exact.tolist() == [True, True, False, False]  # AN shares its vector
    assert result.nearest.tolist() == [True, True, False, False]  # ZED and AN: ties
    assert result.candidates.tolist() == [1, 1, 0, 2]
    assert result.exact_rate == 0.5
    assert result.nearest_rate == 0.5
    assert result.median_candidates == 1.0


def test_noise_defeats_exact_lookup_but_not_always_the_nearest_neighbour() -> None:
    noisy = _vectors(TRUTH).astype(np.float64) + np.array([[0.1, -0.1]])
    result = audit_entry(noisy, TRUTH, DICTIONARY, _vectors(DICTIONARY))
    assert result.exact.tolist() == [False] * 4
    assert result.candidates.tolist() == [0] * 4
    # ANNA (1.1, 3.9) is nearest to (1, 4); BOB (3.1, -0.1) to (3, 0); ZED (3.1, 2.9) is
    # nearest to (1, 3), which is not ZED; AN (1.1, 2.9) still ties between AN and ANX.
    assert result.nearest.tolist() == [True, True, False, False]


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="3 vectors for 4 true values"):
        audit_entry(_vectors(TRUTH[:3]), TRUTH, DICTIONARY, _vectors(DICTIONARY))
    with pytest.raises(ValueError, match="5 names for 6 vectors"):
        audit_entry(_vectors(TRUTH), TRUTH, DICTIONARY[:5], _vectors(DICTIONARY))
