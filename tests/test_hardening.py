"""What a hostile peer, a careless operator or a bad network did to a daemon, reproduced
against live daemons over loopback, and what the daemon does about it now."""

from __future__ import annotations

import hashlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pprl.party.config import PeerEndpoint
from pprl.party.credentials.tls import MAX_MESSAGE_BYTES
from pprl.party.local import start_daemon, stop_daemon
from pprl.party.peering.peer import PeerClient, PeerError
from pprl.party.reasons import reason_of
from pprl.party.storage.artifacts import PEER_MATCHES, PEER_TENSOR
from pprl.party.storage.state import run_dir
from pprl.party.tls_files import TlsFiles
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import coordinate, coordinate_command, stub_as, tensor_stream

pytestmark = pytest.mark.integration

RECORDS = 100


def _error(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def _summary(deployment, *extra: str) -> dict:
    path = deployment.workdir / "summary.json"
    path.unlink(missing_ok=True)
    result = coordinate(deployment, *extra, "--json", str(path))
    assert result.returncode == 0, result.stderr
    return json.loads(path.read_text())


def _set_in_config(deployment, name: str, table: str, line: str) -> None:
    path = deployment.parties[name].config
    text = path.read_text()
    assert f"[{table}]\n" in text
    path.write_text(text.replace(f"[{table}]\n", f"[{table}]\n{line}\n", 1))


def _linkage(deployment, run_id: str) -> str:
    return (run_dir(deployment.parties["alice"].state_dir, run_id) / "linkage.csv").read_text()


def test_a_run_id_that_is_a_path_or_holds_nul_is_refused_and_nothing_is_written(deploy, tmp_path):
    deployment = deploy(size=RECORDS)
    target = tmp_path / "elsewhere"
    result = coordinate(deployment, "--run-id", str(target))
    assert result.returncode == 2
    assert "invalid run id" in result.stderr
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:
        for bad in (str(target), "../escape", "a\x00b", ""):
            request = pb.AdvanceRequest(run_id=bad, phase=pb.PHASE_AGREE)
            error = _error(lambda r=request: list(stub.control.Advance(r, timeout=10)))
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, repr(bad)
            assert reason_of(error) == pb.BAD_INPUT, repr(bad)
        status = stub.control.GetStatus(pb.GetStatusRequest(), timeout=10)
    assert not target.exists()
    assert status.run_id == ""  # no run was begun, so the next coordinator starts afresh
    assert _summary(deployment)["parties"]["alice"]["agreed_matches"] > 0


def test_a_second_coordinator_cannot_take_the_open_run_and_abandon_frees_the_daemons(deploy):
    deployment = deploy(size=RECORDS)
    first = _summary(deployment, "--until", "smash")
    run_id = first["run_id"]
    second = coordinate(deployment, "--new")
    assert second.returncode != 0
    assert "RUN_OPEN" in second.stderr and f"--abandon {run_id}" in second.stderr
    # the refused run left no trace: the first run resumes and finishes
    resumed = _summary(deployment)
    assert resumed["run_id"] == run_id and resumed["resumed_after"] == "smash"
    assert resumed["parties"]["alice"]["agreed_matches"] > 0
    # a run abandoned half-way frees the daemons for a new one, and stays abandoned
    third = _summary(deployment, "--new", "--until", "train")["run_id"]
    gone = coordinate(deployment, "--abandon", third)
    assert gone.returncode == 0, gone.stderr
    assert f"run {third}: alice: abandoned after TRAIN" in gone.stdout
    again = coordinate(deployment, "--run-id", third)
    assert again.returncode != 0 and "ABANDONED" in again.stderr
    fourth = _summary(deployment)
    assert fourth["run_id"] not in {run_id, third} and fourth["resumed_after"] is None


def test_two_coordinators_started_at_once_do_not_both_drive_the_run(deploy):
    """Every coordinator has the one identity; before driver ids, two started at the same
    instant both drove one run and both exited 0. Now at most one drives it; the other
    stops naming why, and the daemons are free again for the next coordinator."""
    deployment = deploy(size=RECORDS)
    commands = [
        coordinate_command(deployment, "--json", str(deployment.workdir / f"s{i}.json"))
        for i in range(2)
    ]
    running = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    finished = [p.communicate(timeout=180) for p in running]
    codes = [p.returncode for p in running]
    assert codes.count(0) <= 1, finished
    for code, (_, stderr) in zip(codes, finished, strict=True):
        if code != 0:
            assert "OTHER_COORDINATOR" in stderr or "RUN_OPEN" in stderr, stderr
    after = _summary(deployment)
    assert after["parties"]["alice"]["agreed_matches"] > 0


def test_a_coordinators_hold_on_a_run_makes_another_wait_until_released(deploy):
    """The hold itself, by driver id on one daemon: between one driver's calls another
    driver is told to wait (BUSY, as for a running phase) and cannot renew the hold; once
    the holder releases it, the other is let in."""
    deployment = deploy(size=RECORDS)
    run_id = _summary(deployment, "--until", "agree")["run_id"]
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:

        def advance(phase: int, driver: str) -> list:
            request = pb.AdvanceRequest(run_id=run_id, phase=phase, driver=driver)
            return list(stub.control.Advance(request, timeout=10))

        def hold(driver: str, release: bool = False) -> bool:
            request = pb.HoldRequest(run_id=run_id, driver=driver, release=release)
            return stub.control.Hold(request, timeout=10).held

        assert advance(pb.PHASE_AGREE, "first")[-1].message == "already done"
        error = _error(lambda: advance(pb.PHASE_AGREE, "second"))
        assert reason_of(error) == pb.BUSY
        assert "held by another coordinator between its calls" in error.details()
        assert hold("first") and not hold("second")
        assert not hold("first", release=True)
        assert advance(pb.PHASE_AGREE, "second")[-1].message == "already done"
        assert not hold("first") and hold("second")


def test_a_second_daemon_on_a_taken_port_or_state_directory_exits_with_the_reason(deploy):
    deployment = deploy(size=RECORDS)
    config = deployment.parties["alice"].config
    elsewhere = config.with_name("alice-elsewhere.toml")
    party = deployment.parties["alice"]
    elsewhere.write_text(
        config.read_text().replace(str(party.state_dir), str(party.state_dir) + "-elsewhere")
    )

    def serve(path):
        command = [sys.executable, "-m", "pprl", "party", "serve", "--config", str(path)]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    # The same state directory, on a port of its own: two daemons would mix their runs.
    same_state = config.with_name("alice-same-state.toml")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    same_state.write_text(
        config.read_text().replace(f"127.0.0.1:{party.port}", f"127.0.0.1:{port}", 1)
    )
    second = serve(same_state)
    assert second.returncode == 2
    assert "another daemon is using this state directory" in second.stderr
    # Its own state directory, the same port, under any name of this machine's loopback.
    second = serve(elsewhere)
    assert second.returncode == 2
    assert "cannot listen on 127.0.0.1:" in second.stderr and "port is taken" in second.stderr
    listen = f"127.0.0.1:{party.port}"
    for other in (f"localhost:{party.port}", f"[::1]:{party.port}"):
        elsewhere.write_text(elsewhere.read_text().replace(listen, other))
        second = serve(elsewhere)
        assert second.returncode == 2, other
        assert f"answers on 127.0.0.1:{party.port}" in second.stderr, second.stderr
        listen = other
    assert _summary(deployment)["parties"]["bob"]["agreed_matches"] > 0


def test_streams_that_go_quiet_time_out_and_do_not_starve_the_coordinator(deploy):
    deployment = deploy(
        size=RECORDS,
        configure=lambda d: _set_in_config(d, "alice", "peer", "timeout_seconds = 3"),
        encoding="reference",
    )
    run_id = _summary(deployment, "--until", "agree")["run_id"]
    stub, channel = stub_as(deployment, "alice", "bob")
    release = threading.Event()
    with channel:
        digest = stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10).digest

        shape = [RECORDS, 4, 1000]
        total = RECORDS * 4 * 1000

        def header_then_silence():
            header = pb.TensorHeader(
                run_id=run_id,
                digest=digest,
                shape=shape,
                dtype="uint8",
                total_bytes=total,
                chunk_count=1,
                sha256=hashlib.sha256(bytes(total)).digest(),
            )
            yield pb.PushTensorRequest(header=header)
            release.wait(60)

        outcomes: list[grpc.RpcError] = []

        def push() -> None:
            try:
                stub.peer.PushTensor(header_then_silence(), timeout=60)
            except grpc.RpcError as error:
                outcomes.append(error)

        began = time.monotonic()
        pushers = [threading.Thread(target=push) for _ in range(8)]
        for thread in pushers:
            thread.start()
        time.sleep(1)
        control, control_channel = stub_as(deployment, "alice", "coordinator")
        with control_channel:
            status = control.control.GetStatus(pb.GetStatusRequest(), timeout=5)
        assert status.identity == "alice"
        for thread in pushers:
            thread.join(30)
        release.set()
    assert time.monotonic() - began < 30
    reasons = sorted(reason_of(error) for error in outcomes)
    assert len(reasons) == 8
    assert reasons.count(pb.TIMED_OUT) >= 1 and set(reasons) <= {pb.TIMED_OUT, pb.BUSY}
    assert not (run_dir(deployment.parties["alice"].state_dir, run_id) / PEER_TENSOR).exists()


