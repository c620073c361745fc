"""Conversions from the protocol's types to the wire's generated ones, and the timing both ends
of the Control service keep to."""

from __future__ import annotations

from typing import cast

from pprl.protocol.phases import Phase
from pprl.wire.v1 import linkage_pb2 as pb


def wire_phase(phase: Phase) -> pb.Phase:
    """The wire's Phase enum, numbered as the protocol's (tests/test_phases.py checks)."""
    return cast(pb.Phase, int(phase))


# How long a daemon keeps a run for the coordinator that drove it after that coordinator's
# last call or hold (AdvanceRequest.driver, Control.Hold): the daemon's lease, and the
# coordinator's reason to hold well within it.
DRIVER_LEASE_SECONDS = 5.0
