"""The queue of pairs for clerical review: the agreed pairs marked for it, then the pairs
only one party's classifier accepted (both parties hold those already: REVEAL sends every
pair a party accepts), so that a person can settle what the two classifiers disagree on."""

from __future__ import annotations

from collections.abc import Sequence

Row = Sequence[object]


def rows(agreed: Sequence[Row], own: Sequence[Row], peer: Sequence[Row]) -> list[tuple]:
    """(own id, peer id, own score or "", why) per pair to review. `agreed`: linkage.csv's
    rows (own id, peer id, score, sharing, sharing, review); `own`: this party's accepted
    pairs (own id, peer id or "", score); `peer`: the peer's (own id, peer id)."""
    both = {(row[0], row[1]) for row in agreed}
    out = [(row[0], row[1], row[2], row[-1]) for row in agreed if row[-1]]
    out += [
        (row[0], row[1], row[2], "only this party accepted")
        for row in own
        if (row[0], row[1]) not in both
    ]
    out += [
        (row[0], row[1], "", "only the peer accepted") for row in peer if tuple(row[:2]) not in both
    ]
    return sorted(out, key=lambda row: (str(row[0]), str(row[1])))
