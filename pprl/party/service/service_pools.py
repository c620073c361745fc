"""Separate worker pools for the daemon's services, so the peer cannot take the coordinator's.

grpc's sync server runs every call on one executor. A unary call takes a worker as soon as
its headers arrive and holds it until its message does, so a peer that opened as many
calls as there were workers and never sent their messages left the coordinator's Control
calls waiting for as long as the peer chose. `ServicePools` is that executor: it hands each
call to the pool of the service it calls, each pool bounded on its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent import futures
from typing import Any, ParamSpec, TypeVar

from pprl.party.service.authorise import service_of

log = logging.getLogger("pprl.party")

P = ParamSpec("P")
T = TypeVar("T")

# The pool of any call whose service has none of its own, or whose method cannot be read.
OTHER = "other"


def method_of(*args: Any) -> str | None:
    """The full method name (`/package.Service/Method`) of the call among grpc's arguments
    to `submit`, or None if none of them carries one.

    grpc (checked on 1.85) submits `(context.run, handler, rpc_event, state, ...)`. A method
    the generated code registered has its name as the event's `tag`, and empty bytes as its
    `call_details.method`, which holds the name only for a method a generic handler serves.
    That is grpc's internal call, not its API, so every argument is tried, nothing is
    assumed of its position, and a name must start with "/"."""
    for arg in args:
        details = getattr(arg, "call_details", None)
        if details is None:
            continue
        for name in (getattr(details, "method", None), getattr(arg, "tag", None)):
            if isinstance(name, bytes):
                name = name.decode("utf-8", "replace")
            if isinstance(name, str) and name.startswith("/"):
                return name
    return None


class ServicePools(futures.Executor):
    """An executor for `grpc.server` that runs each call in its service's own bounded pool.

    `sizes` maps a service's full name (`pprl.wire.v1.Peer`) to its number of workers, and
    OTHER to the pool of every other call (health). A call waits for a worker of its own
    service only, so however many workers one service's callers hold, the others keep theirs.

    The service is read from grpc's arguments to `submit` because that is all grpc tells an
    executor: `grpc.server` takes a single one, and its only choice of pool per method is an
    experimental attribute on each handler. Should a grpc version change those arguments,
    the method can no longer be read: every call runs in the OTHER pool and a warning is
    logged once. The daemon still serves, with that pool's workers alone and the services
    no longer apart; tests/test_hardening.py then fails.
    """

    def __init__(self, sizes: Mapping[str, int], prefix: str = "pprl-rpc") -> None:
        if OTHER not in sizes:
            raise ValueError(f"the pools need an {OTHER!r} pool for calls of no other service")
        self._pools = {
            name: futures.ThreadPoolExecutor(
                max_workers=size, thread_name_prefix=f"{prefix}-{name}"
            )
            for name, size in sizes.items()
        }
        self._unread = threading.Event()

    def pool_for(self, *args: Any) -> str:
        """The name of the pool a call submitted with `args` runs in."""
        method = method_of(*args)
        if method is None:
            if not self._unread.is_set():
                self._unread.set()
                log.warning(
                    "cannot read the called method from grpc's arguments; every call runs "
                    "in the %r pool, the services no longer apart",
                    OTHER,
                )
            return OTHER
        service = service_of(method)
        return service if service in self._pools else OTHER

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> futures.Future[T]:
        """Run `fn(*args, **kwargs)` in the pool of the service the call is for."""
        return self._pools[self.pool_for(fn, *args)].submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Shut every pool: first all of them without waiting, then wait for each."""
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=cancel_futures)
        if wait:
            for pool in self._pools.values():
                pool.shutdown(wait=True)