# Peer methods a hostile peer may open without ever sending their (first) message.
_UNARY_PEER = (
    ("ResolveSlots", pb.ResolveSlotsRequest, pb.ResolveSlotsResponse),
    ("JoinCounts", pb.JoinCountsRequest, pb.JoinCountsResponse),
    ("GetAgreement", pb.GetAgreementRequest, pb.GetAgreementResponse),
)


def test_unary_calls_that_never_send_their_message_do_not_starve_the_coordinator(deploy):
    """Each of these calls holds a server worker while it waits for its message; the peer
    opens more of them than the Peer service has workers, and Control and health still
    answer at once."""
    deployment = deploy(size=RECORDS, encoding="reference")
    stub, channel = stub_as(deployment, "alice", "bob")
    release = threading.Event()

    def nothing_until_released():
        # A unary call whose request iterator yields nothing: headers, then silence.
        release.wait(60)
        yield from ()

    with channel:
        held = []
        for k in range(10):
            name, request, response = _UNARY_PEER[k % len(_UNARY_PEER)]
            call = channel.stream_unary(
                f"/pprl.wire.v1.Peer/{name}",
                request_serializer=request.SerializeToString,
                response_deserializer=response.FromString,
            )
            held.append(call.future(nothing_until_released(), timeout=60))
        try:
            time.sleep(1)  # every stalled call reaches alice and takes a Peer worker
            # They hold every Peer worker: a Peer call with its message waits for one.
            waiting = _error(lambda: stub.peer.GetAgreement(pb.GetAgreementRequest(), timeout=2))
            assert waiting.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            control, control_channel = stub_as(deployment, "alice", "coordinator")
            with control_channel:
                began = time.monotonic()
                status = control.control.GetStatus(pb.GetStatusRequest(), timeout=5)
                answered = time.monotonic() - began
                health_stub = health_pb2_grpc.HealthStub(control_channel)
                check = health_stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
            assert not any(future.done() for future in held), "the stalled calls ended early"
        finally:
            for future in held:
                future.cancel()
            release.set()
    assert status.identity == "alice"
    assert answered < 5
    assert check.status == health_pb2.HealthCheckResponse.SERVING


