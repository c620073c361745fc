"""Whether a peer's blinded keys are spread as an honest file's are. Keys that are nearly all
one value join every row with every row: the run would score everything against everything
and end, as it did before this check, in an empty linkage and a clean exit, having told the
sender each of this party's rows' buckets against whatever it encrypted. No register gives
more than half its rows one key value (a key needs two or three attributes to agree), so such
a set is refused by name before anything is joined."""

from __future__ import annotations

import numpy as np

from pprl.protocol.sealed.blinding import POINT_BYTES

# A value may be held by at most this share of the sender's records...
MOST_SHARE = 0.5
# ...or this many keys, whichever is more: a file of a few dozen rows may repeat a value.
LEAST_ALLOWED = 16


def most_repeated(values: bytes) -> int:
    """How many times the commonest of the blinded keys (POINT_BYTES each) occurs."""
    keys = np.frombuffer(values, dtype=np.uint8).reshape(-1, POINT_BYTES)
    if not len(keys):
        return 0
    _, counts = np.unique(keys, axis=0, return_counts=True)
    return int(counts.max())


def degenerate_refusal(values: bytes, records: int) -> str | None:
    """Why keys sent for `records` rows are not an honest file's (one value held by more
    than MOST_SHARE of them, and more than LEAST_ALLOWED), or None."""
    most = most_repeated(values)
    allowed = max(LEAST_ALLOWED, int(MOST_SHARE * records))
    if most <= allowed:
        return None
    return (
        f"one key value repeats {most:,} times among keys for {records:,} records (at most "
        f"{allowed:,}): no register's keys are nearly all one value"
    )
