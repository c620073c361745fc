"""Keyed q-gram Bloom filters, one per attribute: the second release beside reference-set
distances (FedSim's appendix cites this family: the CLK of the anonlink stack hashes every
field into one filter, FEDERAL and record-level filters keep one per field).

A value's padded q-grams are each hashed to `hashes` bit positions by HMAC-SHA256 under a key
both parties hold, the attribute's name and kind in the message, so the same string in two
attributes sets different bits. One filter per attribute keeps the attributes apart: the
classifier weighs each attribute's Dice distance, and a missing value is an empty filter,
told apart from any value (every non-empty value sets at least one bit).

The key decides everything a filter shows; without it the bits are opaque. The peer of a
two-party run holds it, so it can encode any list of names and look the filters up:
`pprl.protocol.bloom_audit` measures that attack.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.combined import is_combined, parts, with_combined
from pprl.protocol.features import FEATURES_PER_ENTRY, indicator_features
from pprl.protocol.kinds import DEFAULT_KIND

MIN_KEY_BYTES = 16
# 32 bytes of HMAC-SHA256 give 16 positions of 16 bits.
MAX_HASHES = 16
PAD = "\x02"  # a character no normalised value holds, so padding never meets a real q-gram


class BloomKeyError(ValueError):
    """A key too short to be secret, or none."""


class BloomKey:
    """The parties' shared secret; only a commitment to it goes into the agreement."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < MIN_KEY_BYTES:
            raise BloomKeyError(
                f"a Bloom-filter key needs at least {MIN_KEY_BYTES} bytes, got {len(secret)}"
            )
        self._secret = bytes(secret)

    @classmethod
    def generate(cls) -> BloomKey:
        return cls(secrets.token_bytes(32))

    @property
    def secret(self) -> bytes:
        return self._secret

    def commitment(self) -> str:
        """What the agreement digest holds: equal keys give equal commitments, and 32 random
        bytes cannot be found from it."""
        return hashlib.sha256(b"pprl bloom key commitment\x00" + self._secret).hexdigest()

    def __repr__(self) -> str:  # never print the secret
        return f"BloomKey(commitment={self.commitment()[:12]}...)"


@dataclass(frozen=True)
class BloomParams:
    """Both parties' filters must be built alike: these go into the agreement digest."""

    bits: int = 1024  # per attribute; a power of two
    hashes: int = 10  # bit positions per q-gram
    q: int = 2

    def __post_init__(self) -> None:
        if self.bits < 64 or self.bits > 1 << 16 or self.bits & (self.bits - 1):
            raise ValueError(f"bloom bits must be a power of two in 64..65536, got {self.bits}")
        if not 1 <= self.hashes <= MAX_HASHES:
            raise ValueError(f"bloom hashes must be within 1..{MAX_HASHES}, got {self.hashes}")
        if not 1 <= self.q <= 4:
            raise ValueError(f"bloom q must be within 1..4, got {self.q}")

    def to_dict(self) -> dict[str, int]:
        return {"bits": self.bits, "hashes": self.hashes, "q": self.q}


def qgrams(value: str, q: int) -> list[str]:
    """The distinct q-grams of a value padded with q - 1 marks each side, so that first and
    last letters weigh as much as inner ones; in order of first occurrence."""
    padded = PAD * (q - 1) + value + PAD * (q - 1)
    seen = dict.fromkeys(padded[i : i + q] for i in range(len(padded) - q + 1))
    return list(seen)