def test_a_stopped_peer_fails_the_phase_instead_of_hanging_and_the_run_resumes(deploy):
    deployment = deploy(
        size=RECORDS, configure=lambda d: _set_in_config(d, "alice", "peer", "timeout_seconds = 5")
    )
    run_id = _summary(deployment, "--until", "train")["run_id"]
    bob = deployment.processes["bob"]
    bob.send_signal(signal.SIGSTOP)
    try:
        began = time.monotonic()
        stuck = coordinate(deployment, "--wait", "5")
        assert time.monotonic() - began < 60
        assert stuck.returncode != 0 and "bob at 127.0.0.1:" in stuck.stderr
        # alice's EXCHANGE pushes to the stopped bob: it fails within its deadline
        stub, channel = stub_as(deployment, "alice", "coordinator")
        with channel:
            request = pb.AdvanceRequest(run_id=run_id, phase=pb.PHASE_EXCHANGE)
            began = time.monotonic()
            error = _error(lambda: list(stub.control.Advance(request, timeout=120)))
            waited = time.monotonic() - began
    finally:
        bob.send_signal(signal.SIGCONT)
    assert reason_of(error) in {pb.PEER_UNAVAILABLE, pb.TIMED_OUT}, error.details()
    assert "EXCHANGE failed" in error.details() and "bob" in error.details()
    assert waited < 60, f"waited {waited:.0f} s for a stopped peer"
    finished = _summary(deployment)
    assert finished["run_id"] == run_id and finished["resumed_after"] == "train"
    assert finished["parties"]["alice"]["agreed_matches"] > 0


