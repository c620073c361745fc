"""Who may call what, decided in one place for every call: each service has one audience.

The Peer service is for the configured peers' certificate identities (which run a peer may
touch is checked by the service itself), the Control service for the coordinator's; a call
to any other service is refused, so a new RPC is closed to all until its service is given an
audience here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2

from pprl.party.config import PartyConfig
from pprl.party.credentials.tls import caller_identity
from pprl.party.reasons import abort
from pprl.party.service.handlers import Behaviour, as_request_stream, wrap_handler
from pprl.wire.v1 import linkage_pb2 as pb

log = logging.getLogger("pprl.party")
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
# How long an authorised caller may hold a worker before its one request message arrives.
FIRST_MESSAGE_SECONDS = 30.0


@dataclass(frozen=True)
class Audience:
    role: str  # "peer" or "coordinator", for log lines and refusals
    identities: tuple[str, ...]  # the certificate common names allowed to call
    anyone: bool = False  # every identity the CA certified (TLS has checked the certificate)

    def names(self) -> str:
        return " or ".join(repr(name) for name in self.identities)

    def admits(self, caller: str | None) -> bool:
        return caller is not None and (self.anyone or caller in self.identities)


def party_audiences(config: PartyConfig) -> dict[str, Audience]:
    """Full service name -> who may call it, for a party daemon. The health service tells
    only whether the daemon serves: any identity of the CA may ask (a monitor, a probe with
    the daemon's own certificate)."""
    services = pb.DESCRIPTOR.services_by_name
    return {
        services["Peer"].full_name: Audience("peer", config.peer_identities),
        services["Control"].full_name: Audience("coordinator", (config.coordinator_identity,)),
        HEALTH_SERVICE: Audience("holder of a certificate of the CA", (), anyone=True),
    }


def service_of(method: str) -> str:
    """`pprl.wire.v1.Peer` for `/pprl.wire.v1.Peer/PushTensor`; empty when malformed."""
    parts = method.split("/")
    return parts[1] if len(parts) == 3 and not parts[0] else ""


class Authorise(grpc.ServerInterceptor):
    """Checks the caller's certificate identity before the method runs. The identity is only
    known from the servicer context, so the check wraps the method's behaviour.

    A method whose request is one message would have gRPC take a worker thread and wait in it
    for that message before any behaviour runs: calls that send headers and never a request
    would hold every worker, from any certificate of the CA. Such methods are therefore served
    as streams (the same bytes on the wire): the identity is checked as the call starts, and
    an authorised caller's request must arrive within FIRST_MESSAGE_SECONDS."""

    def __init__(
        self,
        audiences: Mapping[str, Audience],
        first_message_seconds: float = FIRST_MESSAGE_SECONDS,
    ) -> None:
        self._audiences = dict(audiences)
        self._first_message_seconds = first_message_seconds

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None  # no such method: gRPC answers UNIMPLEMENTED
        method = handler_call_details.method
        audience = self._audiences.get(service_of(method))
        if not handler.request_streaming:
            handler = as_request_stream(handler, self._first_message_seconds)
        return wrap_handler(handler, lambda behaviour: _guard(method, audience, behaviour))


def _guard(method: str, audience: Audience | None, behaviour: Behaviour) -> Behaviour:
    def guarded(request, context: grpc.ServicerContext):
        caller = caller_identity(context)
        if audience is None:
            log.warning("refused %s from %r: no identity may call it", method, caller)
            abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                pb.NOT_AUTHORISED,
                f"{method} is open to no one",
            )
        if not audience.admits(caller):
            log.warning(
                "refused %s from %r: only the %s %s may call it",
                method,
                caller,
                audience.role,
                audience.names(),
            )
            abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                pb.NOT_AUTHORISED,
                f"{method} is for the {audience.role} {audience.names()} only, not {caller!r}",
            )
        return behaviour(request, context)

    return guarded
