"""Fixtures that start real party daemons as separate processes over loopback mutual TLS."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import grpc
import pytest

from pprl.party import local
from pprl.party.config import TlsFiles
from pprl.party.coordination.coordinator import Coordinator
from pprl.party.keys.tls import secure_channel
from pprl.party.local import (
    PARTIES,
    Deployment,
    Privacy,
    prepare,
    start_daemon,
    stop_daemon,
    write_demo_data,
)
from pprl.party.storage.gate_cache import CACHE_DIR
from pprl.protocol.data.synthetic import census_names
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc

SEED = 11
# Without a privacy setting of its own a test checks behaviour, not the gate: the gate still
# runs and reports, on this many sampled records instead of the daemon's default, with this
# many of the census first names and as many surnames, the most frequent, instead of all
# 94,000 (the attack's cost grows with the list).
TRIAL_AUDIT_RECORDS = 40
TRIAL_DICTIONARY_NAMES = 1000

# Each parallel worker hands out daemon ports from its own block, below Linux's ephemeral
# range (32768-60999), so two workers never pick the same port between checking it and a
# daemon binding it (the race of asking the OS for a free port and closing it).
PORT_BLOCK = 500
FIRST_PORT = 20000


# Modules whose tests run for seconds to a minute each in one process (statistical
# experiments, commands started as processes), measured with --durations.
LONG_MODULES = {
    "test_audit_attackers.py",
    "test_audit_command.py",
    "test_assess_reference.py",
    "test_bench_quality.py",
    "test_bloom.py",
    "test_bloom_distances.py",
    "test_cli.py",
    "test_demo_schema.py",
    "test_keyed_noise.py",
    "test_noise_choice.py",
    "test_population_attack.py",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start daemons first, then the long in-process ones: handed out from the
    start, they spread over the parallel workers instead of leaving one running alone at
    the end. The order within each group is kept."""

    def group(item: pytest.Item) -> int:
        if item.get_closest_marker("integration") or item.get_closest_marker("faults"):
            return 0
        return 1 if item.path.name in LONG_MODULES else 2

    items.sort(key=group)


@pytest.fixture(scope="session", autouse=True)
def worker_ports(worker_id: str) -> Iterator[None]:
    """`local.free_port` for this worker: the next free port of its own block."""
    index = 0 if worker_id == "master" else int(worker_id.removeprefix("gw"))
    first = FIRST_PORT + index * PORT_BLOCK
    ports = itertools.cycle(range(first, first + PORT_BLOCK))

    def free_port() -> int:
        for port in itertools.islice(ports, PORT_BLOCK):
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
        raise RuntimeError(f"no free port in {first}-{first + PORT_BLOCK - 1}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local, "free_port", free_port)
        yield


@pytest.fixture(scope="session")
def trial_privacy(tmp_path_factory) -> Privacy:
    """The gate of a test that does not test the gate (TRIAL_AUDIT_RECORDS)."""
    census = census_names()
    names = [
        *census.first.names[:TRIAL_DICTIONARY_NAMES],
        *census.last.names[:TRIAL_DICTIONARY_NAMES],
    ]
    path = tmp_path_factory.mktemp("dictionary") / "names.csv"
    path.write_text("name\n" + "".join(f"{name}\n" for name in names), encoding="utf-8")
    return Privacy(audit_records=TRIAL_AUDIT_RECORDS, dictionary=path)


@pytest.fixture(scope="session")
def gate_cache(tmp_path_factory) -> Path:
    """The gate's dictionary coordinates, shared by this worker's daemons: the files are named
    by a hash of the public inputs they depend on (pprl.party.storage.gate_cache), so a
    daemon that finds one computes the same array it would have computed. Only those arrays
    are shared, never a daemon's noise hint."""
    return tmp_path_factory.mktemp("gate-cache")


def _share_cache(source: Path, target: Path) -> None:
    """Hard-link every cached array of `source` missing from `target` (a daemon replaces a
    cache file by renaming a new one in, never by writing into a linked one)."""
    if not source.is_dir():
        return
    target.mkdir(parents=True, exist_ok=True)
    for path in source.glob("*.npy"):
        if not (target / path.name).exists():
            os.link(path, target / path.name)


@pytest.fixture
def deploy(
    tmp_path_factory, trial_privacy: Privacy, gate_cache: Path
) -> Iterator[Callable[..., Deployment]]:
    """Start two daemons (or with parties=3 three) on generated data; stopped at the end of
    the test."""
    started: list[Deployment] = []

    def make(
        size: int = 300,
        overlap: float = 0.9,
        wire_log: bool = False,
        configure: Callable[[Deployment], None] | None = None,
        privacy: Privacy | None = None,
        parties: int = 2,
    ) -> Deployment:
        workdir = tmp_path_factory.mktemp("deploy")
        data = workdir / "data"
        write_demo_data(data, size, SEED, overlap=overlap, parties=parties)
        names = ("alice", "bob", "carol")[:parties]
        deployment = prepare(
            workdir,
            {name: data / f"{name}.csv" for name in names},
            data / "reference.csv",
            wire_log=wire_log,
            privacy=privacy or trial_privacy,
        )
        if configure is not None:
            configure(deployment)
        started.append(deployment)
        for name in names:
            _share_cache(gate_cache, deployment.parties[name].state_dir / CACHE_DIR)
            start_daemon(deployment, name)
        coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls)
        try:
            coordinator.wait_ready(60)
        finally:
            coordinator.close()
        return deployment

    yield make
    for deployment in started:
        for name in list(deployment.processes):
            stop_daemon(deployment, name)
        for setup in deployment.parties.values():
            _share_cache(setup.state_dir / CACHE_DIR, gate_cache)


