"""Keyed q-gram Bloom filters, one per attribute: the second release beside reference-set
distances (FedSim's appendix cites this family: the CLK of the anonlink stack hashes every
field into one filter, FEDERAL and record-level filters keep one per field).

A value's padded q-grams are each hashed to `hashes` bit positions by HMAC-SHA256 under a key
both parties hold, the attribute's name and kind in the message, so the same string in two
attributes sets different bits. One filter per attribute keeps the attributes apart: the
classifier weighs each attribute's Dice distance, and a missing value is an empty filter,
told apart from any value (every non-empty value sets at least one bit).

Numbers and places take FEDERAL's random-threshold encoding instead of q-grams, so that the
Dice distance of two filters follows the distance of the values: each of `WINDOWS` keyed
functions lays a randomly shifted (and, for places, rotated) grid of intervals `WINDOW_UNITS`
units of the attribute's scale wide over the line (a quantity) or over space (coordinates,
as points on the Earth in metres), and sets the bit its key puts on the interval the value
falls in. Two values d units apart share a function's interval with probability
max(0, 1 - d / WINDOW_UNITS) per dimension, so the expected share of common bits falls
linearly with the distance, to none at WINDOW_UNITS; and every value sets the same number of
bits (up to collisions), FEDERAL's point: a filter's weight says nothing about its value.
FEDERAL fixes N centres over a known range; a keyed shifted grid needs no range to be agreed.

The key decides everything a filter shows; without it the bits are opaque. The peer of a
two-party run holds it, so it can encode any list of names and look the filters up:
`pprl.protocol.privacy.bloom_audit` measures that attack.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pprl.protocol.data.combined import is_combined, parts, with_combined
from pprl.protocol.data.kinds import DEFAULT_KIND, SCALED_KINDS, kind_named
from pprl.protocol.errors import PprlError, SettingError
from pprl.protocol.model.features import FEATURES_PER_ENTRY, indicator_features

MIN_KEY_BYTES = 16
# 32 bytes of HMAC-SHA256 give 16 positions of 16 bits.
MAX_HASHES = 16
PAD = "\x02"  # a character no normalised value holds, so padding never meets a real q-gram
WINDOWS = 64  # interval functions per value, each setting one bit
WINDOW_UNITS = 16.0  # an interval's width, in units of the attribute's scale


class BloomKeyError(PprlError, ValueError):
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
            raise SettingError(f"bloom bits must be a power of two in 64..65536, got {self.bits}")
        if not 1 <= self.hashes <= MAX_HASHES:
            raise SettingError(f"bloom hashes must be within 1..{MAX_HASHES}, got {self.hashes}")
        if not 1 <= self.q <= 4:
            raise SettingError(f"bloom q must be within 1..4, got {self.q}")

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


class WindowEncoder:
    """One numeric attribute's filters: the keyed grids are drawn once from the key."""

    def __init__(
        self, key: BloomKey, params: BloomParams, attribute: str, kind: str, scale: float
    ) -> None:
        if not math.isfinite(scale) or scale <= 0:
            raise SettingError(f"attribute {attribute!r} is a {kind} and needs a scale > 0")
        self.params, self.kind, self.scale = params, kind, scale
        self._key = key.secret
        self._label = f"{attribute}\x1f{kind}\x1fwindows\x1f".encode()
        dimensions = kind_named(kind).dimensions
        seed = hmac.digest(self._key, self._label + b"grids", "sha256")
        rng = np.random.default_rng(int.from_bytes(seed, "big"))
        gaussian = rng.standard_normal((WINDOWS, dimensions, dimensions))
        self._rotations = np.linalg.qr(gaussian)[0]  # orthogonal: distances unchanged
        self._offsets = rng.uniform(0.0, WINDOW_UNITS, (WINDOWS, dimensions))

    def cells(self, values: Sequence[str]) -> np.ndarray:
        """(n, WINDOWS, dimensions) int64: each value's interval under every function."""
        points = kind_named(self.kind).points(values, self.scale)
        at = np.einsum("wij,nj->nwi", self._rotations, points)
        return np.floor((at + self._offsets) / WINDOW_UNITS).astype(np.int64)

    def encode(self, values: Sequence[str]) -> np.ndarray:
        """(n, bits / 8) packed filters; a missing value ("") sets no bit."""
        present = [i for i, value in enumerate(values) if value]
        bits = np.zeros((len(values), self.params.bits), dtype=bool)
        if present:
            cells = self.cells([values[i] for i in present])
            functions = np.broadcast_to(np.arange(WINDOWS)[None, :, None], (*cells.shape[:2], 1))
            keys = np.concatenate([functions, cells], axis=2).reshape(-1, cells.shape[2] + 1)
            distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
            mask = self.params.bits - 1
            positions = np.array(
                [
                    int.from_bytes(
                        hmac.digest(self._key, self._label + row.tobytes(), "sha256")[:2], "little"
                    )
                    & mask
                    for row in distinct.astype("<i8")
                ],
                dtype=np.int64,
            )
            rows = np.repeat(np.array(present, dtype=np.int64), WINDOWS)
            bits[rows, positions[inverse.reshape(-1)]] = True
        return np.packbits(bits, axis=1)


