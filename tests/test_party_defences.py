"""A live daemon refuses what it must: strangers, wrong roles, bad tensors, phases out of order."""

from __future__ import annotations

import csv
import hashlib
import json
import uuid

import grpc
import numpy as np
import pytest

from pprl.party.artifacts import PEER_TENSOR
from pprl.party.certs import make_development_pki
from pprl.party.state import run_dir
from pprl.wire import linkage_pb2 as pb
from tests.conftest import coordinate, stub_as

pytestmark = pytest.mark.integration

MAPPING_ENTRIES, REFERENCE_ROWS, RECORDS = 4, 1000, 100


@pytest.fixture
def agreed(deploy):
    """Both daemons have completed AGREE for one run; returns (deployment, run_id)."""
    deployment = deploy(size=RECORDS)
    path = deployment.workdir / "agreed.json"
    result = coordinate(deployment, "--until", "agree", "--json", str(path))
    assert result.returncode == 0, result.stderr
    return deployment, json.loads(path.read_text())["run_id"]


def _code(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value.code()


def test_client_certificate_from_another_ca_is_refused(agreed, tmp_path):
    deployment, _ = agreed
    make_development_pki(tmp_path / "other", ["coordinator", "bob"])
    for identity in ("coordinator", "bob"):
        stub, channel = stub_as(deployment, "alice", identity, tmp_path / "other")
        with channel:
            code = _code(lambda s=stub: s.Status(pb.StatusRequest(), timeout=10))
            assert code == grpc.StatusCode.UNAVAILABLE
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:
        assert stub.Status(pb.StatusRequest(), timeout=10).identity == "alice"


def test_valid_certificate_with_the_wrong_identity_is_denied_and_logged(agreed):
    deployment, run_id = agreed
    make_development_pki(deployment.workdir / "certs", ["mallory"])
    calls = {
        "mallory": [
            lambda s: s.Status(pb.StatusRequest(), timeout=10),
            lambda s: s.GetAgreement(pb.AgreementRequest(run_id=run_id), timeout=10),
        ],
        "coordinator": [
            lambda s: s.GetAgreement(pb.AgreementRequest(run_id=run_id), timeout=10),
            lambda s: s.PushMatches(pb.MatchSet(run_id=run_id), timeout=10),
        ],
        "bob": [
            lambda s: s.Status(pb.StatusRequest(), timeout=10),
            lambda s: list(s.Advance(pb.AdvanceRequest(run_id=run_id, phase=2), timeout=10)),
        ],
    }
    for identity, attempts in calls.items():
        stub, channel = stub_as(deployment, "alice", identity)
        with channel:
            for attempt in attempts:
                assert _code(lambda a=attempt, s=stub: a(s)) == grpc.StatusCode.PERMISSION_DENIED
    log = deployment.parties["alice"].log.read_text()
    assert "refused Status from 'mallory'" in log
    assert "refused Advance from 'bob'" in log
    assert "refused GetAgreement from 'coordinator'" in log


def _tensor_stream(run_id, digest, shape, data, chunk_sha=None):
    header = pb.TensorHeader(
        run_id=run_id,
        digest=digest,
        shape=list(shape),
        dtype="uint8",
        total_bytes=len(data),
        chunk_count=1,
        sha256=hashlib.sha256(data).digest(),
    )
    chunk = pb.TensorChunk(index=0, data=data, sha256=chunk_sha or hashlib.sha256(data).digest())
    return iter([pb.TensorMessage(header=header), pb.TensorMessage(chunk=chunk)])


def test_bad_tensor_chunks_are_refused_and_nothing_is_stored(agreed):
    deployment, run_id = agreed
    stub, channel = stub_as(deployment, "alice", "bob")
    shape = (RECORDS, MAPPING_ENTRIES, REFERENCE_ROWS)
    data = np.random.default_rng(0).integers(0, 12, size=shape, dtype=np.uint8).tobytes()
    alice_run = run_dir(deployment.parties["alice"].state_dir, run_id)
    with channel:
        digest = stub.GetAgreement(pb.AgreementRequest(run_id=run_id), timeout=10).digest
        attempts = {
            "bad checksum": _tensor_stream(run_id, digest, shape, data, chunk_sha=b"\0" * 32),
            "wrong shape": _tensor_stream(
                run_id, digest, (RECORDS * 2, MAPPING_ENTRIES, REFERENCE_ROWS // 2), data
            ),
            "stale run id": _tensor_stream(uuid.uuid4().hex, digest, shape, data),
            "other digest": _tensor_stream(run_id, "0" * 64, shape, data),
        }
        for why, stream in attempts.items():
            code = _code(lambda st=stream: stub.PushTensor(st, timeout=30))
            assert code in {
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.FAILED_PRECONDITION,
            }, why
            left = [p.name for p in alice_run.iterdir() if PEER_TENSOR in p.name]
            assert left == [], why
        receipt = stub.PushTensor(_tensor_stream(run_id, digest, shape, data), timeout=30)
    assert receipt.sha256 == hashlib.sha256(data).digest()
    assert (alice_run / PEER_TENSOR).read_bytes() == data


def test_phases_called_out_of_order_fail_precondition(agreed):
    deployment, run_id = agreed
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:

        def advance(run, phase):
            return list(stub.Advance(pb.AdvanceRequest(run_id=run, phase=phase), timeout=30))

        skip = _code(lambda: advance(run_id, pb.PHASE_MATCH))
        assert skip == grpc.StatusCode.FAILED_PRECONDITION
        unknown = _code(lambda: advance(uuid.uuid4().hex, pb.PHASE_SMASH))
        assert unknown == grpc.StatusCode.FAILED_PRECONDITION
        again = advance(run_id, pb.PHASE_AGREE)
        assert again[-1].finished and again[-1].message == "already done"
        status = stub.Status(pb.StatusRequest(run_id=run_id), timeout=10)
        assert status.completed == pb.PHASE_AGREE
    assert deployment.parties["alice"].log.read_text().count("AGREE started") == 1


def _replace_in_config(deployment, name, old, new):
    path = deployment.parties[name].config
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_different_method_parameters_stop_the_run_with_an_explanation(deploy):
    deployment = deploy(
        size=50,
        configure=lambda d: _replace_in_config(
            d, "bob", 'classifier = "linear"', 'classifier = "rbf"'
        ),
    )
    result = coordinate(deployment)
    assert result.returncode == 1
    assert "agreement digests differ" in result.stderr and "classifier" in result.stderr


def _overlapping_reference(deployment):
    records = deployment.workdir / "data" / "alice.csv"
    with records.open(newline="") as handle:
        firsts = [row["first"] for row in csv.DictReader(handle)][:3]
    reference = deployment.workdir / "overlap.csv"
    text = (deployment.workdir / "data" / "reference.csv").read_text()
    reference.write_text(text + "".join(f"{f},ZZZQX\n" for f in firsts))
    for name in ("alice", "bob"):
        old = str((deployment.workdir / "data" / "reference.csv").resolve())
        _replace_in_config(deployment, name, json.dumps(old), json.dumps(str(reference)))
    return len(set(firsts))


def test_reference_set_sharing_values_with_the_records_is_refused(deploy):
    shared = []
    deployment = deploy(size=50, configure=lambda d: shared.append(_overlapping_reference(d)))
    result = coordinate(deployment)
    assert result.returncode == 1
    assert f"shares {shared[0]} values" in result.stderr or "shares" in result.stderr
    assert "first->first" in result.stderr


def _duplicate_records(deployment):
    path = deployment.workdir / "dup.csv"
    source = (deployment.workdir / "data" / "alice.csv").read_text().splitlines()
    lines = [*source, source[1].replace("A000001", "A999999")]
    path.write_text("\n".join(lines) + "\n")
    old = str((deployment.workdir / "data" / "alice.csv").resolve())
    _replace_in_config(deployment, "alice", json.dumps(old), json.dumps(str(path)))


def test_duplicate_records_are_refused_naming_the_file_and_rows(deploy):
    deployment = deploy(size=50, configure=_duplicate_records)
    result = coordinate(deployment)
    assert result.returncode == 1
    assert "dup.csv" in result.stderr and "rows 2 and 52" in result.stderr
    # bob learns at once that alice could not agree, instead of waiting for her
    assert "alice could not agree" in result.stderr
