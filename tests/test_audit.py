"""The dictionary attack on a hand-made case whose answers were worked out on paper."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.data import synthetic
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.privacy.audit import Dictionary, attack, audit_entry, audit_tensor
from pprl.protocol.vectors.release import Release
from pprl.protocol.vectors.smashing import smash, smash_values

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


def test_exact_lookup_rounds_away_noise_below_half_an_edit() -> None:
    noisy = _vectors(TRUTH).astype(np.float64) + np.array([[0.1, -0.1]])
    result = audit_entry(noisy, TRUTH, DICTIONARY, _vectors(DICTIONARY))
    assert result.exact.tolist() == [True, True, False, False]
    assert result.candidates.tolist() == [1, 1, 0, 2]


def test_noise_beyond_half_an_edit_defeats_exact_lookup_but_not_always_the_nearest() -> None:
    noisy = _vectors(TRUTH).astype(np.float64) + np.array([[0.6, -0.4]])
    result = audit_entry(noisy, TRUTH, DICTIONARY, _vectors(DICTIONARY))
    # Rounded: ANNA (1.6, 3.6) -> (2, 4), BOB (3.6, -0.4) -> (4, 0), ZED -> (4, 3),
    # AN (1.6, 2.6) -> (2, 3): no dictionary name has any of these vectors.
    assert result.exact.tolist() == [False] * 4
    assert result.candidates.tolist() == [0] * 4
    # Squared distances: ANNA to (1, 4) 0.52, to (1, 3) 0.72: right. BOB to (3, 0) 0.52, to
    # (5, 2) 6.52: right. ZED (3.6, 2.6): (5, 2) at 2.32 beats (1, 3) at 6.92 and (3, 0) at
    # 7.12, so BOBBY: wrong. AN (1.6, 2.6) ties between AN and ANX.
    assert result.nearest.tolist() == [True, True, False, False]


def test_a_nearest_name_one_edit_from_the_truth_counts_with_a_tolerance_of_one() -> None:
    # ANNX is (1, 4), exactly ANNA's vector: exact lookup names ANNA, which is wrong.
    truth = ["ANNX", "ZED"]
    strict = audit_entry(_vectors(truth), truth, DICTIONARY, _vectors(DICTIONARY))
    assert strict.exact.tolist() == [False, False]
    assert strict.candidates.tolist() == [1, 0]
    assert strict.nearest.tolist() == [False, False]
    lenient = audit_entry(_vectors(truth), truth, DICTIONARY, _vectors(DICTIONARY), tolerance=1)
    assert lenient.exact.tolist() == [False, False]
    assert lenient.nearest.tolist() == [True, False]  # ZED still ties between AN and ANX


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="3 vectors for 4 true values"):
        audit_entry(_vectors(TRUTH[:3]), TRUTH, DICTIONARY, _vectors(DICTIONARY))
    with pytest.raises(ValueError, match="5 names for 6 vectors"):
        audit_entry(_vectors(TRUTH), TRUTH, DICTIONARY[:5], _vectors(DICTIONARY))


def test_audit_tensor_scores_attributes_and_records_on_a_hand_made_release() -> None:
    reference = {"first": REFERENCE, "last": REFERENCE}
    mapping = (("first", "first"), ("last", "last"))
    truth = {
        "first": ["ANNA", "AN", "ANNA", "ZED", "BOB"],
        "last": ["BOB", "BOB", "", "ANNX", "ANNX"],
    }
    tensor = smash(truth, reference, mapping)
    report = audit_tensor(tensor, truth, mapping, Dictionary(DICTIONARY, reference))
    first, last = report.attributes
    assert (first.audited, last.audited) == (5, 4)  # the empty surname is not attacked
    assert first.result.exact.tolist() == [True, False, True, False, True]
    assert last.result.exact.tolist() == [True, True, False, False]
    assert last.result.nearest.tolist() == [True, True, True, True]  # ANNX: ANNA, one edit
    assert first.in_dictionary == pytest.approx(4 / 5)
    assert last.in_dictionary == pytest.approx(2 / 4)
    # Records 1 and 3 fall to exact lookup alone; record 5 also to the nearest name.
    assert report.record_exact == pytest.approx(2 / 5)
    assert report.record_reidentified == pytest.approx(3 / 5)
    # Every record loses a name: the fourth (ZED ties) its surname ANNX, one edit from ANNA.
    assert report.record_exposed == 1.0
    assert report.rate("every-name") == report.record_reidentified
    assert report.rate("any-name") == report.record_exposed
    with pytest.raises(ValueError, match="unknown measure"):
        report.rate("some-names")


@pytest.mark.parametrize("noise", [0.0, 0.7, 3.0])
def test_the_pruned_attack_gives_what_brute_force_gives(noise: float) -> None:
    census = synthetic.census_names()
    rng = np.random.default_rng(8)
    reference = synthetic.default_reference(150)
    names = list(rng.choice(census.last.names[:3000], 600, replace=False))
    corrupter = Corrupter(rng)
    truth = names[:40] + [corrupter.corrupt_value(name) for name in names[40:80]]
    truth += list(census.last.names[5000:5020])  # not in the dictionary
    release = Release(noise)
    codes = smash_values(truth, reference["last"], release=release, rng=rng)
    both = np.concatenate([codes, codes], axis=1)
    released = release.decode(both)
    dictionary = Dictionary(names, reference)
    pruned = attack(released, truth, dictionary, ["last", "last"], tolerance=1)
    full = np.concatenate([dictionary.vectors("last")] * 2, axis=1)
    brute = audit_entry(released, truth, dictionary.names, full, tolerance=1)
    assert pruned.exact.tolist() == brute.exact.tolist()
    assert pruned.nearest.tolist() == brute.nearest.tolist()
    assert pruned.candidates.tolist() == brute.candidates.tolist()
    if noise == 0.0:
        assert brute.exact[:40].all()  # the case is not trivial: lookups do succeed
        assert brute.nearest[40:80].mean() > 0.5
