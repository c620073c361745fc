"""An entry joining several attributes read about as its raw cosine (features.RAW_JOINS, the
feature sealed linkage fixes), the other entries centred and projected as before."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.method import method_params
from pprl.protocol.model.features import RAW_JOINS, unit_vectors
from pprl.protocol.vectors.release import raw_reading

MAPPING = [("first", "first"), ("last", "last"), ("first+last", "first+last")]


def _cosines(vectors: np.ndarray) -> np.ndarray:
    unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
    return unit @ unit.T


def test_the_reading_gives_the_raw_cosines_of_vectors_the_basis_spans_around_the_centre() -> None:
    rng = np.random.default_rng(0)
    basis, _ = np.linalg.qr(rng.normal(size=(30, 5)))
    centre = rng.uniform(2.0, 6.0, 30)
    coordinates = rng.normal(size=(8, 5))
    raw = centre + coordinates @ basis.T
    shift, rest = raw_reading(centre, basis)
    read = np.concatenate([coordinates + shift, np.full((8, 1), rest)], axis=1)
    assert np.allclose(_cosines(read), _cosines(raw), atol=1e-9)
    # The centred coordinates alone read other cosines: the reading is what changes them.
    assert np.abs(_cosines(coordinates) - _cosines(raw)).max() > 0.5


def _units(feature: str, release: str) -> np.ndarray:
    reference = ReferenceSet("built-in", synthetic.default_reference(300))
    people = synthetic.generate(200, 5).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}
    agreement = Agreement(reference, MAPPING, method_params(feature=feature, release=release))
    return unit_vectors(agreement.smash(columns, np.random.default_rng(0)), agreement.standardise)


@pytest.mark.parametrize("release", ["projected", "distances"])
def test_only_the_joined_entry_is_read_raw(release: str) -> None:
    """From the projected codes (sealed linkage's) or the distances projected on the spot."""
    raw = _units("cosine", "distances")
    centred = _units("projected-cosine", release)
    joined = _units(RAW_JOINS, release)
    assert joined.shape[2] == centred.shape[2] + 1  # one constant coordinate more

    def cosines(units: np.ndarray, m: int) -> np.ndarray:
        return units[:, m, :] @ units[:, m, :].T

    for single in (0, 1):  # the one-attribute entries: exactly as before
        assert np.allclose(cosines(joined, single), cosines(centred, single), atol=1e-6)
    # The joined entry: near the raw vectors' cosines (the byte grid and the components the
    # projection drops apart), far from the centred ones.
    assert np.abs(cosines(joined, 2) - cosines(raw, 2)).mean() < 0.01
    assert np.abs(cosines(centred, 2) - cosines(raw, 2)).mean() > 0.5
