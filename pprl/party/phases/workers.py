"""Where a party's sealed heavy steps run: in the daemon, in local worker processes, or on
the party's own Dask cluster ([matching] scheduler, workers).

A step hands its work over as independent tasks (`blinding.Spread`), each a chunk whose size
bounds a worker's memory whatever the file's; the workers start on the first task, so a run
too small to need them starts none. At most WINDOW tasks a worker are in flight, so the
daemon holds a bounded part of the results at once; they come back in the tasks' order.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from typing import Any

from pprl.party.config import DEFAULT_CHUNK_VALUES
from pprl.party.phases import engine
from pprl.party.phases.engine import CONNECT_SECONDS

# Tasks a worker may have queued beyond the one it runs.
WINDOW = 2


class LocalWorkers:
    """Worker processes on this machine, started on the first task (spawned: the daemon's
    gRPC threads must not be forked)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, task: Callable[..., Any], arguments: tuple[Any, ...]) -> Future[Any]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.count, mp_context=get_context("spawn"))
        return self._pool.submit(task, *arguments)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)


class DaskWorkers:
    """The party's own Dask cluster, connected on the first task."""

    def __init__(self, scheduler: str) -> None:
        self.scheduler = scheduler
        self._client: Any = None
        self.count = 1

    def submit(self, task: Callable[..., Any], arguments: tuple[Any, ...]) -> Any:
        if self._client is None:
            self._client = engine.dask_client(self.scheduler, CONNECT_SECONDS)
            self.count = max(len(self._client.scheduler_info().get("workers", {})), 1)
        return self._client.submit(task, *arguments, pure=False)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


class Spread:
    """`blinding.Spread` over some workers: tasks in, results out in order, a window of
    them in flight."""

    def __init__(
        self, workers: LocalWorkers | DaskWorkers, chunk: int = DEFAULT_CHUNK_VALUES
    ) -> None:
        self.workers = workers
        self.chunk = chunk
        self.tasks = 0

    def where(self) -> str:
        """Where the tasks ran, for the phase's line; empty when none did."""
        if not self.tasks:
            return ""
        if isinstance(self.workers, DaskWorkers):
            return f" on the Dask cluster at {self.workers.scheduler}"
        return f" in {self.workers.count} local worker processes"

    def __call__(
        self, task: Callable[..., list[bytes]], tasks: Sequence[tuple[Any, ...]]
    ) -> Iterator[list[bytes]]:
        waiting: deque[Any] = deque()
        for arguments in tasks:
            waiting.append(self.workers.submit(task, arguments))
            self.tasks += 1
            while len(waiting) > WINDOW * self.workers.count:
                yield waiting.popleft().result()
        while waiting:
            yield waiting.popleft().result()


def local_count(configured: int) -> int:
    """The worker processes for `[matching] workers`: 0 is one a core."""
    return configured or os.cpu_count() or 1


@contextmanager
def spreading(
    scheduler: str | None, workers: int, chunk: int = DEFAULT_CHUNK_VALUES
) -> Iterator[Spread | None]:
    """The spread a phase's heavy steps use, in tasks of `chunk` values: the Dask cluster
    if one is configured, else local worker processes when more than one, else none (the
    daemon does the work)."""
    if scheduler:
        pool: LocalWorkers | DaskWorkers = DaskWorkers(scheduler)
    elif local_count(workers) > 1:
        pool = LocalWorkers(local_count(workers))
    else:
        yield None
        return
    try:
        yield Spread(pool, chunk)
    finally:
        pool.close()
