"""A peer's automatic noise is taken only if a gate could have chosen it: infinite, huge,
negative or non-numeric proposals stop AGREE instead of reaching SMASH."""

from __future__ import annotations

import math

import pytest

from pprl.party.phases.agree import _proposed_sigma
from pprl.party.phases.context import PhaseFailed
from pprl.wire.v1 import linkage_pb2 as pb


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e308, 1000.0, -1.0, "2", True])
def test_a_proposal_no_gate_makes_is_refused(value: object) -> None:
    with pytest.raises(PhaseFailed) as caught:
        _proposed_sigma({"params": {"noise_sigma": value}}, "bob")
    assert caught.value.reason == pb.DIGEST_MISMATCH
    assert "bob proposed noise" in str(caught.value) and "from 0 to 8" in str(caught.value)


@pytest.mark.parametrize("value", [0, 0.0, 2.375, 8.0])
def test_a_proposal_a_gate_makes_is_taken(value: float) -> None:
    assert _proposed_sigma({"params": {"noise_sigma": value}}, "bob") == value
