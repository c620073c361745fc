"""Why a call failed, for programs as well as people: an ErrorDetail beside the status code.

A daemon puts the reason in the trailing metadata of every call it ends with an error, so
that a client can act on it (wait, stop, tell the operator what to fix) without parsing text.
"""

from __future__ import annotations

from typing import NoReturn

import grpc
from google.protobuf.message import DecodeError

from pprl.wire.v1 import linkage_pb2 as pb

DETAIL_KEY = "pprl-error-detail-bin"


def abort(
    context: grpc.ServicerContext, code: grpc.StatusCode, reason: pb.ErrorReason, message: str
) -> NoReturn:
    """End the call with `code` and `message`, and the reason in trailing metadata."""
    detail = pb.ErrorDetail(reason=reason, message=message)
    context.set_trailing_metadata(((DETAIL_KEY, detail.SerializeToString()),))
    context.abort(code, message)
    raise AssertionError("grpc's abort returned")  # it always raises


def error_detail(error: grpc.RpcError) -> pb.ErrorDetail:
    """The ErrorDetail the server sent with `error`; an empty one (reason unspecified) when it
    sent none, as when it could not be reached."""
    trailing = error.trailing_metadata() if isinstance(error, grpc.Call) else None
    for key, value in trailing or ():
        if key == DETAIL_KEY:
            try:
                return pb.ErrorDetail.FromString(value)
            except DecodeError:
                break
    return pb.ErrorDetail()


def reason_of(error: grpc.RpcError) -> pb.ErrorReason:
    """The reason the server gave for `error` (ERROR_REASON_UNSPECIFIED if none)."""
    return error_detail(error).reason


def reason_name(reason: int) -> str:
    """The reason's name; a number a newer peer added still gets a readable one."""
    try:
        return pb.ErrorReason.Name(reason)
    except ValueError:
        return f"ERROR_REASON_{reason}"


def describe(error: grpc.RpcError) -> str:
    """`CODE [REASON]: details`, or `CODE: details` when the server gave no reason."""
    reason = reason_of(error)
    tag = f" [{reason_name(reason)}]" if reason else ""
    return f"{error.code().name}{tag}: {error.details()}"
