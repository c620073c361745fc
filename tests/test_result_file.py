"""A benchmark's JSON result (pprl.bench.result_file): whole, readable, and the previous one
kept when writing fails."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pprl.bench.result_file import write_result


def test_a_result_is_written_whole_with_paths_and_numbers_as_text(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_result(path, {"f1": 0.85, "input": Path("a.csv"), "pairs": np.int64(7)})
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "f1": 0.85,
        "input": "a.csv",
        "pairs": "7",
    }
    assert path.read_text(encoding="utf-8").endswith("}\n")


def test_a_failed_write_leaves_the_previous_result(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_result(path, {"run": 1})

    class Unwritable:
        def __str__(self) -> str:
            raise RuntimeError("cannot be written")

    with pytest.raises(RuntimeError):
        write_result(path, {"run": 2, "bad": Unwritable()})
    assert json.loads(path.read_text(encoding="utf-8")) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
