"""The gate's dictionary coordinates kept on disk: computed once per public input, reused,
and recomputed when the file cannot be read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pprl.party.gate_cache import DiskProjections
from pprl.protocol import pipeline, synthetic
from pprl.protocol.audit import Dictionary
from pprl.protocol.method import method_params
from pprl.protocol.reference import DEFAULT_MAPPING, ReferenceSet

NAMES = ["ADA", "ALAN", "GRACE", "EDSGER", "BARBARA", "DONALD"]


def _grid(rows: int = 60):
    reference = synthetic.default_reference(rows)
    agreement = pipeline.Agreement(
        ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=1.0)
    )
    return reference, agreement.releases[0]


def test_a_second_dictionary_reads_what_the_first_computed(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path / "cache")
    first = Dictionary(NAMES, reference, store).projected("first", grid)
    files = list((tmp_path / "cache").glob("*.npy"))
    assert len(files) == 1
    # The file, not a recomputation, is what the next daemon run gets.
    planted = np.full_like(first, 7.0)
    np.save(files[0], planted)
    again = Dictionary(NAMES, reference, store).projected("first", grid)
    assert np.array_equal(again, planted)
    assert np.allclose(Dictionary(NAMES, reference).projected("first", grid), first)


def test_other_names_or_another_reference_column_get_their_own_entry(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path)
    Dictionary(NAMES, reference, store).projected("first", grid)
    Dictionary([*NAMES, "KEN"], reference, store).projected("first", grid)
    Dictionary(NAMES, reference, store).projected("last", grid)
    assert len(list(tmp_path.glob("*.npy"))) == 3


def test_an_unreadable_or_misshapen_file_is_computed_again(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path)
    expected = Dictionary(NAMES, reference).projected("first", grid)
    Dictionary(NAMES, reference, store).projected("first", grid)
    (path,) = tmp_path.glob("*.npy")
    path.write_bytes(b"not numpy")
    assert store.get(path.stem) is None
    assert np.allclose(Dictionary(NAMES, reference, store).projected("first", grid), expected)
    np.save(path, np.zeros((2, 2)))
    assert np.allclose(Dictionary(NAMES, reference, store).projected("first", grid), expected)
    with pytest.raises(ValueError, match="not a cache key"):
        store.get("../../etc/passwd")
