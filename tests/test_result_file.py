"""A benchmark's JSON result (lab.result_file): whole, readable, and the previous one
kept when writing fails."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lab.result_file import write_result


def test_a_result_is_written_whole_with_paths_and_numbers_as_text(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_result(path, {"f1": 0.85, "input": Path("a.csv"), "pairs": np.int64(7)})
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "f1": 0.85,
        "input": "a.csv",
        "pairs": "7",
    }
    assert path.read_text(encoding="utf-8").endswith("}\n")


def test_a_write_failing_halfway_leaves_the_previous_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills after half the text is written: the previous result stays whole and no
    partial file is left beside it (a result written in place would now be half of one)."""
    path = tmp_path / "out.json"
    write_result(path, {"run": 1})
    original = Path.write_text

    def half_then_full(self: Path, text: str, *args: object, **kwargs: object) -> int:
        original(self, text[: len(text) // 2], *args, **kwargs)  # type: ignore[arg-type]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    with pytest.raises(OSError):
        write_result(path, {"run": 2, "rows": list(range(100))})
    monkeypatch.undo()
    assert json.loads(path.read_text(encoding="utf-8")) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
