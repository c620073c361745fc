"""Which reason each failure carries, and who may call which service, without a network."""

from __future__ import annotations

import grpc
import pytest

from pprl.party.peering.peer import PeerError
from pprl.party.phases.context import PhaseFailed
from pprl.party.phases.phase_runner import failure
from pprl.party.reasons import reason_name
from pprl.party.service.authorise import service_of
from pprl.party.storage.state import ArtifactError
from pprl.protocol.errors import InputError
from pprl.wire.v1 import linkage_pb2 as pb


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (PhaseFailed("records changed"), grpc.StatusCode.FAILED_PRECONDITION, pb.BAD_INPUT),
        (
            PhaseFailed("privacy gate", reason=pb.PRIVACY_GATE),
            grpc.StatusCode.FAILED_PRECONDITION,
            pb.PRIVACY_GATE,
        ),
        (InputError("duplicate", path="a.csv"), grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT),
        (PeerError("cannot reach bob"), grpc.StatusCode.UNAVAILABLE, pb.PEER_UNAVAILABLE),
        (
            PeerError("bob refused the tensor", pb.BAD_CHUNK),
            grpc.StatusCode.UNAVAILABLE,
            pb.BAD_CHUNK,
        ),
        (ArtifactError("model.npz changed"), grpc.StatusCode.DATA_LOSS, pb.DATA_LOSS),
        (KeyError("a bug"), grpc.StatusCode.INTERNAL, pb.INTERNAL),
    ],
    ids=lambda value: getattr(value, "name", None) or type(value).__name__,
)
def test_a_phase_failure_ends_advance_with_its_code_and_reason(error, code, reason) -> None:
    assert failure(error) == (code, reason)


def test_reason_names_are_the_enum_names() -> None:
    assert reason_name(pb.PRIVACY_GATE) == "PRIVACY_GATE"
    assert reason_name(pb.ERROR_REASON_UNSPECIFIED) == "ERROR_REASON_UNSPECIFIED"
    # a reason a newer peer added still reads as one
    assert reason_name(999) == "ERROR_REASON_999"


def test_every_reason_but_the_default_is_distinct_and_nonzero() -> None:
    values = pb.ErrorReason.values()
    assert pb.ErrorReason.Value("ERROR_REASON_UNSPECIFIED") == 0
    assert len(set(values)) == len(values)
    assert {"NOT_AUTHORISED", "DIGEST_MISMATCH", "VERSION_MISMATCH", "BAD_CHUNK"} <= set(
        pb.ErrorReason.keys()
    )


def test_the_service_of_a_method_path() -> None:
    assert service_of("/pprl.wire.v1.Peer/PushTensor") == "pprl.wire.v1.Peer"
    assert service_of("/pprl.wire.v1.Control/Advance") == "pprl.wire.v1.Control"
    for malformed in ("", "pprl.wire.v1.Peer/PushTensor", "/pprl.wire.v1.Peer", "/a/b/c"):
        assert service_of(malformed) == ""
