"""Server interceptors act by wrapping a method's behaviour: the caller's identity and the
messages are only seen there, not in the call details an interceptor is first given."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from pprl.party.peering.transfer import StreamTimeout, idle_limited
from pprl.party.reasons import abort
from pprl.wire.v1 import linkage_pb2 as pb

log = logging.getLogger("pprl.party")

Behaviour = Callable[[Any, grpc.ServicerContext], Any]

_KINDS = {
    (False, False): ("unary_unary", grpc.unary_unary_rpc_method_handler),
    (False, True): ("unary_stream", grpc.unary_stream_rpc_method_handler),
    (True, False): ("stream_unary", grpc.stream_unary_rpc_method_handler),
    (True, True): ("stream_stream", grpc.stream_stream_rpc_method_handler),
}


def as_request_stream(handler: grpc.RpcMethodHandler, seconds: float) -> grpc.RpcMethodHandler:
    """A one-message-request handler served as a request stream: the behaviour starts when
    the call does, and takes the request from the stream, waiting at most `seconds` for it
    (a caller that never sends one is given up, TIMED_OUT)."""
    if handler.response_streaming:

        def streamed(requests, context: grpc.ServicerContext):
            yield from handler.unary_stream(_one(requests, context, seconds), context)

        factory: Any = grpc.stream_stream_rpc_method_handler
    else:

        def streamed(requests, context: grpc.ServicerContext):
            return handler.unary_unary(_one(requests, context, seconds), context)

        factory = grpc.stream_unary_rpc_method_handler
    return factory(
        streamed,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def _one(requests: Iterator[Any], context: grpc.ServicerContext, seconds: float) -> Any:
    """The call's one request message, within `seconds`."""
    try:
        first = next(idle_limited(requests, seconds), None)
    except StreamTimeout:
        log.warning("gave up a call whose request did not arrive within %g s", seconds)
        abort(
            context,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            pb.TIMED_OUT,
            f"the request did not arrive within {seconds:g} s",
        )
    if first is None:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, "no request was sent")
    return first


def wrap_handler(
    handler: grpc.RpcMethodHandler, wrap: Callable[[Behaviour], Behaviour]
) -> grpc.RpcMethodHandler:
    """A handler of the same streaming kind and (de)serializers, whose behaviour is
    `wrap(the original behaviour)`."""
    attribute, factory = _KINDS[(handler.request_streaming, handler.response_streaming)]
    return factory(
        wrap(getattr(handler, attribute)),
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )
