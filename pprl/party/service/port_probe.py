"""Whether a daemon's port is already served on this machine under another address family.

gRPC binds the address it is given: a daemon on 127.0.0.1:P does not stop a second one from
binding [::1]:P or localhost:P, and clients that dial localhost then reach whichever answers
first. Before binding, a daemon dials the loopback addresses of both families (and the
listen host's own) on its port; one that answers means another server holds the port.
"""

from __future__ import annotations

import contextlib
import socket

PROBE_SECONDS = 0.5
_LOOPBACKS = ("127.0.0.1", "::1")


def serving_elsewhere(listen: str) -> str | None:
    """An address of this machine where something already answers on `listen`'s port, or
    None. Only loopback and the listen host itself are dialled."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    candidates = list(_LOOPBACKS)
    if host not in ("", "0.0.0.0", "::", *_LOOPBACKS):
        with contextlib.suppress(OSError):
            candidates += [str(info[4][0]) for info in socket.getaddrinfo(host, int(port))]
    for address in dict.fromkeys(candidates):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(PROBE_SECONDS)
            try:
                probe.connect((address, int(port)))
            except OSError:
                continue
            return f"[{address}]:{port}" if family == socket.AF_INET6 else f"{address}:{port}"
    return None