def _client_to_bob(deployment, timeout: float) -> PeerClient:
    """alice's client of bob's peer service, as her daemon makes it."""
    certs = deployment.workdir / "certs"
    tls = TlsFiles(certs / "alice.pem", certs / "alice.key", certs / "ca.pem")
    address = f"127.0.0.1:{deployment.parties['bob'].port}"
    return PeerClient(PeerEndpoint("bob", address, timeout), tls)


def _blind_one_key(client: PeerClient) -> tuple[PeerError, float]:
    began = time.monotonic()
    with pytest.raises(PeerError) as refused:
        client.blind_keys("no-such-run", "0" * 64, np.ones(1, dtype=np.int64), bytes(32))
    return refused.value, time.monotonic() - began


def test_a_stream_waits_for_a_peer_restarting_and_fails_clearly_for_one_that_stays_down(deploy):
    """A channel that saw its peer down fails every call at once until its reconnect backoff
    ends, and a stream cannot simply be sent again: so a stream (here the keys' blinding)
    first waits, up to [peer] timeout_seconds, until the peer is reached."""
    deployment = deploy(size=RECORDS)
    stop_daemon(deployment, "bob")
    client = _client_to_bob(deployment, timeout=2)
    try:
        error, waited = _blind_one_key(client)
    finally:
        client.close()
    assert error.reason == pb.PEER_UNAVAILABLE and "not reachable within 2 s" in str(error)
    assert 2 <= waited < 10
    client = _client_to_bob(deployment, timeout=60)
    restart = threading.Timer(3.0, start_daemon, (deployment, "bob"))
    restart.start()
    try:
        error, waited = _blind_one_key(client)
    finally:
        restart.join()
        client.close()
    # bob answered: the run is not his (before, the call failed at once, bob unreachable)
    assert error.reason == pb.UNKNOWN_RUN, error
    assert 3 <= waited < 60
    # A message over gRPC's size limit is named as that, not as a peer gone away.
    client = _client_to_bob(deployment, timeout=10)
    try:
        with pytest.raises(PeerError) as refused:
            client.agreement("r" * MAX_MESSAGE_BYTES, wait_seconds=1)
    finally:
        client.close()
    assert refused.value.reason == pb.MESSAGE_TOO_LARGE, refused.value
    assert "limit of 5 MiB" in str(refused.value)


