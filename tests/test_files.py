"""atomic_file never leaves half a file, and a file made private stays private throughout."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pprl.files.atomic import atomic_file, write_text_atomic


def test_atomic_file_replaces_the_target_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "out" / "linkage.csv"
    with atomic_file(target) as tmp:
        assert tmp.parent == target.parent
        assert tmp != target
        tmp.write_bytes(b"new")
        assert not target.exists()  # not visible before the block ends
    assert target.read_bytes() == b"new"
    assert [p.name for p in target.parent.iterdir()] == ["linkage.csv"]

    with atomic_file(target) as tmp:
        tmp.write_bytes(b"newer")
        assert target.read_bytes() == b"new"
    assert target.read_bytes() == b"newer"
    assert [p.name for p in target.parent.iterdir()] == ["linkage.csv"]


def test_atomic_file_leaves_nothing_when_the_block_raises(tmp_path: Path) -> None:
    target = tmp_path / "linkage.csv"
    with pytest.raises(RuntimeError, match="boom"), atomic_file(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_file_keeps_the_old_target_when_the_block_raises(tmp_path: Path) -> None:
    target = tmp_path / "linkage.csv"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic_file(target) as tmp:
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["linkage.csv"]


@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_atomic_file_gives_the_mode_before_the_block_writes(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "key.pem"
    with atomic_file(target, mode) as tmp:
        assert stat.S_IMODE(tmp.stat().st_mode) == mode
        tmp.write_bytes(b"secret")
    assert stat.S_IMODE(target.stat().st_mode) == mode


def test_write_text_atomic_creates_the_directory_and_keeps_line_endings(tmp_path: Path) -> None:
    target = tmp_path / "out" / "rows.csv"
    write_text_atomic(target, "a,b\r\n1,2\n")
    assert target.read_bytes() == b"a,b\r\n1,2\n"
    assert [p.name for p in target.parent.iterdir()] == ["rows.csv"]
