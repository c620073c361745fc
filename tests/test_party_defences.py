"""A live daemon refuses what it must: strangers, wrong roles, bad tensors, phases out of order,
each with the reason a client can act on."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
import time
import uuid

import grpc
import numpy as np
import pytest

from pprl import __version__
from pprl.party.coordination.coordinator import Coordinator, CoordinatorError
from pprl.party.credentials.certs import make_development_pki
from pprl.party.reasons import reason_of
from pprl.party.storage.artifacts import OWN_MATCHES, OWN_TENSOR, PEER_KEYS_TWICE, PEER_TENSOR
from pprl.party.storage.state import run_dir
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import coordinate, stub_as, tensor_stream

pytestmark = pytest.mark.integration

MAPPING_ENTRIES, REFERENCE_ROWS, RECORDS = 4, 1000, 100


@pytest.fixture
def agreed(deploy):
    """Both daemons have completed AGREE for one run of the reference release, whose tensor
    these tests push; returns (deployment, run_id)."""
    deployment = deploy(size=RECORDS, encoding="reference")
    path = deployment.workdir / "agreed.json"
    result = coordinate(deployment, "--until", "agree", "--json", str(path))
    assert result.returncode == 0, result.stderr
    return deployment, json.loads(path.read_text())["run_id"]


def _error(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def _code(call) -> grpc.StatusCode:
    return _error(call).code()


def test_client_certificate_from_another_ca_is_refused(agreed, tmp_path):
    deployment, _ = agreed
    make_development_pki(tmp_path / "other", ["coordinator", "bob"])
    for identity in ("coordinator", "bob"):
        stub, channel = stub_as(deployment, "alice", identity, tmp_path / "other")
        with channel:
            code = _code(lambda s=stub: s.control.GetStatus(pb.GetStatusRequest(), timeout=10))
            assert code == grpc.StatusCode.UNAVAILABLE
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:
        assert stub.control.GetStatus(pb.GetStatusRequest(), timeout=10).identity == "alice"


def test_valid_certificate_with_the_wrong_identity_is_denied_and_logged(agreed):
    deployment, run_id = agreed
    make_development_pki(deployment.workdir / "certs", ["mallory"])
    calls = {
        "mallory": [
            lambda s: s.control.GetStatus(pb.GetStatusRequest(), timeout=10),
            lambda s: s.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10),
        ],
        "coordinator": [
            lambda s: s.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10),
            lambda s: s.peer.PushMatches(iter([pb.PushMatchesRequest(run_id=run_id)]), timeout=10),
        ],
        "bob": [
            lambda s: s.control.GetStatus(pb.GetStatusRequest(), timeout=10),
            lambda s: list(
                s.control.Advance(pb.AdvanceRequest(run_id=run_id, phase=2), timeout=10)
            ),
        ],
    }
    for identity, attempts in calls.items():
        stub, channel = stub_as(deployment, "alice", identity)
        with channel:
            for attempt in attempts:
                error = _error(lambda a=attempt, s=stub: a(s))
                assert error.code() == grpc.StatusCode.PERMISSION_DENIED
                assert reason_of(error) == pb.NOT_AUTHORISED
    log = deployment.parties["alice"].log.read_text()
    assert "refused /pprl.wire.v1.Control/GetStatus from 'mallory'" in log
    assert "refused /pprl.wire.v1.Control/Advance from 'bob'" in log
    assert "refused /pprl.wire.v1.Peer/GetAgreement from 'coordinator'" in log
    assert "only the coordinator 'coordinator' may call it" in log
    assert "only the peer 'bob' may call it" in log


# Who may call each service of alice's daemon; every other identity is refused.
AUDIENCES = {"Peer": "bob", "Control": "coordinator"}
IDENTITIES = ("alice", "bob", "coordinator", "mallory")


def _empty_call(channel: grpc.Channel, method) -> grpc.RpcError | object:
    """Call `method` (a MethodDescriptor) with an empty request, as its streaming kind needs;
    returns the reply, or the error the daemon answered with."""
    request_type = getattr(pb, method.input_type.name)
    response_type = getattr(pb, method.output_type.name)
    kinds = {
        (False, False): channel.unary_unary,
        (False, True): channel.unary_stream,
        (True, False): channel.stream_unary,
        (True, True): channel.stream_stream,
    }
    call = kinds[(method.client_streaming, method.server_streaming)](
        f"/{method.containing_service.full_name}/{method.name}",
        request_serializer=request_type.SerializeToString,
        response_deserializer=response_type.FromString,
    )
    request = iter([request_type()]) if method.client_streaming else request_type()
    try:
        reply = call(request, timeout=10)
        return list(reply) if method.server_streaming else reply
    except grpc.RpcError as error:
        return error


def test_every_rpc_of_every_service_is_refused_to_every_other_identity(agreed):
    """Enumerates the services in the generated descriptor, so a new RPC is covered as soon
    as it exists, and a new service fails here until it is given an audience."""
    deployment, _ = agreed
    make_development_pki(deployment.workdir / "certs", ["mallory"])
    services = pb.DESCRIPTOR.services_by_name
    assert set(services) == set(AUDIENCES)
    refused = []
    for identity in IDENTITIES:
        _, channel = stub_as(deployment, "alice", identity)
        with channel:
            for name, service in services.items():
                for method in service.methods:
                    path = f"/{service.full_name}/{method.name}"
                    outcome = _empty_call(channel, method)
                    if identity == AUDIENCES[name]:
                        # let through: an empty request fails on its merits, if at all
                        if isinstance(outcome, grpc.RpcError):
                            assert outcome.code() != grpc.StatusCode.PERMISSION_DENIED, path
                            assert reason_of(outcome) != pb.NOT_AUTHORISED, path
                        continue
                    assert isinstance(outcome, grpc.RpcError), f"{path} answered {identity}"
                    assert outcome.code() == grpc.StatusCode.PERMISSION_DENIED, path
                    assert reason_of(outcome) == pb.NOT_AUTHORISED, path
                    refused.append(f"refused {path} from {identity!r}")
    methods = sum(len(s.methods) for s in services.values())
    assert len(refused) == methods * (len(IDENTITIES) - 1)
    log = deployment.parties["alice"].log.read_text()
    missing = [line for line in refused if line not in log]
    assert not missing


def test_the_unversioned_wire_is_gone(agreed):
    """A client of the old, unversioned service finds no such method, even as coordinator."""
    deployment, _ = agreed
    _, channel = stub_as(deployment, "alice", "coordinator")
    with channel:
        status = channel.unary_unary(
            "/pprl.wire.Party/Status",
            request_serializer=pb.GetStatusRequest.SerializeToString,
            response_deserializer=pb.GetStatusResponse.FromString,
        )
        assert _code(lambda: status(pb.GetStatusRequest(), timeout=10)) == (
            grpc.StatusCode.UNIMPLEMENTED
        )


def test_bad_tensor_chunks_are_refused_with_their_reason_and_nothing_is_stored(agreed):
    deployment, run_id = agreed
    stub, channel = stub_as(deployment, "alice", "bob")
    shape = (RECORDS, MAPPING_ENTRIES, REFERENCE_ROWS)
    data = np.random.default_rng(0).integers(0, 12, size=shape, dtype=np.uint8).tobytes()
    alice_run = run_dir(deployment.parties["alice"].state_dir, run_id)
    with channel:
        agreement = stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10)
        # the agreement states the software version that AGREE compares before digests
        assert agreement.software_version == __version__
        digest = agreement.digest
        attempts = {
            "bad checksum": tensor_stream(run_id, digest, shape, data, chunk_sha=b"\0" * 32),
            "wrong shape": tensor_stream(
                run_id, digest, (RECORDS * 2, MAPPING_ENTRIES, REFERENCE_ROWS // 2), data
            ),
            "stale run id": tensor_stream(uuid.uuid4().hex, digest, shape, data),
            "other digest": tensor_stream(run_id, "0" * 64, shape, data),
        }
        reasons = {
            "bad checksum": pb.BAD_CHUNK,
            "wrong shape": pb.BAD_CHUNK,
            "stale run id": pb.UNKNOWN_RUN,
            "other digest": pb.BAD_CHUNK,
        }
        for why, stream in attempts.items():
            error = _error(lambda st=stream: stub.peer.PushTensor(st, timeout=30))
            assert error.code() in {
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.FAILED_PRECONDITION,
            }, why
            assert reason_of(error) == reasons[why], why
            left = [p.name for p in alice_run.iterdir() if PEER_TENSOR in p.name]
            assert left == [], why
        receipt = stub.peer.PushTensor(tensor_stream(run_id, digest, shape, data), timeout=30)
    assert receipt.sha256 == hashlib.sha256(data).digest()
    assert (alice_run / PEER_TENSOR).read_bytes() == data


def test_phases_called_out_of_order_fail_precondition(agreed):
    deployment, run_id = agreed
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:

        def advance(run, phase):
            request = pb.AdvanceRequest(run_id=run, phase=phase)
            return list(stub.control.Advance(request, timeout=30))

        skip = _error(lambda: advance(run_id, pb.PHASE_MATCH))
        assert skip.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(skip) == pb.OUT_OF_ORDER
        unknown = _error(lambda: advance(uuid.uuid4().hex, pb.PHASE_SMASH))
        assert unknown.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(unknown) == pb.UNKNOWN_RUN
        again = advance(run_id, pb.PHASE_AGREE)
        assert again[-1].finished and again[-1].message == "already done"
        status = stub.control.GetStatus(pb.GetStatusRequest(run_id=run_id), timeout=10)
        assert status.completed == pb.PHASE_AGREE
    assert deployment.parties["alice"].log.read_text().count("AGREE started") == 1


def test_match_sets_under_another_digest_or_before_the_receivers_match_are_refused(agreed):
    deployment, run_id = agreed
    pair = pb.MatchedPair(sender_row=0, receiver_row=0, sender_id="B000000")
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        digest = stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10).digest
        early = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=[pair])
        error = _error(lambda: stub.peer.PushMatches(iter([early]), timeout=10))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(error) == pb.OUT_OF_ORDER
        assert "has not completed MATCH here" in error.details()
    result = coordinate(deployment, "--run-id", run_id, "--until", "match")
    assert result.returncode == 0, result.stderr
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        other = pb.PushMatchesRequest(run_id=run_id, digest="0" * 64, pairs=[pair])
        error = _error(lambda: stub.peer.PushMatches(iter([other]), timeout=10))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason_of(error) == pb.DIGEST_MISMATCH


def test_asking_for_the_agreement_again_and_again_does_not_inflate_bytes_sent(agreed):
    deployment, run_id = agreed
    peer, peer_channel = stub_as(deployment, "alice", "bob")
    control, control_channel = stub_as(deployment, "alice", "coordinator")
    with peer_channel, control_channel:

        def sent() -> int:
            request = pb.GetStatusRequest(run_id=run_id)
            return control.control.GetStatus(request, timeout=10).bytes_sent

        peer.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10)
        before = sent()
        for _ in range(20):
            peer.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10)
        assert sent() == before


def _replace_in_config(deployment, name, old, new):
    path = deployment.parties[name].config
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_different_method_parameters_stop_the_run_with_an_explanation(deploy):
    deployment = deploy(
        size=50,
        configure=lambda d: _replace_in_config(
            d, "bob", "[method]\n", '[method]\nclassifier = "logistic"\n'
        ),
    )
    result = coordinate(deployment)
    assert result.returncode == 1
    assert "agreement digests differ" in result.stderr and "classifier" in result.stderr
    assert "alice: FAILED_PRECONDITION [DIGEST_MISMATCH]" in result.stderr
    coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls, io.StringIO())
    try:
        with pytest.raises(CoordinatorError) as caught:
            coordinator.run(new=True)
    finally:
        coordinator.close()
    assert caught.value.reason == "DIGEST_MISMATCH"
    assert "bob: FAILED_PRECONDITION [DIGEST_MISMATCH]" in str(caught.value)


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


def test_reference_set_sharing_values_with_the_records_is_reported_and_the_run_links(deploy):
    """Any public list shares common names with real records: AGREE says how many, per
    mapping entry, and the run goes on."""
    shared = []
    deployment = deploy(size=50, configure=lambda d: shared.append(_overlapping_reference(d)))
    summary_path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(summary_path))
    assert result.returncode == 0, result.stderr
    assert f"first->first {shared[0]}" in result.stdout
    summary = json.loads(summary_path.read_text())
    assert summary["parties"]["alice"]["data"]["reference_shared"]["first->first"] == shared[0]
    assert summary["parties"]["alice"]["agreed_matches"] > 40


def _duplicate_records(deployment, same_id: bool = True):
    """Alice's first record again at the end: under its own id (a duplicated id), or under
    a new one (another person with the same names)."""
    path = deployment.workdir / "dup.csv"
    source = (deployment.workdir / "data" / "alice.csv").read_text().splitlines()
    repeated = source[1] if same_id else source[1].replace("A000001", "A999999")
    path.write_text("\n".join([*source, repeated]) + "\n")
    old = str((deployment.workdir / "data" / "alice.csv").resolve())
    _replace_in_config(deployment, "alice", json.dumps(old), json.dumps(str(path)))


def test_duplicate_ids_are_refused_naming_the_file_and_rows(deploy):
    deployment = deploy(size=50, configure=_duplicate_records)
    result = coordinate(deployment)
    assert result.returncode == 1
    assert "dup.csv" in result.stderr and "rows 2 and 52" in result.stderr
    assert "duplicate ids" in result.stderr
    # The id itself never leaves alice: it is a record's.
    assert "A000001" not in result.stderr
    # bob learns at once that alice could not agree, instead of waiting for her, and why,
    # by reason only: alice's files and rows are for her own operator
    assert "alice: INVALID_ARGUMENT [BAD_INPUT]" in result.stderr
    bob_line = result.stderr.split("bob: ", 1)[1]
    assert "ABORTED [BAD_INPUT]: alice could not agree (BAD_INPUT)" in bob_line
    assert "dup.csv" not in bob_line


def test_records_sharing_every_value_are_linked_and_marked_for_review(deploy):
    """Two people with the same names are normal: both are kept, reported at AGREE, and a
    linked pair involving them is marked in the linkage file."""
    deployment = deploy(size=50, configure=lambda d: _duplicate_records(d, same_id=False))
    result = coordinate(deployment)
    assert result.returncode == 0, result.stderr
    assert "2 records in 1 groups share every compared value" in result.stdout
    (linkage,) = (deployment.workdir / "state" / "alice").rglob("linkage.csv")
    with linkage.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "alice_id",
        "bob_id",
        "alice_score",  # the bucket: without TRAIN's estimate there is no calibration
        "near_fields",
        "other_fields",
        "alice_records_sharing_values",
        "bob_records_sharing_values",
        "review",
    ]
    # Each agreed pair with alice's own classifier's score, as in her own matches (> 0).
    with (linkage.parent / "own_matches.csv").open(newline="") as handle:
        own = {(r["alice_id"], r["bob_id"]): r["score"] for r in csv.DictReader(handle)}
    assert all(own[(row["alice_id"], row["bob_id"])] == row["alice_score"] for row in rows)
    assert all(float(row["alice_score"]) > 0 for row in rows)
    # The end of the run says where the result is, relative to the daemon's state directory.
    where = linkage.relative_to(deployment.workdir / "state" / "alice").as_posix()
    assert f"result: {where} in alice's state directory" in result.stdout
    marked = {row["alice_id"] for row in rows if row["review"] == "records share values"}
    assert marked and marked <= {"A000001", "A999999"}
    assert all(row["alice_records_sharing_values"] == "2" for row in rows if row["review"])


def test_a_peer_sending_your_own_tensor_back_is_refused_before_any_id_is_sent(deploy):
    """The reflection attack: Bob pushes Alice's own release as his. Every row would match
    itself and REVEAL would send him every id; MATCH refuses first (REFLECTED)."""
    deployment = deploy(size=RECORDS, encoding="reference")
    path = deployment.workdir / "trained.json"
    result = coordinate(deployment, "--until", "train", "--json", str(path))
    assert result.returncode == 0, result.stderr
    run_id = json.loads(path.read_text())["run_id"]
    alice_run = run_dir(deployment.parties["alice"].state_dir, run_id)
    own = (alice_run / OWN_TENSOR).read_bytes()
    shape = (RECORDS, MAPPING_ENTRIES, len(own) // (RECORDS * MAPPING_ENTRIES))
    # Shuffled, as a careful attacker would send it: rows in another order.
    rows = np.frombuffer(own, dtype=np.uint8).reshape(RECORDS, -1)
    mirrored = rows[np.random.default_rng(1).permutation(RECORDS)].tobytes()
    peer, peer_channel = stub_as(deployment, "alice", "bob")
    control, control_channel = stub_as(deployment, "alice", "coordinator")
    with peer_channel, control_channel:
        digest = peer.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10).digest
        peer.peer.PushTensor(tensor_stream(run_id, digest, shape, mirrored), timeout=30)

        def advance(phase):
            request = pb.AdvanceRequest(run_id=run_id, phase=phase, peer="bob")
            return list(control.control.Advance(request, timeout=60))

        advance(pb.PHASE_EXCHANGE)
        error = _error(lambda: advance(pb.PHASE_MATCH))
    assert reason_of(error) == pb.REFLECTED, error.details()
    assert "repeats this party's own release in 100% of its rows" in error.details()
    assert not (alice_run / OWN_MATCHES).exists()


def test_calls_that_never_send_a_request_from_a_stranger_hold_no_worker(agreed):
    """Any certificate of the CA could open unary calls that send headers and never a request
    and so hold every worker thread (eight): the coordinator's status calls then timed out.
    Now a stranger's call is refused as it starts, before any request is read."""
    deployment, run_id = agreed
    make_development_pki(deployment.workdir / "certs", ["mallory"])
    stop = threading.Event()

    def silent():
        """A request stream that sends nothing until the test ends."""
        stop.wait(60)
        yield from ()

    _, channel = stub_as(deployment, "alice", "mallory")
    held = []
    for path in ("/pprl.wire.v1.Control/GetStatus", "/pprl.wire.v1.Peer/GetAgreement") * 8:
        call = channel.stream_unary(path, request_serializer=lambda m: m)
        held.append(call.future(silent(), timeout=60))
    try:
        stub, coordinator = stub_as(deployment, "alice", "coordinator")
        with coordinator:
            began = time.monotonic()
            status = stub.control.GetStatus(pb.GetStatusRequest(run_id=run_id), timeout=10)
            assert status.run_id == run_id and time.monotonic() - began < 5
        refused = [call.exception() for call in held]
        assert all(reason_of(error) == pb.NOT_AUTHORISED for error in refused)
    finally:
        stop.set()
        channel.close()


