"""The phase order of Algorithm 1, shared by both parties and numbered as on the wire."""

from __future__ import annotations

import enum

from pprl.protocol.errors import PprlError


class Phase(enum.IntEnum):
    NEW = 0
    AGREE = 1
    SMASH = 2
    TRAIN = 3
    EXCHANGE = 4
    MATCH = 5
    REVEAL = 6
    LINK = 7


LAST_PHASE = Phase.LINK


class PhaseOrderError(PprlError):
    """A phase was requested before the phases it depends on were completed."""


def next_phase(completed: Phase) -> Phase | None:
    """The phase to run after `completed`, or None once the linkage is done."""
    return None if completed == LAST_PHASE else Phase(completed + 1)


def check_advance(completed: Phase, requested: Phase) -> bool:
    """True to run `requested`; False if it is already done, so a retried request is harmless."""
    if requested == Phase.NEW:
        raise PhaseOrderError(
            f"phase {requested.name} cannot be requested (completed: {completed.name})"
        )
    if requested <= completed:
        return False
    if requested != next_phase(completed):
        raise PhaseOrderError(
            f"phase {requested.name} requested but only {completed.name} is completed; "
            f"next is {Phase(completed + 1).name}"
        )
    return True
