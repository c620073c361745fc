"""`pprl party check --probe`: whether what the configuration points at answers, before a run
depends on it. Each probe prints what it found and returns a problem, or None."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pprl.party.config import PartyConfig
from pprl.party.credentials.tls import secure_channel

PROBE_SECONDS = 5.0


def probe_peers(config: PartyConfig, seconds: float = PROBE_SECONDS) -> Iterator[str | None]:
    """Each peer's health check over mutual TLS: TLS verifies that its certificate names the
    configured identity and comes from this party's CA, and the check that it serves."""
    for peer in config.peers:
        where = f"peer {peer.identity!r} at {peer.address}"
        with secure_channel(peer.address, config.tls, peer.identity) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=seconds)
            except grpc.RpcError as error:
                yield f"{where}: no answer ({error.code().name}: {error.details()})"
                continue
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            yield f"{where}: {status}"
            continue
        print(f"{config.identity}: {where} answers ({status}, certificate verified)")
        yield None


def probe_scheduler(config: PartyConfig, seconds: float = PROBE_SECONDS) -> Iterator[str | None]:
    """The Dask scheduler's port, if one is configured: something must accept a connection
    there (what answers is Dask's to say, when MATCH connects)."""
    if not config.scheduler:
        return
    parts = urlsplit(config.scheduler if "://" in config.scheduler else f"tcp://{config.scheduler}")
    where = f"Dask scheduler at {config.scheduler}"
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 8786), seconds):
            pass
    except OSError as error:
        yield f"{where}: cannot connect ({error.strerror or error})"
        return
    print(f"{config.identity}: {where} accepts connections")
    yield None