def test_a_bad_cell_is_named_by_file_row_and_field_never_by_its_value(deploy):
    """A cell its kind cannot read stops AGREE; what reaches the coordinator names where it
    is and what is wrong, never the value (a record's)."""

    def bad_date(deployment) -> None:
        path = deployment.workdir / "data" / "alice.csv"
        lines = path.read_text().splitlines()
        lines[0] += ",dob"
        lines[1:] = [line + ",1970-01-01" for line in lines[1:]]
        lines[5] = lines[5].rsplit(",", 1)[0] + ",ZORBLAT 12/31/1970"
        path.write_text("\n".join(lines) + "\n")
        for name in ("alice", "bob"):
            text = deployment.parties[name].config.read_text()
            if name == "alice":
                text = text.replace(
                    "[records]\n",
                    '[records]\nattributes = ["first", "middle", "last", "dob"]\n'
                    'kinds = { dob = "date" }\n',
                )
            deployment.parties[name].config.write_text(text)

    deployment = deploy(size=50, configure=bad_date)
    result = coordinate(deployment)
    assert result.returncode == 1
    assert "alice.csv" in result.stderr and "row 6" in result.stderr
    assert "'dob'" in result.stderr and "is not a date" in result.stderr
    assert "ZORBLAT" not in result.stderr


