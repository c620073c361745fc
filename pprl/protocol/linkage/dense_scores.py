"""Every pair's linear decision from one matrix product, for when bounds cannot prune.

With a missing value's unit vector zero (its dot is 0, its distance 1), the decision
b + sum_m [w_m (1 - a_m . b_m) + v_m one_m + u_m both_m] of a model without caps is a dot
product of two rows: one = ma + mb - 2 ma mb and both = ma mb for the missing flags ma, mb, so

    decision(i, j) = x_i . y_j,  x_i = [-w_m a_m ..., (u_m - 2 v_m) ma_m ..., c + r_i, 1]
                                 y_j = [ b_m ...,              mb_m ...,     1, s_j]

with c = b + sum_m w_m, r_i = sum_m v_m ma_m and s_j = sum_m v_m mb_m. Under noise the
candidate bounds keep most pairs (56% at 50,000 a side), and expanding and scoring them one
by one costs several times this product over all of them (docs/research/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pprl.protocol.linkage.matching import Selection, _accepted, _concat, _ranked
from pprl.protocol.linkage.plans import BlockResult, Outcome
from pprl.protocol.model.classifier import Model, full_weights

# A block's decisions are (rows, n_b) float32: this many bytes of them at once.
BLOCK_BYTES = 64 << 20


def applies(model: Model) -> bool:
    """Only decisions linear in the distances, without caps, are one dot product per pair
    (each, for a model that takes the highest of several: classifier.Model.linear_parts)."""
    return model.linear_in_distances and model.caps is None


def width(entry_widths: list[int]) -> int:
    """Columns of x and y: every entry's vector, its missing flag, and the two offsets."""
    return sum(entry_widths) + len(entry_widths) + 2


@dataclass
class DensePlan:
    """The rows x_i of side A and y_j of side B, per linear part of the model (the decision is
    the highest part's); blocks of A rows are independent."""

    selection: Selection
    left: list[np.ndarray]  # per part (n_a, K) float32
    right: list[np.ndarray]  # per part (n_b, K) float32
    blocks: list[tuple[int, int]]

    def block_records(self, block: tuple[int, int]) -> int:
        return block[1] - block[0]

    def block(self, index: int) -> BlockResult:
        start, stop = self.blocks[index]
        decisions = self.left[0][start:stop] @ self.right[0].T
        for left, right in zip(self.left[1:], self.right[1:], strict=True):
            np.maximum(decisions, left[start:stop] @ right.T, out=decisions)
        found = _accepted(decisions, start, self.selection)
        return BlockResult(found, decisions.size)

    def combine(self, parts: list[BlockResult]) -> Outcome:
        found = _concat([part.matches for part in parts])
        kept = _ranked(found, self.selection.rows_of, self.selection.top_k)
        return Outcome(kept, sum(part.candidates for part in parts))

    def is_candidate(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """Every pair is scored: pair completeness is 1 by construction."""
        return np.ones(len(rows_a), dtype=bool)


def rows(
    vectors: list[np.ndarray],
    missing: list[np.ndarray],
    part: tuple[np.ndarray, float],
    side: str,
) -> np.ndarray:
    """x (side "a") or y (side "b") of one linear part (weights, bias) for per-entry (n, k_m)
    unit vectors (zero when missing) and (n,) missing flags."""
    entries = len(vectors)
    weights, bias = full_weights(part[0], entries), part[1]
    w, v, u = np.split(weights, 3)
    n = len(vectors[0])
    out = np.empty((n, width([x.shape[1] for x in vectors])), dtype=np.float32)
    column = 0
    for m, entry in enumerate(vectors):
        out[:, column : column + entry.shape[1]] = entry * (-w[m] if side == "a" else 1.0)
        column += entry.shape[1]
    flags = np.stack(missing, axis=1).astype(np.float64)  # (n, M)
    out[:, column : column + entries] = flags * (u - 2 * v) if side == "a" else flags
    column += entries
    offsets = flags @ v
    if side == "a":
        out[:, column] = bias + w.sum() + offsets
        out[:, column + 1] = 1.0
    else:
        out[:, column] = 1.0
        out[:, column + 1] = offsets
    return out


def plan(
    side_a: tuple[list[np.ndarray], list[np.ndarray]],
    side_b: tuple[list[np.ndarray], list[np.ndarray]],
    selection: Selection,
    block_bytes: int = BLOCK_BYTES,
) -> DensePlan:
    """The plan for (vectors, missing flags) of each side, entry by entry."""
    parts = selection.model.linear_parts()
    if parts is None or not applies(selection.model):
        raise ValueError("dense scoring needs a model linear in the distances, without caps")
    left = [rows(*side_a, part, "a") for part in parts]
    right = [rows(*side_b, part, "b") for part in parts]
    size = max(1, block_bytes // (4 * max(1, len(right[0]))))
    n_a = len(left[0])
    blocks = [(s, min(s + size, n_a)) for s in range(0, n_a, size)]
    return DensePlan(selection, left, right, blocks)
