"""What MATCH runs: a plan of independent blocks of A rows, each giving its accepted pairs.

Two kinds of plan (candidates.CandidatePlan, dense_scores.DensePlan) share this shape, so a
runner (here, or the party's Dask cluster) executes either without knowing which it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pprl.protocol.linkage.matching import Matches
from pprl.protocol.progress import Progress


@dataclass(frozen=True)
class BlockResult:
    matches: Matches
    candidates: int  # record pairs the block scored


@dataclass(frozen=True)
class Outcome:
    """Accepted pairs and how many record pairs were scored to find them (None: all pairs)."""

    matches: Matches
    candidates: int | None


class Plan(Protocol):
    @property
    def blocks(self) -> Sequence[tuple[int, int]]: ...

    def block(self, index: int) -> BlockResult: ...

    def block_records(self, block: tuple[int, int]) -> int: ...

    def combine(self, parts: list[BlockResult]) -> Outcome: ...


def run_here(plan: Plan, progress: Progress | None = None) -> Outcome:
    """Every block of the plan in this process, in order."""
    total = sum(plan.block_records(block) for block in plan.blocks)
    done = 0
    parts = []
    for index, block in enumerate(plan.blocks):
        parts.append(plan.block(index))
        done += plan.block_records(block)
        if progress is not None:
            progress(done, total)
    return plan.combine(parts)