def _push_tensor(stub, run_id, digest, data, shape):
    return stub.peer.PushTensor(tensor_stream(run_id, digest, shape, data), timeout=30)


def test_what_the_peer_sent_cannot_be_replaced_and_its_matches_must_be_one_to_one(deploy):
    deployment = deploy(size=RECORDS, encoding="reference")
    run_id = _summary(deployment, "--until", "train")["run_id"]
    alice_run = run_dir(deployment.parties["alice"].state_dir, run_id)
    shape = (RECORDS, 4, 1000)
    rng = np.random.default_rng(0)
    data = rng.integers(0, 12, size=shape, dtype=np.uint8).tobytes()
    other = rng.integers(0, 12, size=shape, dtype=np.uint8).tobytes()
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        digest = stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10).digest
        empty = _error(lambda: stub.peer.PushTensor(iter([]), timeout=10))
        assert reason_of(empty) == pb.BAD_CHUNK and "tensor header" in empty.details()
        _push_tensor(stub, run_id, digest, data, shape)
        # the same tensor again (a resumed EXCHANGE) is confirmed; another one is refused
        again = _push_tensor(stub, run_id, digest, data, shape)
        assert again.sha256 == hashlib.sha256(data).digest()
        error = _error(lambda: _push_tensor(stub, run_id, digest, other, shape))
        assert error.code() == grpc.StatusCode.ALREADY_EXISTS
        assert reason_of(error) == pb.ALREADY_RECEIVED
        assert (alice_run / PEER_TENSOR).read_bytes() == data
    # matches arrive only once alice has matched (on the tensor "bob" pushed above)
    control, control_channel = stub_as(deployment, "alice", "coordinator")
    with control_channel:
        for phase in (pb.PHASE_EXCHANGE, pb.PHASE_MATCH):
            request = pb.AdvanceRequest(run_id=run_id, phase=phase, peer="bob")
            assert list(control.control.Advance(request, timeout=120))[-1].finished
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        pairs = [pb.MatchedPair(sender_row=i, receiver_row=i, sender_id=f"B{i}") for i in (0, 1)]
        twice = [*pairs, pb.MatchedPair(sender_row=2, receiver_row=1, sender_id="B2")]
        error = _error(
            lambda: stub.peer.PushMatches(
                iter([pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=twice)]),
                timeout=10,
            )
        )
        assert reason_of(error) == pb.BAD_MATCHES and "one-to-one" in error.details()
        # Ids that would corrupt or deceive the result files: refused, and never repeated.
        hostile = {
            "empty": pb.MatchedPair(sender_row=2, receiver_row=2, sender_id=""),
            "right-to-left override": pb.MatchedPair(
                sender_row=2, receiver_row=2, sender_id="B\u202egpj.exe"
            ),
            "NUL": pb.MatchedPair(sender_row=2, receiver_row=2, sender_id="B\x002"),
            "huge": pb.MatchedPair(sender_row=2, receiver_row=2, sender_id="B" * 100_000),
            "an id of two rows": pb.MatchedPair(sender_row=2, receiver_row=2, sender_id="B1"),
            "sharing": pb.MatchedPair(
                sender_row=2, receiver_row=2, sender_id="B2", sender_sharing=4_000_000_000
            ),
        }
        for what, bad in hostile.items():
            request = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=[*pairs, bad])
            error = _error(lambda r=request: stub.peer.PushMatches(iter([r]), timeout=10))
            assert reason_of(error) == pb.BAD_MATCHES, what
            assert bad.sender_id[:20] not in error.details() or not bad.sender_id, what
        # A stream that names another digest or band midway, or holds more pairs than the
        # receiver has rows, is refused before anything is stored.
        opening = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=pairs[:1])
        rest = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=pairs[1:])
        streams = {
            "another digest": [opening, pb.PushMatchesRequest(run_id=run_id, digest="0" * 64)],
            "another review band": [
                opening,
                pb.PushMatchesRequest(run_id=run_id, digest=digest, review_band=1),
            ],
            "more than": [opening, *[rest] * RECORDS],
            "held no message": [],
        }
        for what, stream in streams.items():
            error = _error(lambda m=stream: stub.peer.PushMatches(iter(m), timeout=10))
            assert reason_of(error) == pb.BAD_MATCHES and what in error.details(), what
        # The pairs in two messages are the set in one.
        split = [pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=[p]) for p in pairs]
        assert stub.peer.PushMatches(iter(split), timeout=10).pairs_received == 2
        first = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=pairs)
        assert stub.peer.PushMatches(iter([first]), timeout=10).pairs_received == 2
        assert stub.peer.PushMatches(iter([first]), timeout=10).pairs_received == 2
        changed = pb.PushMatchesRequest(run_id=run_id, digest=digest, pairs=pairs[:1])
        error = _error(lambda: stub.peer.PushMatches(iter([changed]), timeout=10))
        assert reason_of(error) == pb.ALREADY_RECEIVED
    stored = json.loads((alice_run / PEER_MATCHES).read_text())["pairs"]
    assert [row[:3] for row in stored] == [[0, 0, "B0"], [1, 1, "B1"]]


