"""A party's released tensor and what its rows stand for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pprl.protocol.linkage import matching


@dataclass(frozen=True)
class Released:
    """A party's released tensor, its rows in the secret order: row t is record order[t]."""

    order: np.ndarray
    tensor: np.ndarray


def record_pairs(matches: matching.Matches, own: Released, peer: Released) -> set[tuple[int, int]]:
    """Pairs of released rows (own row, peer row) as pairs of the records each side gave."""
    rows_own, rows_peer = own.order[matches.rows_a], peer.order[matches.rows_b]
    return set(zip(rows_own.tolist(), rows_peer.tolist(), strict=True))
