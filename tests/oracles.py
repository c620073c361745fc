"""Slow, obviously correct references that tests compare the fast matching code against."""

from __future__ import annotations

import numpy as np

from pprl.protocol.matching import Matches


def brute_greedy(scores: np.ndarray, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs by descending score, ties by (A row, B row), each row used at most once."""
    used_a: set[int] = set()
    used_b: set[int] = set()
    chosen = []
    for i, j in sorted(pairs, key=lambda p: (-scores[p], p[0], p[1])):
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            chosen.append((i, j))
    return chosen


def pair_list(matches: Matches) -> list[tuple[int, int]]:
    return list(zip(matches.rows_a.tolist(), matches.rows_b.tolist(), strict=True))
