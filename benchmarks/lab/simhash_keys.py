"""Blocking keys from the vectors the classifier compares: random-hyperplane signs (SimHash)
of each mapping entry's unit vector, cut into bands. Two rows whose vectors are close in angle
(a small cosine distance, what the classifier reads) agree on a band's signs with high
probability, so they share a key. The hyperplanes come from a public seed both parties take
from the agreement, so both cut the same way; the keys are then blinded
(`pprl.protocol.sealed.blinding`) before anything is sent. The daemon keys rows by recipes
instead (`pprl.protocol.sealed.session`); these keys are what benchmarks/sealed_linkage.py and
benchmarks/sealed_key_attack.py measure.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from pprl.protocol.model.features import missing_units


@dataclass(frozen=True)
class KeySetting:
    """`bands` keys of `bits` signs per keyed entry, and as many over all entries together."""

    bits: int = 32
    bands: int = 16
    entries: tuple[int, ...] | None = None  # mapping entries keyed alone; None: every one
    together: bool = True
    # Groups of entries keyed together: a row shares such a key only with rows close on every
    # entry of the group, so the join reveals values only where several agree.
    combinations: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.bits <= 62 or self.bands < 1:
            raise ValueError(f"bits must be 1-62 and bands at least 1, got {self}")


def _planes(seed: bytes, label: str, width: int, count: int) -> np.ndarray:
    digest = hashlib.sha256(seed + b"\0" + label.encode()).digest()
    generator = np.random.Generator(np.random.PCG64(int.from_bytes(digest, "big")))
    return generator.standard_normal((width, count))


def _band_values(vectors: np.ndarray, planes: np.ndarray, bits: int) -> np.ndarray:
    """(n, bands) integers: each band's signs read as a number."""
    signs = (vectors @ planes > 0).astype(np.int64)
    weights = 1 << np.arange(bits, dtype=np.int64)
    return signs.reshape(len(vectors), -1, bits) @ weights


def row_keys(unit: np.ndarray, setting: KeySetting, seed: bytes) -> list[list[str]]:
    """Per row of (n, M, k) unit vectors its key strings; a missing value gives no key."""
    n, entries = unit.shape[:2]
    keyed = range(entries) if setting.entries is None else setting.entries
    missing = missing_units(unit)
    keys: list[list[str]] = [[] for _ in range(n)]
    groups: list[tuple[str, np.ndarray, np.ndarray]] = [
        (f"entry {m}", unit[:, m, :], ~missing[:, m]) for m in keyed
    ]
    for group in setting.combinations:
        label = "entries " + "+".join(str(m) for m in group)
        vectors = unit[:, list(group), :].reshape(n, -1)
        groups.append((label, vectors, np.logical_not(missing[:, list(group)].any(axis=1))))
    if setting.together:
        groups.append(("all entries", unit.reshape(n, -1), np.logical_not(missing.all(axis=1))))
    for label, vectors, present in groups:
        planes = _planes(seed, label, vectors.shape[1], setting.bits * setting.bands)
        values = _band_values(vectors.astype(np.float64), planes, setting.bits)
        for row in np.flatnonzero(present):
            keys[row].extend(f"{label}|{band}|{value}" for band, value in enumerate(values[row]))
    return keys
