"""Stored tensors read row-chunk by row-chunk give what the whole array gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pprl.party.storage.artifacts import TensorFile
from pprl.party.storage.state import ArtifactError
from pprl.protocol.linkage.candidates import accepted_pairs, distinct_entries
from pprl.protocol.linkage.matching import Selection
from tests.oracles import pair_list
from tests.test_candidates import _linkage


def test_slices_read_the_right_rows(tmp_path: Path) -> None:
    tensor = np.arange(7 * 2 * 3, dtype=np.uint8).reshape(7, 2, 3)
    tensor.tofile(tmp_path / "t.u8")
    stored = TensorFile(tmp_path / "t.u8", (7, 2, 3))
    assert len(stored) == 7
    np.testing.assert_array_equal(stored[2:5], tensor[2:5])
    np.testing.assert_array_equal(stored[5:100], tensor[5:])
    assert stored[7:9].shape == (0, 2, 3)
    with pytest.raises(ValueError, match="contiguous"):
        stored[::2]


def test_a_truncated_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.u8").write_bytes(b"\x00" * 10)
    with pytest.raises(ArtifactError, match="shorter"):
        TensorFile(tmp_path / "t.u8", (4, 1, 3))[0:4]


def test_matching_from_files_equals_matching_in_memory(tmp_path: Path) -> None:
    tensor_a, tensor_b, _, models = _linkage()
    tensor_a.tofile(tmp_path / "a.u8")
    tensor_b.tofile(tmp_path / "b.u8")
    stored_a = TensorFile(tmp_path / "a.u8", tensor_a.shape)
    stored_b = TensorFile(tmp_path / "b.u8", tensor_b.shape)
    for got, want in zip(
        distinct_entries(stored_a, chunk_rows=33), distinct_entries(tensor_a), strict=True
    ):
        np.testing.assert_array_equal(got.vectors[got.codes], want.vectors[want.codes])
    selection = Selection(models["linear"])
    from_files = accepted_pairs(stored_a, stored_b, selection)
    in_memory = accepted_pairs(tensor_a, tensor_b, selection)
    assert pair_list(from_files.matches) == pair_list(in_memory.matches)
    assert from_files.candidates == in_memory.candidates
