"""Noise a party derives from a secret key and the value itself, so that it cannot be averaged
away across runs.

Fresh noise in every run lets a peer that links the same records ten times average ten
releases of each value, and with them a tenth of the noise variance. Keyed noise gives one
value, in one mapping entry, under one release setting, the same draws in every run: the
standard normals are generated from HMAC-SHA256(key, label, value). The label names what
the release depends on (the reference values, the entry, its kind, the noise and the
release), so that two different settings never share draws: the same draws under two
reference sets would let a peer subtract the noise away. The key never leaves the party.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

import numpy as np

from pprl.protocol.errors import SettingError

KEY_BYTES = 32


class NoiseKey:
    """A party's secret for keyed noise (32 bytes)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) != KEY_BYTES:
            raise SettingError(f"a noise key is {KEY_BYTES} bytes, got {len(secret)}")
        self._secret = secret

    @classmethod
    def generate(cls) -> NoiseKey:
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def for_development(cls, seed: int, party: str) -> NoiseKey:
        """A key a development seed reproduces, for replayable runs only."""
        return cls(hashlib.sha256(f"pprl-noise-key\0{seed}\0{party}".encode()).digest())

    def secret(self) -> bytes:
        return self._secret

    def draws(self, label: str, values: Sequence[str], width: int) -> np.ndarray:
        """(len(values), width) standard normals, the same for a value and label every time."""
        out = np.empty((len(values), width), dtype=np.float64)
        prefix = label.encode() + b"\0"
        for row, value in enumerate(values):
            digest = hmac.new(self._secret, prefix + value.encode(), hashlib.sha256).digest()
            generator = np.random.Generator(np.random.PCG64(int.from_bytes(digest, "big")))
            out[row] = generator.standard_normal(width)
        return out
