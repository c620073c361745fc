"""Files written so that a reader never sees half of one: beside the target, synced, renamed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pprl import failpoints


@contextmanager
def atomic_file(path: Path, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it into place only if the block succeeds.

    The temporary file starts private (0o600) and gets `mode` before anything is written to it,
    so a key never exists with a looser mode; an interrupted writer leaves the old file whole.
    """
    failpoints.before_write(path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp_path = Path(tmp)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        yield tmp_path
        with tmp_path.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="")
