"""A peer that sends a party's own release back as its own: every row would match itself, the
party's classifier would accept every pair, and REVEAL would hand the peer every record id
tied to its row. A party checks the received release against its own before it scores.

With noise, the two releases share no row by chance: each party's noise is keyed by its own
secret, so even the same person in both files gives two different rows. Without noise,
people with the same values in both files give the same rows, so only a release that repeats
nearly all of the party's own is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import numpy as np

# With noise: more than this share of the peer's rows equal to own rows is refused.
NOISY_SHARE = 0.5
# Without noise: at least this share, with as many rows as the party's own.
EXACT_SHARE = 0.99
# Rows read at a time.
_ROWS = 4096


def row_digests(blocks: Iterable[np.ndarray]) -> Iterator[bytes]:
    """A digest per row, over blocks of rows."""
    for block in blocks:
        flat = np.ascontiguousarray(block).reshape(len(block), -1)
        for row in flat:
            yield hashlib.blake2b(row.tobytes(), digest_size=16).digest()


def repeated_share(own: Iterable[np.ndarray], peer: Iterable[np.ndarray]) -> float:
    """The share of the peer's rows equal to one of the party's own."""
    mine = set(row_digests(own))
    theirs = list(row_digests(peer))
    return sum(d in mine for d in theirs) / len(theirs) if theirs else 0.0


def is_reflected(share: float, noisy: bool, own_rows: int, peer_rows: int) -> bool:
    """Whether a received release repeating `share` of its rows from the own one is a
    reflection rather than the same people released by the peer (see the module)."""
    if noisy:
        return share > NOISY_SHARE
    return share >= EXACT_SHARE and own_rows == peer_rows


def blocks(rows: object, count: int) -> Iterator[np.ndarray]:
    """`rows[start:stop]` slices of `_ROWS` rows (a TensorFile or an array)."""
    for start in range(0, count, _ROWS):
        yield rows[start : min(start + _ROWS, count)]  # type: ignore[index]
