"""The privacy gate's dictionary coordinates on disk, so a daemon pays for them once.

Projecting a 90,000-name dictionary onto a 2,000-row reference set's components takes tens
of seconds and gives the same figures in every run on that set: they depend only on public
inputs, which the file name (a hash of them) stands for. A file that cannot be read is
computed again, never trusted half-written.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np

from pprl.files.atomic import atomic_file

log = logging.getLogger("pprl.party")
CACHE_DIR = "gate-cache"
_KEY = re.compile(r"[0-9a-f]{64}")


class DiskProjections:
    """An ArrayStore of .npy files in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        try:
            return np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.warning("ignoring an unreadable gate cache file %s: %s", path, error)
            return None

    def put(self, key: str, value: np.ndarray) -> None:
        with atomic_file(self._path(key)) as tmp, tmp.open("wb") as out:
            np.save(out, value, allow_pickle=False)


NOISE_HINT = "last-noise.json"


def read_noise_hint(directory: Path) -> float | None:
    """The noise this daemon chose last, where its next choice starts looking (two
    measurements instead of about seven when little changed); None when there is none or
    it cannot be read: the hint never decides a choice, the measurements do."""
    path = directory / NOISE_HINT
    try:
        sigma = json.loads(path.read_text(encoding="utf-8"))["sigma"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("ignoring an unreadable noise hint %s: %s", path, error)
        return None
    return float(sigma) if isinstance(sigma, int | float) else None


def write_noise_hint(directory: Path, sigma: float) -> None:
    with atomic_file(directory / NOISE_HINT) as tmp:
        tmp.write_text(json.dumps({"sigma": sigma}), encoding="utf-8")
