"""Server interceptors act by wrapping a method's behaviour: the caller's identity and the
messages are only seen there, not in the call details an interceptor is first given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

Behaviour = Callable[[Any, grpc.ServicerContext], Any]

_KINDS = {
    (False, False): ("unary_unary", grpc.unary_unary_rpc_method_handler),
    (False, True): ("unary_stream", grpc.unary_stream_rpc_method_handler),
    (True, False): ("stream_unary", grpc.stream_unary_rpc_method_handler),
    (True, True): ("stream_stream", grpc.stream_stream_rpc_method_handler),
}


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
