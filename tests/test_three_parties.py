"""Three daemons and a coordinator as separate processes over loopback mutual TLS: a session
links every pair, each pair with its own identities, and refuses what a party list gets wrong."""

from __future__ import annotations

import json
import subprocess
import sys

import grpc
import pytest

from pprl.party import local
from pprl.party.local import Deployment, evaluate, read_truth
from pprl.party.reasons import reason_of
from pprl.party.storage.state import run_dir
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import stub_as

pytestmark = pytest.mark.integration

NAMES = ("alice", "bob", "carol")
# Secondaries first, one-to-one, then the primary with each (FedSim's appendix C).
PAIRS = [["bob", "carol"], ["alice", "bob"], ["alice", "carol"]]


def _coordinate(
    deployment: Deployment, *extra: str, parties: list[str] | None = None
) -> subprocess.CompletedProcess:
    tls = deployment.coordinator_tls
    if parties is None:
        parties = [f"{n}=127.0.0.1:{deployment.parties[n].port}" for n in NAMES]
    command = [sys.executable, "-m", "pprl", "coordinate"]
    for party in parties:
        command += ["--party", party]
    command += ["--cert", str(tls.cert), "--key", str(tls.key), "--ca", str(tls.ca), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def _truth(deployment: Deployment, pair: list[str]) -> set[tuple[str, str]]:
    data = deployment.workdir / "data"
    if pair == ["alice", "bob"]:
        return read_truth(data / "truth.csv")
    return read_truth(data / f"truth_{pair[0]}_{pair[1]}.csv", (pair[0], pair[1]))


def _latest_runs(deployment: Deployment) -> dict[str, set[str]]:
    """The run directories each party holds."""
    return {
        n: {p.name for p in (deployment.parties[n].state_dir / "runs").glob("*")}
        if (deployment.parties[n].state_dir / "runs").is_dir()
        else set()
        for n in NAMES
    }


def test_a_session_links_every_pair_and_resumes(deploy):
    deployment = deploy(size=150, overlap=0.9, parties=3)
    path = deployment.workdir / "first.json"
    first = _coordinate(deployment, "--primary", "alice", "--until", "smash", "--json", str(path))
    assert first.returncode == 0, first.stderr
    stopped = json.loads(path.read_text())
    session = stopped["session_id"]
    # One pair at a time: the first pair's run stops after SMASH, no other pair has begun.
    assert [r["pair"] for r in stopped["pairs"]] == PAIRS[:1]
    assert stopped["linked_pairs"] == 0 and stopped["pair_count"] == 3
    assert "stopped after SMASH of pair 1" in first.stdout

    path = deployment.workdir / "second.json"
    second = _coordinate(deployment, "--primary", "alice", "--json", str(path))
    assert second.returncode == 0, second.stderr
    summary = json.loads(path.read_text())
    assert summary["session_id"] == session  # the unfinished session, resumed
    assert [r["pair"] for r in summary["pairs"]] == PAIRS
    assert summary["linked_pairs"] == 3
    assert [r["run_id"] for r in summary["pairs"]] == [f"{session}-{k}" for k in range(3)]
    assert summary["pairs"][0]["resumed_after"] == "smash"
    for run in summary["pairs"]:
        a, b = run["pair"]
        assert run["parties"][a]["peer"] == b and run["parties"][b]["peer"] == a
        quality = evaluate(deployment, run["run_id"], _truth(deployment, run["pair"]), (a, b))
        # Bob's and Carol's copies each carry their own error: their pair is the hardest, and
        # sealed linkage's default keys (two names' codes agreeing) miss more of it (0.846).
        assert quality["linkage"]["f1"] >= (0.8 if a == "bob" else 0.95), (run["pair"], quality)
        agreed = quality["linkage"]["true_positives"] + quality["linkage"]["false_positives"]
        assert run["parties"][a]["agreed_matches"] == agreed
    # Every party took part in exactly its two pairs' runs.
    runs = _latest_runs(deployment)
    assert runs["alice"] == {f"{session}-1", f"{session}-2"}
    assert runs["bob"] == {f"{session}-0", f"{session}-1"}
    assert runs["carol"] == {f"{session}-0", f"{session}-2"}
    assert "pair 3/3: alice and carol" in second.stdout
    assert "3 of 3 pairs linked" in second.stdout

    # Done: asked again, the session reports its pairs without running them again.
    again = _coordinate(deployment, "--run-id", session)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already linked") == 3

    # A peer of Alice's that is not this run's peer may not read or feed it.
    stub, channel = stub_as(deployment, "alice", "carol")
    with channel, pytest.raises(grpc.RpcError) as caught:
        stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=f"{session}-1"), timeout=10)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason_of(caught.value) == pb.NOT_AUTHORISED
    assert "links this daemon with another party, not with 'carol'" in caught.value.details()


def test_a_party_list_that_repeats_an_identity_is_refused_before_any_call(tmp_path):
    """No daemon listens: the list is refused before the coordinator connects to anyone."""
    deployment_free = [f"127.0.0.1:{local.free_port()}" for _ in range(3)]
    from pprl.party.credentials.certs import make_development_pki

    certs = make_development_pki(tmp_path / "certs", ["coordinator"])
    cert, key = certs["coordinator"]
    command = [sys.executable, "-m", "pprl", "coordinate"]
    command += ["--party", f"alice={deployment_free[0]}", "--party", f"bob={deployment_free[1]}"]
    command += ["--party", f"carol={deployment_free[2]}=bob"]
    command += ["--cert", str(cert), "--key", str(key), "--ca", str(tmp_path / "certs/ca.pem")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "the party list repeats the identity 'bob'" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unreachable_third_party_stops_the_session_before_it_begins(deploy):
    deployment = deploy(size=60, parties=3)
    listed = [f"{n}=127.0.0.1:{deployment.parties[n].port}" for n in ("alice", "bob")]
    listed.append(f"carol=127.0.0.1:{local.free_port()}")  # nothing listens there
    result = _coordinate(deployment, "--wait", "2", parties=listed)
    assert result.returncode != 0
    assert "carol at 127.0.0.1:" in result.stderr
    assert "Traceback" not in result.stderr
    # Nothing begun on the parties that were up.
    assert _latest_runs(deployment) == {n: set() for n in NAMES}
    for name in ("alice", "bob"):
        stub, channel = stub_as(deployment, name, "coordinator")
        with channel:
            assert stub.control.GetStatus(pb.GetStatusRequest(), timeout=10).run_id == ""


def test_a_coordinator_must_name_a_configured_peer(deploy):
    deployment = deploy(size=60, parties=3)
    stub, channel = stub_as(deployment, "alice", "coordinator")
    with channel:
        for peer, expected in (
            ("mallory", "'mallory' is not a peer of 'alice'"),
            ("", "the coordinator must name one"),
        ):
            request = pb.AdvanceRequest(run_id=f"r-{peer or 'none'}", phase=1, peer=peer)
            with pytest.raises(grpc.RpcError) as caught:
                list(stub.control.Advance(request, timeout=10))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason_of(caught.value) == pb.BAD_INPUT
            assert expected in caught.value.details()
            assert "'bob', 'carol'" in caught.value.details()
            assert not run_dir(deployment.parties["alice"].state_dir, request.run_id).exists()
