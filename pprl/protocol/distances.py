"""The distance between two values of one kind, as smashing and the reference statistics use it.

Levenshtein on the canonical text for every kind; for dates the smaller of that and one more
than the distance with day and month exchanged, so a date and its day/month swap get vectors
within one edit of each other, and a one-year slip stays one or two edits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pprl.protocol.kinds import DEFAULT_KIND, swap_day_month


def kind_distances(
    values_a: Sequence[str], values_b: Sequence[str], kind: str = DEFAULT_KIND, clamp: int = 254
) -> np.ndarray:
    """(len(a), len(b)) uint8 distances of the kind between present (non-empty) values;
    anything above `clamp` - 1 reads as `clamp`."""
    table = process.cdist(
        values_a,
        values_b,
        scorer=Levenshtein.distance,
        dtype=np.uint8,
        workers=-1,
        score_cutoff=clamp - 1,
    )
    if kind == "date":
        swapped = process.cdist(
            [swap_day_month(value) for value in values_a],
            values_b,
            scorer=Levenshtein.distance,
            dtype=np.int32,
            workers=-1,
            score_cutoff=clamp - 1,
        )
        np.minimum(table, np.minimum(swapped + 1, clamp).astype(np.uint8), out=table)
    return table
