"""Start one party daemon: TLS-only gRPC server, run store, peer client."""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from pprl.party.config import PartyConfig
from pprl.party.credentials.tls import SERVER_OPTIONS, server_credentials
from pprl.party.peering.peer import PeerClient
from pprl.party.phases.phase_runner import PhaseRunner
from pprl.party.phases.work import PhaseWork
from pprl.party.service import threadsafe_ast
from pprl.party.service.authorise import Authorise, party_audiences
from pprl.party.service.control_service import ControlService
from pprl.party.service.malloc import limit_malloc_arenas
from pprl.party.service.peer_service import PeerService
from pprl.party.service.port_probe import serving_elsewhere
from pprl.party.service.service_pools import OTHER, ServicePools
from pprl.party.service.startup import check_startup
from pprl.party.service.wire_log import WireLog
from pprl.party.storage.artifacts import RESULTS
from pprl.party.storage.state import RunStore
from pprl.protocol.errors import InputError
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc

log = logging.getLogger("pprl.party")


@dataclass(frozen=True)
class Served:
    """A daemon's server and what it holds until it stops."""

    server: grpc.Server
    port: int
    store: RunStore
    peers: dict[str, PeerClient]
    health: health.HealthServicer
    pools: ServicePools


def _health() -> health.HealthServicer:
    """The standard health service: SERVING for the daemon and each of its services."""
    servicer = health.HealthServicer()
    for name in ("", *(s.full_name for s in pb.DESCRIPTOR.services_by_name.values())):
        servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return servicer


def _pools() -> ServicePools:
    """Each service's own workers, so a caller holding every worker of one (a call takes one
    from its headers until its message arrives) leaves the others theirs.

    Peer: 8, as the one pool had; its calls are the phases' exchanges. Control: 4; an honest
    coordinator holds at most one Advance, a Hold and a GetStatus here at once, and a second
    coordinator is refused at once. Health (OTHER): 2; Check answers at once and Watch holds
    no worker. Health is open to every identity of the CA, the peer too, so it is not
    Control's pool: the peer can hold these two, not the coordinator's four."""
    return ServicePools(
        {
            pb.DESCRIPTOR.services_by_name["Peer"].full_name: 8,
            pb.DESCRIPTOR.services_by_name["Control"].full_name: 4,
            OTHER: 2,
        }
    )


def build_server(config: PartyConfig) -> Served:
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
    pools = _pools()
    server = grpc.server(
        pools,
        interceptors=interceptors,
        options=SERVER_OPTIONS,
    )
    work = PhaseWork(config, store, peers)
    runner = PhaseRunner(store, work)
    rpc.add_PeerServicer_to_server(PeerService(config, store, work, runner), server)
    rpc.add_ControlServicer_to_server(ControlService(config, store, runner), server)
    checks = _health()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    try:
        port = server.add_secure_port(config.listen, server_credentials(config.tls))
    except RuntimeError:  # grpcio >= 1.60 raises where older versions returned 0
        port = 0
    if port == 0:
        pools.shutdown(wait=False)
        store.close()
        for peer in peers.values():
            peer.close()
        raise InputError(
            f"cannot listen on {config.listen}: the port is taken (another daemon?) or the "
            "address is not this machine's",
            path=config.source or None,
            field="listen",
        )
    return Served(server, port, store, peers, checks, pools)


# The signals that stop a daemon.
STOPS = frozenset({signal.SIGTERM, signal.SIGINT})


def serve(config: PartyConfig) -> None:
    """Serve until SIGTERM or SIGINT, then finish in-flight RPCs for a few seconds.

    The stop signals are blocked before any thread starts (threads inherit the mask) and
    taken by sigwait in this thread: a Python handler that set an Event deadlocked when a
    signal landed while this thread held the Event's lock, waking from the first (a daemon
    left running after a second SIGTERM, its stack in Event.set inside Event.wait)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    limit_malloc_arenas()
    threadsafe_ast.install()
    served = build_server(config)
    served.server.start()
    log.info(
        "%s listening on %s (mutual TLS; %s %s; coordinator %s)",
        config.identity,
        config.listen.rsplit(":", 1)[0] + f":{served.port}",
        "peer" if len(served.peers) == 1 else "peers",
        ", ".join(f"{p.identity} at {p.address}" for p in config.peers),
        config.coordinator_identity,
    )
    signal.sigwait(STOPS)
    log.info("%s shutting down", config.identity)
    served.health.enter_graceful_shutdown()  # NOT_SERVING while in-flight calls finish
    served.server.stop(grace=5).wait()
    # The stop cancelled every call; a handler still running ends before the interpreter
    # exits, as it did before the pools.
    served.pools.shutdown(wait=False, cancel_futures=True)
    for peer in served.peers.values():
        peer.close()
    served.store.close()