def coordinate(deployment: Deployment, *extra: str) -> subprocess.CompletedProcess:
    """`pprl coordinate` as its own process, as an operator would run it."""
    command = coordinate_command(deployment, *extra)
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def coordinate_summary(
    deployment: Deployment, *extra: str
) -> tuple[subprocess.CompletedProcess, dict | None]:
    """`coordinate` with --json: the process, and the summary it wrote (None if none)."""
    path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(path), *extra)
    return result, json.loads(path.read_text()) if path.exists() else None


def coordinate_command(deployment: Deployment, *extra: str) -> list[str]:
    """The `pprl coordinate` command line for a local deployment."""
    tls = deployment.coordinator_tls
    alice, bob = (deployment.parties[n].port for n in PARTIES)
    return [
        sys.executable,
        "-m",
        "pprl",
        "coordinate",
        "--alice",
        f"127.0.0.1:{alice}",
        "--bob",
        f"127.0.0.1:{bob}",
        "--cert",
        str(tls.cert),
        "--key",
        str(tls.key),
        "--ca",
        str(tls.ca),
        *extra,
    ]


class Stubs(NamedTuple):
    """Clients of both services of one daemon, over one channel."""

    peer: rpc.PeerStub
    control: rpc.ControlStub


def stub_as(
    deployment: Deployment, target: str, identity: str, cert_dir: Path | None = None
) -> tuple[Stubs, grpc.Channel]:
    """A client of `target`'s daemon presenting `identity`'s certificate from `cert_dir`.

    It always trusts the deployment's CA, so only the server's judgement of the client is tested.
    """
    cert_dir = cert_dir or deployment.workdir / "certs"
    tls = TlsFiles(
        cert_dir / f"{identity}.pem",
        cert_dir / f"{identity}.key",
        deployment.workdir / "certs" / "ca.pem",
    )
    channel = secure_channel(f"127.0.0.1:{deployment.parties[target].port}", tls, target)
    return Stubs(rpc.PeerStub(channel), rpc.ControlStub(channel)), channel


def tensor_stream(run_id, digest, shape, data, chunk_sha=None):
    """A PushTensor stream of one chunk: a header and the data (its checksum may be forged)."""
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
    return iter([pb.PushTensorRequest(header=header), pb.PushTensorRequest(chunk=chunk)])