def value_filters(
    key: BloomKey,
    params: BloomParams,
    label: str,
    kind: str,
    scale: float | None,
    values: Sequence[str],
) -> np.ndarray:
    """(n, bits / 8) packed filters of one attribute's values under `label`: windowed in
    units of `scale` for a quantity or coordinates, else their q-grams."""
    if kind not in SCALED_KINDS:  # `kind` may be a shared label ("q-grams"), not a kind
        return FilterEncoder(key, params, label, kind).encode(values)
    if scale is None:
        raise SettingError(f"attribute {label!r} is a {kind} and needs a scale")
    return WindowEncoder(key, params, label, kind, scale).encode(values)


def encode(
    key: BloomKey,
    params: BloomParams,
    columns: Mapping[str, Sequence[str]],
    attributes: Sequence[str],
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
) -> np.ndarray:
    """(n, attributes, bits / 8) uint8: each record's filters, attribute by attribute; an
    attribute named `a+b` is the combined filter of a and b (pprl.protocol.data.combined). A
    quantity or coordinates attribute takes the window encoding in units of its scale."""
    kinds, scales = kinds or {}, scales or {}
    encoded: list[np.ndarray] = []
    for name in attributes:
        kind = kinds.get(parts(name)[0], DEFAULT_KIND)
        if is_combined(name):
            encoder = FilterEncoder(key, params, name, kind)
            encoded.append(encoder.encode(*(columns[part] for part in parts(name))))
        else:  # a plain attribute, or an initial entry's first letters
            values = with_combined(columns, [name])[name]
            encoded.append(value_filters(key, params, name, kind, scales.get(name), values))
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
    """(n, 3A) features of aligned rows, laid out as pprl.protocol.model.features lays out the
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


_DISTANCE_ROWS = 4096


@dataclass(frozen=True, eq=False)
class FilterDistance:
    """The Hamming distance of two values' keyed filters, in place of the edit distance, for
    encoding "bloom-distances": a record is released as its filters' noisy distances to the
    reference values' filters, the similarities FedSim's appendix noises and bounds. Every
    q-gram kind shares one label (numbers and places are windowed in their own scale), so a
    record's filter and a reference value's compare, and an attacker's guess is encoded as
    the value was."""

    key: BloomKey
    params: BloomParams
    # Each value's packed filter, by (label, scale): the gate and its noise search compare the
    # same dictionary and reference values again and again, and encoding them is most of it.
    _encoded: dict[tuple[str, float | None], dict[str, np.ndarray]] = field(
        default_factory=dict, repr=False
    )

    @property
    def identity(self) -> str:
        """What cached reference figures must differ by (the key only by its commitment)."""
        return f"bloom-hamming/{self.params.to_dict()}/{self.key.commitment()}"

    def filters(self, values: Sequence[str], kind: str, scale: float | None) -> Unpacked:
        shared = kind if kind in SCALED_KINDS else "q-grams"
        known = self._encoded.setdefault((shared, scale), {})
        new = list(dict.fromkeys(value for value in values if value not in known))
        if new:
            packed = value_filters(self.key, self.params, "distance", shared, scale, new)
            known.update(zip(new, packed, strict=True))
        rows = [known[value] for value in values]
        stacked = np.stack(rows) if rows else np.empty((0, self.params.bits // 8), np.uint8)
        return unpack(stacked[:, None, :])

    def table(
        self,
        values_a: Sequence[str],
        values_b: Sequence[str],
        kind: str,
        clamp: int,
        scale: float | None,
    ) -> np.ndarray:
        """(len(a), len(b)) uint8 Hamming distances, anything above `clamp` - 1 as `clamp`."""
        a, b = self.filters(values_a, kind, scale), self.filters(values_b, kind, scale)
        out = np.empty((len(a), len(b)), dtype=np.uint8)
        for start in range(0, len(a), _DISTANCE_ROWS):
            stop = start + _DISTANCE_ROWS
            common = a.bits[start:stop, 0] @ b.bits[:, 0].T
            hamming = a.counts[start:stop, 0, None] + b.counts[None, :, 0] - 2 * common
            out[start:stop] = np.minimum(np.rint(hamming), clamp)
        return out
