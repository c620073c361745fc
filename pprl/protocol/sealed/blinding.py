"""Blocking keys blinded so that neither party can evaluate them alone: commutative
Diffie-Hellman blinding on X25519 (RFC 7748), computed by `cryptography` (OpenSSL).

A party derives blocking keys from its own plaintext (strings such as a phonetic code of a
surname). Each key is hashed to an X25519 input u = SHA-256(DOMAIN, context, key), where the
context names the run (the agreement digest and run id), so values blinded in one run match
nothing in another. Party A sends X25519(a, u) for its keys; B returns X25519(b, ·) of each,
in the same order, and sends X25519(b, u') for its own keys, which A blinds with a. Both
doubly blinded values are the u-coordinate of [a·b]U, so A can tell which of its rows share a
key with which of B's rows, and nothing else of the keys.

Why this is sound, and at what strength:
- Every 32-byte string is a valid X25519 input (RFC 7748, section 5). It lies on Curve25519
  (a group Z/8 x Z/l, l a prime near 2^252) or on its quadratic twist (Z/4 x Z/l', l' a
  prime near 2^253). Curve25519 was chosen to be twist-secure: discrete logarithms on both
  cost about 2^125 group operations, the 128-bit level at which X25519 is standardised
  (RFC 7748; NIST SP 800-186 lists Curve25519 for 128-bit security).
- X25519 clamps every scalar to a multiple of 8, so [a]U lies in the prime-order subgroup of
  whichever curve U is on; a small-order input gives the all-zero output, which
  `cryptography` refuses (and `reblind` reports as a named error): a crafted input cannot
  probe the other's scalar modulo small primes.
- With SHA-256 modelled as a random oracle, the doubly blinded value is the
  Diffie-Hellman oblivious PRF of the key (the construction of DH-based private set
  intersection: Meadows 1986; Huberman, Franklin and Hogg 1999). Holding only its own scalar,
  a party cannot compute the doubly blinded value of a guessed key (computational
  Diffie-Hellman) nor tell whether a received singly blinded value is a guessed key's
  (decisional Diffie-Hellman on the prime-order subgroups).
- Scalars are fresh for every run (32 bytes from the operating system) and never leave the
  party: where blinding is spread, they go to the party's own worker processes or Dask
  workers with each chunk, and nowhere else.

What it does not stop, and must be counted where it is used: a party can place guesses among
its own keys, and the peer's re-blinding then tells it, for each guess, whether some peer row
holds that key. The agreed number of keys a party may send (rows x keys per record) bounds
that budget; it is not zero. Nor can a party tell whether the peer re-blinded with the same
scalar it used for its own keys (a peer that does not only spoils the linkage: nothing
matches); a value sent back unblinded is caught (`returned`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from pprl.protocol.errors import PprlError

# Bytes of one blinded value (an X25519 u-coordinate).
POINT_BYTES = 32
# Separates these hashes from every other use of SHA-256 with the same inputs.
DOMAIN = b"pprl sealed blocking key v1\0"


class BlindingError(PprlError):
    """Blinded values that cannot be what the protocol makes: the wrong length, a small-order
    value, or a value returned unblinded. The message names which and where, never a value."""


def hashed(context: bytes, keys: Sequence[str]) -> list[bytes]:
    """Each key's X25519 input, bound to the run (`context`)."""
    prefix = DOMAIN + len(context).to_bytes(4, "big") + context
    return [hashlib.sha256(prefix + key.encode("utf-8")).digest() for key in keys]


def split(data: bytes, count: int, what: str) -> list[bytes]:
    """`count` blinded values received as one byte string, refused unless exactly that many."""
    if len(data) != count * POINT_BYTES:
        raise BlindingError(
            f"{what}: {len(data):,} bytes where {count:,} blinded values of {POINT_BYTES} "
            "bytes were agreed"
        )
    return [data[i : i + POINT_BYTES] for i in range(0, len(data), POINT_BYTES)]


def returned(
    sent: Sequence[bytes], data: bytes, what: str = "the peer's re-blinding"
) -> list[bytes]:
    """The peer's re-blinding of the values this party sent, refused unless one value per
    value sent, each of them changed (a value sent back as it was is not blinded)."""
    values = split(data, len(sent), what)
    for position, (before, after) in enumerate(zip(sent, values, strict=True)):
        if before == after:
            raise BlindingError(f"{what}, value {position}: returned unblinded")
    return values


class Spread(Protocol):
    """Runs `task(*arguments)` for each tuple of `tasks`, elsewhere (the party's worker
    processes or its Dask cluster), and gives the results in the tasks' order; `chunk`:
    the values a task holds."""

    chunk: int

    def __call__(
        self, task: Callable[..., list[bytes]], tasks: Sequence[tuple[Any, ...]]
    ) -> Iterable[list[bytes]]: ...


class Blinder:
    """One party's secret scalar for one run; with a `spread`, values beyond one chunk are
    blinded in chunks (`Spread.chunk` values) by the party's workers, each holding one."""

    def __init__(self, key: X25519PrivateKey | None = None, spread: Spread | None = None) -> None:
        self._key = key or X25519PrivateKey.generate()
        self._spread = spread

    @classmethod
    def from_secret(cls, secret: bytes, spread: Spread | None = None) -> Blinder:
        """The blinder whose `secret()` these 32 bytes are: a run resumed after a restart
        blinds as it did before (and tests replay one)."""
        return cls(X25519PrivateKey.from_private_bytes(secret), spread)

    def secret(self) -> bytes:
        """The scalar's 32 bytes, for the party's own state only: never sent."""
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    def blind_keys(self, context: bytes, keys: Sequence[str]) -> list[bytes]:
        """This party's own keys, hashed and blinded once: what it sends."""
        return self.blind(hashed(context, keys), "own keys")

    def reblind(self, received: Sequence[bytes], what: str = "the peer's keys") -> list[bytes]:
        """The peer's once-blinded values blinded again, in the same order."""
        return self.blind(received, what)

    def blind(self, values: Sequence[bytes], what: str) -> list[bytes]:
        """`values` blinded, here or, beyond one chunk and given a spread, by the workers."""
        chunk = self._spread.chunk if self._spread is not None else len(values)
        if self._spread is None or len(values) <= chunk:
            return self._blinded(values, what)
        tasks = [
            (self.secret(), what, start, values[start : start + chunk])
            for start in range(0, len(values), chunk)
        ]
        return [value for part in self._spread(blinded_chunk, tasks) for value in part]

    def _blinded(self, values: Sequence[bytes], what: str, start: int = 0) -> list[bytes]:
        out = []
        for position, value in enumerate(values, start):
            if len(value) != POINT_BYTES:
                raise BlindingError(
                    f"{what}, value {position}: {len(value)} bytes, not {POINT_BYTES}"
                )
            try:
                out.append(self._key.exchange(X25519PublicKey.from_public_bytes(value)))
            except ValueError:
                raise BlindingError(
                    f"{what}, value {position}: of small order (blinds to zero)"
                ) from None
        return out


def blinded_chunk(secret: bytes, what: str, start: int, values: Sequence[bytes]) -> list[bytes]:
    """One chunk of a spread blinding, a worker's whole task: `values` blinded with the
    scalar `secret`, an error naming the value's position in the whole (`start` on)."""
    return Blinder.from_secret(secret)._blinded(values, what, start)