@pytest.mark.parametrize(
    ("limit", "said"),
    [
        # Matching holds the peer's rows in memory.
        ("max_peer_records = 50", ["[limits] max_peer_records"]),
        # Each record a peer declares is a guess about your file it may test: each party
        # states what it accepts, so that the larger one stops too, naming the setting.
        (
            "peer_records_ratio = 0.5",
            [
                "peer_records_ratio 0.5",
                "alice accepts at most 50 records from this party, which links 100",
                "PEER_TOO_LARGE",
            ],
        ),
    ],
    ids=["memory", "ratio"],
)
def test_a_peer_with_more_records_than_this_daemon_accepts_stops_agree(deploy, limit, said):
    """[limits] max_peer_records and peer_records_ratio (by default twice this party's
    records) are checked against the count the peer states at AGREE, before anything is sent."""

    def configure(deployment) -> None:
        _replace_in_config(deployment, "alice", "[privacy]", f"[limits]\n{limit}\n[privacy]")

    deployment = deploy(size=RECORDS, configure=configure)
    result = coordinate(deployment)
    assert result.returncode != 0
    assert "bob links 100 records, more than this daemon accepts (50" in result.stderr
    for words in said:
        assert words in result.stderr
    for name in ("alice", "bob"):
        state = deployment.parties[name].state_dir
        assert not list(state.rglob(PEER_TENSOR)) and not list(state.rglob(PEER_KEYS_TWICE))
