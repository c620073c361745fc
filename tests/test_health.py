"""What operations run against a daemon: the standard gRPC health service, `pprl party
health`, and the JSON log lines of `pprl party serve --log-format json`."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pprl.cli.party import JsonLines
from pprl.party.credentials.certs import make_development_pki
from pprl.party.local import stop_daemon
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import stub_as

pytestmark = pytest.mark.integration


def _health(deployment, name: str) -> subprocess.CompletedProcess:
    config = str(deployment.parties[name].config)
    command = [sys.executable, "-m", "pprl", "party", "health", "--config", config]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_the_health_service_answers_any_identity_of_the_ca_and_nothing_else(deploy):
    deployment = deploy(size=60)
    make_development_pki(deployment.workdir / "certs", ["monitor"])  # the deployment's CA
    for identity in ("coordinator", "bob", "monitor"):
        _, channel = stub_as(deployment, "alice", identity)
        with channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for service in ("", "pprl.wire.v1.Peer", "pprl.wire.v1.Control"):
                request = health_pb2.HealthCheckRequest(service=service)
                reply = stub.Check(request, timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING, identity
            unknown = health_pb2.HealthCheckRequest(service="no.such.Service")
            with pytest.raises(grpc.RpcError) as caught:
                stub.Check(unknown, timeout=10)
            assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    # Health is open to the CA's identities; the other services stay closed to them.
    stubs, channel = stub_as(deployment, "alice", "monitor")
    with channel, pytest.raises(grpc.RpcError) as caught:
        stubs.control.GetStatus(pb.GetStatusRequest(), timeout=10)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_pprl_party_health_exits_0_while_the_daemon_serves_and_1_when_it_does_not(deploy):
    deployment = deploy(size=60)
    serving = _health(deployment, "alice")
    assert serving.returncode == 0, serving.stderr
    port = deployment.parties["alice"].port
    assert serving.stdout.strip() == f"alice at 127.0.0.1:{port}: SERVING"
    stop_daemon(deployment, "alice")
    gone = _health(deployment, "alice")
    assert gone.returncode == 1
    assert f"alice at 127.0.0.1:{port}: no answer (UNAVAILABLE" in gone.stderr
    assert "Traceback" not in gone.stderr


def test_json_log_lines_hold_time_party_level_and_message() -> None:
    formatter = JsonLines("alice")
    record = logging.LogRecord(
        "pprl.party", logging.WARNING, __file__, 1, "run %s: %s", ("r", "x"), None
    )
    line = json.loads(formatter.format(record))
    assert line["party"] == "alice" and line["level"] == "warning"
    assert line["message"] == "run r: x" and line["logger"] == "pprl.party"
    assert line["time"].endswith("+00:00")


def _check_probe(config) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pprl", "party", "check", "--probe", "--config", str(config)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_party_check_probe_dials_the_peer_and_the_scheduler(deploy, tmp_path):
    """Before, `pprl party check` passed a configuration whose peer and scheduler were not
    there; --probe dials them."""
    # The reference release: a scheduler runs its blocks (sealed scoring runs in the daemon).
    deployment = deploy(size=60, encoding="reference")
    config = deployment.parties["alice"].config
    bob = deployment.parties["bob"].port
    fine = _check_probe(config)
    assert fine.returncode == 0, fine.stderr
    assert f"peer 'bob' at 127.0.0.1:{bob} answers (SERVING, certificate verified)" in fine.stdout
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    nowhere = closed.getsockname()[1]
    closed.close()
    text = config.read_text()
    elsewhere = tmp_path / "alice.toml"
    elsewhere.write_text(
        text.replace(f'address = "127.0.0.1:{bob}"', f'address = "127.0.0.1:{nowhere}"')
        + f'\n[matching]\nscheduler = "tcp://127.0.0.1:{nowhere}"\n'
    )
    broken = _check_probe(elsewhere)  # the deployment writes absolute paths
    assert broken.returncode == 1
    assert f"peer 'bob' at 127.0.0.1:{nowhere}: no answer (UNAVAILABLE" in broken.stderr
    assert f"Dask scheduler at tcp://127.0.0.1:{nowhere}: cannot connect" in broken.stderr
    assert "Traceback" not in broken.stderr