class FilterEncoder:
    """One attribute's filters under one key; q-gram positions are computed once each."""

    def __init__(self, key: BloomKey, params: BloomParams, attribute: str, kind: str) -> None:
        self.params = params
        self._key = key.secret
        self._label = f"{attribute}\x1f{kind}\x1f".encode()
        self._positions: dict[str, np.ndarray] = {}

    def positions(self, gram: str) -> np.ndarray:
        found = self._positions.get(gram)
        if found is None:
            digest = hmac.digest(self._key, self._label + gram.encode(), "sha256")
            words = np.frombuffer(digest, dtype="<u2")[: self.params.hashes]
            found = (words & (self.params.bits - 1)).astype(np.int64)
            self._positions[gram] = found
        return found

    def encode(self, *parts: Sequence[str]) -> np.ndarray:
        """(n, bits / 8) packed filters of one attribute's values, or with several `parts`
        (a combined attribute) of the union of their q-grams, as a CLK hashes every field
        into one filter: the same grams in either part set the same bits, so a swap of the
        parts between two records changes nothing. Missing values ("") set no bit."""
        keys = list(zip(*parts, strict=True))
        distinct = {key: i for i, key in enumerate(dict.fromkeys(keys))}
        bits = np.zeros((len(distinct), self.params.bits), dtype=bool)
        for key, row in distinct.items():
            for value in key:
                if value:
                    for gram in qgrams(value, self.params.q):
                        bits[row, self.positions(gram)] = True
        packed = np.packbits(bits, axis=1)
        return packed[np.fromiter((distinct[k] for k in keys), np.int64, len(keys))]


def encode(
    key: BloomKey,
    params: BloomParams,
    columns: Mapping[str, Sequence[str]],
    attributes: Sequence[str],
    kinds: Mapping[str, str] | None = None,
) -> np.ndarray:
    """(n, attributes, bits / 8) uint8: each record's filters, attribute by attribute; an
    attribute named `a+b` is the combined filter of a and b (pprl.protocol.combined)."""
    kinds = kinds or {}
    encoded = []
    for name in attributes:
        encoder = FilterEncoder(key, params, name, kinds.get(parts(name)[0], DEFAULT_KIND))
        if is_combined(name):
            encoded.append(encoder.encode(*(columns[part] for part in parts(name))))
        else:  # a plain attribute, or an initial entry's first letters
            encoded.append(encoder.encode(with_combined(columns, [name])[name]))
    return np.stack(encoded, axis=1)


@dataclass(frozen=True)
class Unpacked:
    """Filters as 0/1 float32 rows (for products) with each filter's bit count."""

    bits: np.ndarray  # (n, attributes, bits)
    counts: np.ndarray  # (n, attributes) float32

    def __len__(self) -> int:
        return len(self.bits)

    @property
    def missing(self) -> np.ndarray:
        return self.counts == 0


def unpack(filters: np.ndarray) -> Unpacked:
    bits = np.unpackbits(filters, axis=-1).astype(np.float32)
    return Unpacked(bits, bits.sum(axis=-1, dtype=np.float32))


def dice_distance(intersection: np.ndarray, count_a: np.ndarray, count_b: np.ndarray) -> np.ndarray:
    """1 - Dice; 1 when either filter is empty (missing), as a zero vector's cosine reads."""
    total = count_a + count_b
    dice = np.divide(2.0 * intersection, total, out=np.zeros_like(intersection), where=total > 0)
    empty = (count_a == 0) | (count_b == 0)
    return np.where(empty, np.float32(1.0), np.float32(1.0) - dice).astype(np.float32)


def pair_features(a: Unpacked, b: Unpacked) -> np.ndarray:
    """(n, 3A) features of aligned rows, laid out as pprl.protocol.features lays out the
    reference release's: Dice distances, then missing on one side, then on both."""
    intersection = np.einsum("iab,iab->ia", a.bits, b.bits, dtype=np.float32)
    distances = dice_distance(intersection, a.counts, b.counts)
    return np.concatenate([distances, indicator_features(a.missing, b.missing)], axis=-1)


def block_features(a: Unpacked, b: Unpacked) -> np.ndarray:
    """(len(a), len(b), 3A) features of every pair of two blocks."""
    n_a, n_b, entries = len(a), len(b), a.bits.shape[1]
    out = np.empty((n_a, n_b, FEATURES_PER_ENTRY * entries), dtype=np.float32)
    for m in range(entries):
        intersection = a.bits[:, m, :] @ b.bits[:, m, :].T
        out[:, :, m] = dice_distance(intersection, a.counts[:, m, None], b.counts[None, :, m])
    missing_a = np.broadcast_to(a.missing[:, None, :], (n_a, n_b, entries))
    missing_b = np.broadcast_to(b.missing[None, :, :], (n_a, n_b, entries))
    out[:, :, entries:] = indicator_features(missing_a, missing_b)
    return out
