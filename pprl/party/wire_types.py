"""Conversions from the protocol's types to the wire's generated ones."""

from __future__ import annotations

from typing import cast

from pprl.protocol.phases import Phase
from pprl.wire.v1 import linkage_pb2 as pb


def wire_phase(phase: Phase) -> pb.Phase:
    """The wire's Phase enum, numbered as the protocol's (tests/test_phases.py checks)."""
    return cast(pb.Phase, int(phase))
