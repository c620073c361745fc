"""Where a party's matching blocks run: in the daemon, or on the party's own Dask cluster.

The cluster receives the candidate plan (smashed vectors and cosine tables, never a name)
and runs its independent blocks; Dask does the scheduling.
"""

from __future__ import annotations

from typing import Any

from pprl.protocol.errors import PprlError
from pprl.protocol.linkage.plans import BlockResult, Outcome, Plan
from pprl.protocol.progress import Progress

CONNECT_SECONDS = 30


class EngineError(PprlError):
    """The configured Dask scheduler cannot be used; the message names it."""


def _block(plan: Plan, index: int) -> BlockResult:
    return plan.block(index)


def dask_client(scheduler: str, seconds: float = CONNECT_SECONDS) -> Any:
    """A client of the party's Dask scheduler; EngineError naming it when the distributed
    package is missing or the scheduler cannot be reached within `seconds`."""
    try:
        # lazy: dask, an optional extra, loads only for a configured scheduler
        from dask.distributed import Client
    except ImportError:
        raise EngineError(
            f"[matching] scheduler = {scheduler!r} needs the distributed package "
            "(pip install 'pprl[distributed]')"
        ) from None
    try:
        return Client(scheduler, timeout=seconds)
    except OSError as error:
        raise EngineError(f"cannot reach the Dask scheduler {scheduler}: {error}") from None


def on_dask(scheduler: str):
    """A runner for candidates.accepted_pairs that sends each block to `scheduler`."""

    def run(plan: Plan, progress: Progress | None) -> Outcome:
        client = dask_client(scheduler)
        # lazy: dask, an optional extra, loads only for a configured scheduler
        from dask.distributed import as_completed

        with client:
            shared = client.scatter(plan, broadcast=True)
            futures = {
                client.submit(_block, shared, index, pure=False): index
                for index in range(len(plan.blocks))
            }
            parts = []
            done, total = 0, sum(plan.block_records(block) for block in plan.blocks)
            for future in as_completed(futures):
                parts.append(future.result())
                done += plan.block_records(plan.blocks[futures[future]])
                future.release()
                if progress is not None:
                    progress(done, total)
        return plan.combine(parts)

    return run
