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
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import grpc
import pytest

from pprl.party import local
from pprl.party.coordination.coordinator import Coordinator
from pprl.party.credentials.tls import secure_channel
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
from pprl.party.tls_files import TlsFiles
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


# Seconds the slow tests of a module (those that start daemons, or all of a LONG_MODULES one)
# take together on one core, roughly, as measured with --durations: only how they are split
# between the parallel workers depends on these. A slow module missing here counts
# SLOW_TEST_SECONDS a test.
SLOW_SECONDS = {
    # tests that start daemons
    "test_faults.py": 110,
    "test_sealed_faults.py": 60,
    "test_privacy_gate.py": 65,
    "test_hardening.py": 50,
    "test_party_defences.py": 45,
    "test_bloom_daemons.py": 38,
    "test_integration.py": 28,
    "test_sealed_daemons.py": 25,
    "test_bench_scale.py": 15,
    "test_three_parties.py": 14,
    "test_soft_links_daemons.py": 13,
    "test_pipeline.py": 10,
    "test_walkthrough.py": 120,
    # LONG_MODULES
    "test_audit_command.py": 26,
    "test_demo_schema.py": 25,
    "test_bloom_distances.py": 24,
    "test_audit_attackers.py": 20,
    "test_bloom.py": 19,
    "test_cli.py": 15,
    "test_noise_choice.py": 15,
    "test_population_attack.py": 9,
    "test_assess_reference.py": 8,
    "test_bench_quality.py": 7,
    "test_keyed_noise.py": 6,
}
SLOW_TEST_SECONDS = 5


def _group(item: pytest.Item) -> int:
    """0: starts daemons; 1: in LONG_MODULES; 2: quick."""
    if item.get_closest_marker("integration") or item.get_closest_marker("faults"):
        return 0
    return 1 if item.path.name in LONG_MODULES else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start daemons first, then the long in-process ones, then the rest (the order
    within each group is kept); under xdist, the slow ones dealt out to the workers' first
    batches (_deal)."""
    items.sort(key=_group)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        items[:] = _deal(items, workers)


def _deal(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The order in which `--dist load` gives each worker an even share of the slow tests.

    That scheduler first sends each worker a batch of len(items) // workers // 4 consecutive
    tests, and later ones only to workers that have nearly run out. Sorted slow-first, the
    first worker's batch held every test that starts daemons and ran alone for minutes after
    the others had finished. Here each module's slow tests stay together (a module fixture is
    then built once) and go, heaviest module first, to the batch with the fewest SLOW_SECONDS
    so far; quick tests fill each batch up, and the rest follow as before."""
    if len(items) < 2 * workers:  # then the scheduler sends them round-robin
        return items
    batch = max(len(items) // workers // 4, 2)
    slow: dict[tuple[Path, int], list[pytest.Item]] = {}
    quick: list[pytest.Item] = []
    for item in items:
        if _group(item) < 2:
            slow.setdefault((item.path, _group(item)), []).append(item)
        else:
            quick.append(item)

    def seconds(tests: list[pytest.Item]) -> float:
        return SLOW_SECONDS.get(tests[0].path.name, SLOW_TEST_SECONDS * len(tests))

    batches: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    later: list[pytest.Item] = []
    for tests in sorted(slow.values(), key=seconds, reverse=True):
        room = [w for w in range(workers) if len(batches[w]) + len(tests) <= batch]
        if not room:
            later.extend(tests)
            continue
        lightest = min(room, key=load.__getitem__)
        batches[lightest].extend(tests)
        load[lightest] += seconds(tests)
    dealt: list[pytest.Item] = []
    for tests in batches:
        fill = min(batch - len(tests), len(quick))
        dealt.extend(tests + quick[:fill])
        del quick[:fill]
    return dealt + later + quick


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
        encoding: str | None = None,
    ) -> Deployment:
        """`encoding`: both daemons' [method] encoding (None: their default, sealed)."""
        workdir = tmp_path_factory.mktemp("deploy")
        privacy = privacy or trial_privacy
        if encoding is not None:
            privacy = replace(privacy, encoding=encoding)
        data = workdir / "data"
        write_demo_data(data, size, SEED, overlap=overlap, parties=parties)
        names = ("alice", "bob", "carol")[:parties]
        deployment = prepare(
            workdir,
            {name: data / f"{name}.csv" for name in names},
            data / "reference.csv",
            wire_log=wire_log,
            privacy=privacy,
            built_in=True,
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
