"""Released codes, the reference-set statistics and the features built on them."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.model.features import unit_vectors
from pprl.protocol.vectors import release as release_module
from pprl.protocol.vectors.release import (
    Release,
    kept_components,
    reference_statistics,
    standardise,
)
from pprl.protocol.vectors.smashing import Entry, smash

# Distances within the column: ANN-BOB 3, ANN-ANNA 1, BOB-ANNA 4.
REFERENCE = {"first": ["ANN", "BOB", "ANNA"]}
MAPPING = (("first", "first"),)
# One entry whose distances carry noise of 3 edits.
NOISY = (Entry("first", "first", release=Release(3.0)),)


def test_without_noise_the_codes_are_the_raw_distances() -> None:
    release = Release()
    distances = np.array([[0, 3, 255]], dtype=np.uint8)
    assert release.step == 1.0 and release.offset == 0
    assert release.encode(distances, None).tolist() == [[0, 3, 255]]
    assert release.decode(distances).tolist() == [[0.0, 3.0, 255.0]]


def test_noisy_codes_sit_on_a_grid_of_a_quarter_noise_above_an_offset() -> None:
    assert (Release(0.5).step, Release(0.5).offset) == (0.25, 16)
    assert Release(8.0).step == 2.0
    with pytest.raises(ValueError, match="needs a random generator"):
        Release(2.0).encode(np.zeros((1, 1), np.uint8), None)
    with pytest.raises(ValueError, match=">= 0"):
        Release(-1.0)


def test_noise_has_the_requested_spread_once_decoded() -> None:
    release = Release(2.0)
    distances = np.full((200, 500), 7, dtype=np.uint8)
    decoded = release.decode(release.encode(distances, np.random.default_rng(1)))
    # Rounding to a 0.5 grid adds 0.5^2 / 12 to the variance 4.
    assert abs(float(decoded.mean()) - 7.0) < 0.02
    assert abs(float(decoded.std()) - np.sqrt(4 + 0.25 / 12)) < 0.02


def test_a_repeated_value_gets_one_noise_draw_and_others_their_own() -> None:
    records = {"first": ["JOHN", "MARY", "JOHN"]}
    tensor = smash(records, REFERENCE, NOISY, rng=np.random.default_rng(2))
    assert np.array_equal(tensor[0], tensor[2])
    again = smash(records, REFERENCE, NOISY, rng=np.random.default_rng(3))
    assert not np.array_equal(tensor[0], again[0])


def test_reference_statistics_leave_out_each_value_itself() -> None:
    stats = reference_statistics(REFERENCE, MAPPING)
    # ANN: (3 + 1) / 2; BOB: (3 + 4) / 2; ANNA: (1 + 4) / 2.
    assert stats.centre["first"].tolist() == [2.0, 3.5, 2.5]
    assert stats.spread["first"].tolist() == [1.0, 0.5, 1.5]
    # The six off-diagonal distances 3, 1, 3, 4, 1, 4: mean 8/3, variance 14/9.
    assert stats.sigma0 == pytest.approx(np.sqrt(14 / 9))


def test_centring_moves_codes_onto_the_reference_means() -> None:
    stats = reference_statistics(REFERENCE, MAPPING)
    release = Release(2.0)  # step 0.5, offset 16
    shift = standardise(stats, MAPPING, release, "centred-cosine")
    assert shift.centre.tolist() == [[20.0, 23.0, 21.0]]  # 16 + mean / 0.5
    assert shift.scale.tolist() == [[1.0, 1.0, 1.0]]
    scaled = standardise(stats, MAPPING, release, "standardised-cosine")
    assert scaled.scale.tolist() == [[2.0, 1.0, 3.0]]  # spread / 0.5
    assert standardise(stats, MAPPING, release, "cosine") is None
    with pytest.raises(ValueError, match="unknown feature"):
        standardise(stats, MAPPING, release, "euclid")
    # A code vector equal to the centre plus (1, 0, 0) becomes the unit vector (1, 0, 0).
    codes = np.array([[[21.0, 23.0, 21.0]]])
    assert unit_vectors(codes, shift).tolist() == [[[1.0, 0.0, 0.0]]]


def test_components_kept_grow_as_the_root_of_twice_the_reference_rows_from_30() -> None:
    assert [kept_components(r) for r in (1, 8, 200, 450, 2000)] == [1, 8, 30, 30, 63]


PROJECTED_REFERENCE = {"first": ["ANN", "BOB", "ANNA", "ROBERT", "JO", "MARIA", "MARK", "ANNE"]}
PROJECTED_TENSOR = smash({"first": ["ANNIE", "ROBERTA", "MARIO"]}, PROJECTED_REFERENCE, MAPPING)


def _cosines(unit: np.ndarray) -> np.ndarray:
    return unit[:, 0] @ unit[:, 0].T


def test_projected_features_depend_on_the_subspace_not_the_signs_of_its_basis(
    monkeypatch,
) -> None:
    monkeypatch.setattr(release_module, "kept_components", lambda rows: 4)
    stats = reference_statistics(PROJECTED_REFERENCE, MAPPING)
    basis = stats.components["first"]
    assert basis.shape == (8, 4)
    assert np.allclose(basis.T @ basis, np.eye(4), atol=1e-10)
    shift = standardise(stats, MAPPING, Release(), "projected-cosine")
    projected = unit_vectors(PROJECTED_TENSOR, shift)
    assert projected.shape == (3, 1, 4)
    flipped = type(shift)(shift.centre, shift.scale, shift.basis * np.array([-1.0, 1, -1, 1]))
    assert np.allclose(_cosines(unit_vectors(PROJECTED_TENSOR, flipped)), _cosines(projected))


def test_keeping_every_component_gives_the_centred_cosines(monkeypatch) -> None:
    monkeypatch.setattr(release_module, "kept_components", lambda rows: rows)
    stats = reference_statistics(PROJECTED_REFERENCE, MAPPING)
    every = standardise(stats, MAPPING, Release(), "projected-cosine")
    centred = standardise(stats, MAPPING, Release(), "centred-cosine")
    assert np.allclose(
        _cosines(unit_vectors(PROJECTED_TENSOR, every)),
        _cosines(unit_vectors(PROJECTED_TENSOR, centred)),
        atol=1e-5,
    )


def test_a_repeated_reference_value_gives_equal_noisy_coordinates() -> None:
    reference = {"first": ["ANN", "BOB", "ANN"]}
    tensor = smash(
        {"first": ["JOHN", "MARY"]},
        reference,
        NOISY,
        rng=np.random.default_rng(4),
    )
    assert np.array_equal(tensor[:, 0, 0], tensor[:, 0, 2])
    assert not np.array_equal(tensor[:, 0, 0], tensor[:, 0, 1])