def test_temporary_files_a_kill_left_behind_are_removed_at_start(deploy):
    deployment = deploy(size=RECORDS)
    run_id = _summary(deployment, "--until", "agree")["run_id"]
    leftover = run_dir(deployment.parties["bob"].state_dir, run_id) / ".peer_tensor.u8.x1.tmp"
    leftover.write_bytes(b"half a tensor")
    stop_daemon(deployment, "bob", signal.SIGKILL)
    start_daemon(deployment, "bob")
    finished = _summary(deployment)
    assert finished["run_id"] == run_id
    assert not leftover.exists()
    assert _linkage(deployment, run_id).count("\n") > 1


def _signals(proc: Path, field: str) -> set[int]:
    """The signals a /proc status line (SigBlk, SigCgt: a hexadecimal mask) holds."""
    for line in (proc / "status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            mask = int(line.split()[1], 16)
            return {number + 1 for number in range(64) if mask >> number & 1}
    raise AssertionError(f"no {field} in {proc}/status")


def test_a_daemon_stops_on_sigterm_however_many_arrive(deploy):
    """A burst of SIGTERMs (a shell's `kill %1` beside a supervisor's, say) stops the daemon
    like one: a Python handler that set an Event once deadlocked the daemon when a second
    signal landed while it woke from the first (a daemon left running by the README's
    walk-through). Each burst right after the daemon starts listening, three times."""
    deployment = deploy(size=RECORDS)
    log = deployment.parties["alice"].log
    for _ in range(3):
        stop_daemon(deployment, "alice")
        listening = log.read_text(encoding="utf-8").count("listening on")
        process = start_daemon(deployment, "alice")
        deadline = time.monotonic() + 60
        while log.read_text(encoding="utf-8").count("listening on") == listening:
            assert process.poll() is None and time.monotonic() < deadline, "never listened"
            time.sleep(0.05)
        # No thread takes a stop signal asynchronously: every other thread blocks them, and
        # the main thread waits for them in sigwait (which unblocks them while it waits),
        # with no Python handler to deadlock.
        for task in Path(f"/proc/{process.pid}/task").iterdir():
            if task.name != str(process.pid):
                assert {signal.SIGTERM, signal.SIGINT} <= _signals(task, "SigBlk"), task
        # (Python's own SIGINT handler stays installed, never run while the signal is
        # blocked and waited for.)
        assert signal.SIGTERM not in _signals(Path(f"/proc/{process.pid}"), "SigCgt")
        for _ in range(200):
            process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        deployment.processes.pop("alice", None)
    assert log.read_text(encoding="utf-8").count("alice shutting down") >= 3
