"""Start one party daemon: TLS-only gRPC server, run store, peer client."""

from __future__ import annotations

import logging
import signal
import threading
from concurrent import futures

import grpc

from pprl.party.config import PartyConfig
from pprl.party.keys.tls import SERVER_OPTIONS, server_credentials
from pprl.party.peering.peer import PeerClient
from pprl.party.phases.phase_runner import PhaseRunner
from pprl.party.phases.work import PhaseWork
from pprl.party.service.authorise import Authorise, party_audiences
from pprl.party.service.control_service import ControlService
from pprl.party.service.malloc import limit_malloc_arenas
from pprl.party.service.peer_service import PeerService
from pprl.party.service.port_probe import serving_elsewhere
from pprl.party.service.startup import check_startup
from pprl.party.service.wire_log import WireLog
from pprl.party.storage.artifacts import RESULTS
from pprl.party.storage.state import RunStore
from pprl.protocol.errors import InputError
from pprl.wire.v1 import linkage_pb2_grpc as rpc

log = logging.getLogger("pprl.party")


def build_server(
    config: PartyConfig,
) -> tuple[grpc.Server, int, RunStore, dict[str, PeerClient]]:
    check_startup(config)
    taken = serving_elsewhere(config.listen)
    if taken is not None:
        raise InputError(
            f"cannot listen on {config.listen}: the port is taken (something already answers "
            f"on {taken}; another daemon?)",
            path=config.source or None,
            field="listen",
        )
    store = RunStore(config.state_dir)
    store.remove_leftovers()
    store.remove_unfinished_results(RESULTS)
    peers = {p.identity: PeerClient(p, config.tls) for p in config.peers}
    # Authorise comes first, so a refused call runs nothing else, not even the wire log.
    interceptors: list[grpc.ServerInterceptor] = [Authorise(party_audiences(config))]
    if config.wire_log:
        interceptors.append(WireLog(config.wire_log))
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        interceptors=interceptors,
        options=SERVER_OPTIONS,
    )
    work = PhaseWork(config, store, peers)
    runner = PhaseRunner(store, work)
    rpc.add_PeerServicer_to_server(PeerService(config, store, work, runner), server)
    rpc.add_ControlServicer_to_server(ControlService(config, store, runner), server)
    try:
        port = server.add_secure_port(config.listen, server_credentials(config.tls))
    except RuntimeError:  # grpcio >= 1.60 raises where older versions returned 0
        port = 0
    if port == 0:
        store.close()
        for peer in peers.values():
            peer.close()
        raise InputError(
            f"cannot listen on {config.listen}: the port is taken (another daemon?) or the "
            "address is not this machine's",
            path=config.source or None,
            field="listen",
        )
    return server, port, store, peers


def serve(config: PartyConfig) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight RPCs for a few seconds."""
    limit_malloc_arenas()
    server, port, store, peers = build_server(config)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    log.info(
        "%s listening on %s (mutual TLS; %s %s; coordinator %s)",
        config.identity,
        config.listen.rsplit(":", 1)[0] + f":{port}",
        "peer" if len(peers) == 1 else "peers",
        ", ".join(f"{p.identity} at {p.address}" for p in config.peers),
        config.coordinator_identity,
    )
    stop.wait()
    log.info("%s shutting down", config.identity)
    server.stop(grace=5).wait()
    for peer in peers.values():
        peer.close()
    store.close()
