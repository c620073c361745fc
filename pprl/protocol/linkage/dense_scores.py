"""Every pair's linear decision from one matrix product, for when bounds cannot prune.

With a missing value's unit vector zero (its dot is 0, its distance 1), the decision
b + sum_m [w_m (1 - a_m . b_m) + v_m one_m + u_m both_m] of a model without caps is a dot
product of two rows: one = ma + mb - 2 ma mb and both = ma mb for the missing flags ma, mb, so

    decision(i, j) = x_i . y_j,  x_i = [-w_m a_m ..., (u_m - 2 v_m) ma_m ..., c + r_i, 1]
                                 y_j = [ b_m ...,              mb_m ...,     1, s_j]

with c = b + sum_m w_m, r_i = sum_m v_m ma_m and s_j = sum_m v_m mb_m. Under noise the
candidate bounds keep most pairs (56% at 50,000 a side), and expanding and scoring them one
by one costs several times this product over all of them (docs/benchmarks.md).
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
    """Only a linear decision without caps is one dot product per pair."""
    return model.kind == "linear" and model.caps is None


def width(entry_widths: list[int]) -> int:
    """Columns of x and y: every entry's vector, its missing flag, and the two offsets."""
    return sum(entry_widths) + len(entry_widths) + 2


@dataclass
class DensePlan:
    """The rows x_i of side A and y_j of side B; blocks of A rows are independent."""

    selection: Selection
    left: np.ndarray  # (n_a, K) float32
    right: np.ndarray  # (n_b, K) float32
    blocks: list[tuple[int, int]]

    def block_records(self, block: tuple[int, int]) -> int:
        return block[1] - block[0]

    def block(self, index: int) -> BlockResult:
        start, stop = self.blocks[index]
        decisions = self.left[start:stop] @ self.right.T
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
    vectors: list[np.ndarray], missing: list[np.ndarray], model: Model, side: str
) -> np.ndarray:
    """x (side "a") or y (side "b") for per-entry (n, k_m) unit vectors (zero when missing)
    and (n,) missing flags."""
    entries = len(vectors)
    weights = full_weights(model.arrays["weights"], entries)
    w, v, u = np.split(weights, 3)
    n = len(vectors[0])
    out = np.empty((n, width([x.shape[1] for x in vectors])), dtype=np.float32)
    column = 0
    for m, part in enumerate(vectors):
        out[:, column : column + part.shape[1]] = part * (-w[m] if side == "a" else 1.0)
        column += part.shape[1]
    flags = np.stack(missing, axis=1).astype(np.float64)  # (n, M)
    out[:, column : column + entries] = flags * (u - 2 * v) if side == "a" else flags
    column += entries
    offsets = flags @ v
    if side == "a":
        out[:, column] = float(model.arrays["bias"]) + w.sum() + offsets
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
    if not applies(selection.model):
        raise ValueError("dense scoring needs a linear model without caps")
    left = rows(*side_a, selection.model, "a")
    right = rows(*side_b, selection.model, "b")
    size = max(1, block_bytes // (4 * max(1, len(right))))
    blocks = [(s, min(s + size, len(left))) for s in range(0, len(left), size)]
    return DensePlan(selection, left, right, blocks)
