"""An audit log of every message a daemon receives or sends, for checking what crossed the wire.

Every RPC in the system ends at one of the two daemons, so the two logs together hold every
message exchanged in a run. Each line: direction, method, base64 of the serialized message.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc

from pprl.party.service.handlers import wrap_handler


class WireLog(grpc.ServerInterceptor):
    def __init__(self, path: Path) -> None:
        self._path = Path(path)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        # Every message of every run: this party's alone to read.
        self._path.touch(mode=0o600, exist_ok=True)
        self._path.chmod(0o600)
        self._lock = threading.Lock()

    def _write(self, direction: str, method: str, message: Any) -> None:
        line = f"{direction} {method} {base64.b64encode(message.SerializeToString()).decode()}\n"
        with self._lock, self._path.open("a", encoding="ascii") as handle:
            handle.write(line)

    def _logged_stream(self, direction: str, method: str, messages: Iterator) -> Iterator:
        for message in messages:
            self._write(direction, method, message)
            yield message

    def _wrap(self, method: str, behaviour: Callable, stream_in: bool, stream_out: bool):
        def wrapped(request: Any, context: grpc.ServicerContext) -> Any:
            if stream_in:
                request = self._logged_stream("in", method, request)
            else:
                self._write("in", method, request)
            response = behaviour(request, context)
            if stream_out:
                return self._logged_stream("out", method, response)
            self._write("out", method, response)
            return response

        return wrapped

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        stream_in, stream_out = handler.request_streaming, handler.response_streaming
        return wrap_handler(
            handler, lambda behaviour: self._wrap(method, behaviour, stream_in, stream_out)
        )


def read_wire_log(path: Path) -> list[tuple[str, str, bytes]]:
    """(direction, method, serialized message) for every logged message."""
    entries = []
    for line in Path(path).read_text(encoding="ascii").splitlines():
        direction, method, payload = line.split(" ", 2)
        entries.append((direction, method, base64.b64decode(payload)))
    return entries
