"""A SEAL ciphertext's bytes with each coefficient in as many bits as its prime has.

SEAL saves each coefficient of a ciphertext in a 64-bit word and compresses the whole with
zstd, which cannot see that a coefficient modulo a 50-bit prime leaves 14 bits of its word
zero: a fresh ciphertext at the agreed chain (primes of 50 and 60 bits, seeded) saves as
126 KB where its coefficients hold 113 KB, an evaluated one (one 50-bit prime, two
polynomials) as 118 KB where they hold 102 KB. This form keeps SEAL's own bytes, uncompressed,
around the coefficients and packs only the coefficients, at each prime's bit width; unpacking
restores SEAL's bytes exactly, and SEAL then loads and checks them as it would any (the
parameters' id, every coefficient against its prime, the seed). Nothing in it is
cryptographic: the same numbers, written without the zero bits.

SEAL's ciphertext save (version 4): a 16-byte header (magic, header size, version,
compression, the total size), then the members: the parameters' id (32 bytes), whether in NTT
form (1), the polynomials, the ring degree and the primes (8 each), the scale and the
correction factor (8 each); then the coefficient array, itself a 16-byte header and a count
(8) before count words, polynomial by polynomial, prime by prime; then, for a seeded
ciphertext, the seed of its second polynomial.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import zstandard

_MAGIC = b"\x5e\xa1"
_HEADER = 16
_COMPRESSION = 5  # offset of the compression mode in the header
_NONE, _ZSTD = 0, 2  # SEAL's compression modes: none, zstd (zlib, 1, is not read here)
_POLYNOMIALS = _HEADER + 33  # offset of the members' polynomial count, ring degree, primes
_COUNT = _HEADER + 73 + 16  # offset of the coefficient array's count
_PREFIX = _COUNT + 8  # SEAL's bytes before the first coefficient
# A seeded ciphertext's seed, saved with its own header, is 81 bytes; anything much longer
# after the coefficients is not a ciphertext of these parameters.
_MOST_AFTER = 256
_SEED_SAVE = 81  # its header, the generator's type (1) and the seed (64)


def packed(saved: bytes, widths: Sequence[int]) -> bytes:
    """`saved` (SEAL's bytes of a ciphertext) with its coefficients packed; `widths` the bits
    of the chain's primes, first to last (a ciphertext with k primes uses the first k)."""
    raw = uncompressed(saved)
    stored, degree, primes = _shape(raw)
    count = stored * primes * degree
    if primes > len(widths):
        raise ValueError("a ciphertext with more primes than the chain has")
    end = _PREFIX + 8 * count
    words = np.frombuffer(raw, dtype="<u8", count=count, offset=_PREFIX)
    blocks = words.reshape(stored, primes, degree)
    parts = [raw[:_PREFIX]]
    for prime in range(primes):
        parts.append(_packed_words(blocks[:, prime, :].reshape(-1), widths[prime]))
    parts.append(raw[end:])
    return b"".join(parts)


def unpacked(data: bytes, widths: Sequence[int], degree: int, stored: int) -> bytes:
    """SEAL's bytes (uncompressed) of a ciphertext `packed` sent: ValueError when `data`
    cannot be one at a ring of `degree` and a chain of these primes' `widths` that stores
    `stored` polynomials (1: seeded, its second expanded by SEAL from the seed after it)."""
    if len(data) < _PREFIX or data[:2] != _MAGIC or data[_COMPRESSION] != _NONE:
        raise ValueError("not a packed ciphertext")
    held, held_degree, primes = _shape(data)
    if held_degree != degree or not 1 <= primes <= len(widths):
        raise ValueError("a ciphertext of another ring or chain")
    if held != stored:
        raise ValueError(f"a ciphertext of {held} stored polynomials where {stored} were due")
    lengths = [stored * degree * widths[prime] // 8 for prime in range(primes)]
    end = _PREFIX + sum(lengths)
    if not 0 <= len(data) - end <= _MOST_AFTER:
        raise ValueError("a packed ciphertext of the wrong length")
    blocks = np.empty((stored, primes, degree), dtype="<u8")
    start = _PREFIX
    for prime, length in enumerate(lengths):
        chunk = data[start : start + length]
        blocks[:, prime, :] = _unpacked_words(chunk, widths[prime]).reshape(stored, degree)
        start += length
    return data[:_PREFIX] + blocks.tobytes() + data[end:]


def uncompressed(saved: bytes) -> bytes:
    """SEAL's bytes with the compression undone and the header saying so (the same bytes
    when they were not compressed)."""
    if len(saved) < _HEADER or saved[:2] != _MAGIC:
        raise ValueError("not SEAL's bytes")
    mode, body = saved[_COMPRESSION], saved[_HEADER:]
    if mode == _ZSTD:
        body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
    elif mode != _NONE:
        raise ValueError(f"SEAL's compression mode {mode} is not read here")
    size = struct.pack("<Q", _HEADER + len(body))
    return saved[:_COMPRESSION] + bytes([_NONE]) + saved[_COMPRESSION + 1 : 8] + size + body


def coefficients(saved: bytes, at: int = 0) -> np.ndarray:
    """(stored polynomials, primes, degree) the coefficients of the ciphertext, or key saved
    as one, whose save begins at `at` in SEAL's bytes `saved` (a key set's keys lie within
    it): for a tool that reads or writes one word by word
    (`benchmarks/lab/crafted_keys_attack.py`)."""
    raw = uncompressed(saved)
    stored, degree, primes = _shape(raw, at)
    count = stored * primes * degree
    words = np.frombuffer(raw, dtype="<u8", count=count, offset=at + _PREFIX)
    return words.reshape(stored, primes, degree).copy()


def with_coefficients(saved: bytes, words: np.ndarray, at: int = 0) -> bytes:
    """SEAL's bytes of `saved`, uncompressed, with the coefficients of the save at `at`
    replaced by `words` (of the shape `coefficients` gives)."""
    raw = bytearray(uncompressed(saved))
    stored, degree, primes = _shape(raw, at)
    if words.shape != (stored, primes, degree):
        raise ValueError("coefficients of another shape than the save holds")
    start = at + _PREFIX
    raw[start : start + words.nbytes] = words.astype("<u8").tobytes()
    return bytes(raw)


def key_set_offsets(saved: bytes) -> list[int]:
    """Where each key of a SEAL key set (a Galois key set) begins in its uncompressed bytes,
    each saved as a ciphertext is: after the set's header, its parameters' id and its count
    of slots, each slot's count of keys, then those keys."""
    raw = uncompressed(saved)
    at = _HEADER + 32 + 8
    if len(raw) < at:
        raise ValueError("not a key set")
    (slots,) = struct.unpack_from("<Q", raw, at - 8)
    offsets = []
    for _ in range(slots):
        if at + 8 > len(raw):
            raise ValueError("a key set shorter than its counts")
        (keys,) = struct.unpack_from("<Q", raw, at)
        at += 8
        for _ in range(keys):
            if at + _HEADER > len(raw) or raw[at : at + 2] != _MAGIC:
                raise ValueError("a key set shorter than its counts")
            offsets.append(at)
            (size,) = struct.unpack_from("<Q", raw, at + 8)
            if size < _PREFIX:
                raise ValueError("a key in a key set shorter than a key")
            at += size
    return offsets


def stored_polynomials(saved: bytes, at: int = 0) -> int:
    """How many polynomials the ciphertext (or key saved as one) at `at` stores: one for a
    seeded one, whose second SEAL draws from the seed after it."""
    return _shape(uncompressed(saved), at)[0]


def seed(saved: bytes) -> bytes:
    """What a seeded ciphertext's second polynomial is drawn from, as SEAL saves it after the
    coefficients: the generator's type and its 64-byte seed. ValueError unless the save holds
    one polynomial and its seed stored as SEAL stores it (uncompressed, _SEED_SAVE bytes), so
    that two saves of one seed cannot differ in their bytes."""
    raw = uncompressed(saved)
    stored, degree, primes = _shape(raw)
    after = raw[_PREFIX + 8 * stored * primes * degree :]
    if stored != 1 or len(after) != _SEED_SAVE or after[:2] != _MAGIC:
        raise ValueError("not a seeded ciphertext as SEAL saves one")
    if after[_COMPRESSION] != _NONE or struct.unpack_from("<Q", after, 8)[0] != _SEED_SAVE:
        raise ValueError("not a seeded ciphertext as SEAL saves one")
    return after[_HEADER:]


def _shape(raw: bytes | bytearray, at: int = 0) -> tuple[int, int, int]:
    """(stored polynomials, ring degree, primes) of the save at `at` in SEAL's bytes, checked
    against the coefficient count."""
    size, degree, primes = struct.unpack_from("<QQQ", raw, at + _POLYNOMIALS)
    (count,) = struct.unpack_from("<Q", raw, at + _COUNT)
    if degree == 0 or primes == 0 or count % (degree * primes):
        raise ValueError("a coefficient count that does not fit the ciphertext's shape")
    stored = count // (degree * primes)
    if stored not in (size, size // 2) or size > 3:
        raise ValueError("a coefficient count that does not fit the ciphertext's shape")
    return stored, degree, primes


def _packed_words(words: np.ndarray, width: int) -> bytes:
    """The low `width` bits of each word: its whole low bytes, word after word, then the
    bits left over of each (little-endian bit order)."""
    if np.any(words >> np.uint64(width)):
        raise ValueError(f"a coefficient wider than its prime's {width} bits")
    whole, rest = divmod(width, 8)
    octets = words.view(np.uint8).reshape(-1, 8)
    bits = np.unpackbits(octets[:, whole : whole + 1], axis=1, bitorder="little")[:, :rest]
    return octets[:, :whole].tobytes() + np.packbits(bits, bitorder="little").tobytes()


def _unpacked_words(chunk: bytes, width: int) -> np.ndarray:
    """The words `_packed_words` packed."""
    whole, rest = divmod(width, 8)
    count = len(chunk) * 8 // width
    octets = np.zeros((count, 8), dtype=np.uint8)
    octets[:, :whole] = np.frombuffer(chunk, dtype=np.uint8, count=count * whole).reshape(
        count, whole
    )
    if rest:
        packed_bits = np.frombuffer(chunk, dtype=np.uint8, offset=count * whole)
        bits = np.unpackbits(packed_bits, bitorder="little")[: count * rest]
        octets[:, whole] = np.packbits(bits.reshape(count, rest), axis=1, bitorder="little")[:, 0]
    return octets.reshape(-1).view("<u8")
