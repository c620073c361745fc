"""Start one party daemon: TLS-only gRPC server, run store, peer client."""

from __future__ import annotations

import logging
import signal
import threading
from concurrent import futures

import grpc

from pprl.party.config import PartyConfig
from pprl.party.peer import PeerClient
from pprl.party.service import PartyService
from pprl.party.state import RunStore
from pprl.party.tls import CHANNEL_OPTIONS, server_credentials
from pprl.party.wire_log import WireLog
from pprl.party.work import PhaseWork
from pprl.wire import linkage_pb2_grpc as rpc

log = logging.getLogger("pprl.party")


def build_server(config: PartyConfig) -> tuple[grpc.Server, int, RunStore, PeerClient]:
    store = RunStore(config.state_dir)
    peer = PeerClient(config)
    interceptors = [WireLog(config.wire_log)] if config.wire_log else []
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        interceptors=interceptors,
        options=CHANNEL_OPTIONS,
    )
    rpc.add_PartyServicer_to_server(
        PartyService(config, store, PhaseWork(config, store, peer)), server
    )
    port = server.add_secure_port(config.listen, server_credentials(config.tls))
    if port == 0:
        raise OSError(f"cannot listen on {config.listen}")
    return server, port, store, peer


def serve(config: PartyConfig) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight RPCs for a few seconds."""
    server, port, store, peer = build_server(config)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    log.info(
        "%s listening on %s (mutual TLS; peer %s at %s; coordinator %s)",
        config.identity,
        config.listen.rsplit(":", 1)[0] + f":{port}",
        config.peer_identity,
        config.peer_address,
        config.coordinator_identity,
    )
    stop.wait()
    log.info("%s shutting down", config.identity)
    server.stop(grace=5).wait()
    peer.close()
    store.close()
