"""Pair features: per mapping entry, the cosine distance of two smashed vectors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The paper's cosine, then variants that survive noise on the released distances
# (docs/privacy.md): centred on the reference set's mean distances, also scaled by their
# spread, or centred and projected onto the reference set's leading components.
FEATURES = ("cosine", "centred-cosine", "standardised-cosine", "projected-cosine")


@dataclass(frozen=True)
class Standardise:
    """Per-coordinate (code - centre) / scale before the cosine, with shapes broadcasting over
    the last axes of a tensor ((M, R) for whole tensors, (R,) for one entry).

    Raw distance vectors all point the same way (every name is a few edits from every other),
    so their cosines crowd near 1 and noise swamps the differences; centring on the reference
    set's own mean distances removes that shared direction.
    """

    centre: np.ndarray
    scale: np.ndarray
    # (M, R, k) orthonormal columns to project onto after centring, or None. Cosines depend
    # only on the projector basis @ basis.T, so the parties' bases may differ in sign.
    basis: np.ndarray | None = None

    def entry(self, m: int) -> Standardise:
        basis = None if self.basis is None else self.basis[m]
        return Standardise(self.centre[m], self.scale[m], basis)


def unit_vectors(tensor: np.ndarray, standardise: Standardise | None = None) -> np.ndarray:
    """Scale each [i, m] vector to unit length, so a cosine distance is 1 - a dot product.

    An all-zero vector stays zero (cosine distance 1 to anything) instead of dividing by 0.
    """
    values = tensor.astype(np.float32)
    if standardise is not None:
        values -= standardise.centre
        values /= standardise.scale
        if standardise.basis is not None:
            basis = standardise.basis.astype(np.float32, copy=False)
            pattern = "...r,rk->...k" if basis.ndim == 2 else "...mr,mrk->...mk"
            values = np.einsum(pattern, values, basis, dtype=np.float32)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    np.divide(values, norms, out=values, where=norms > 0)
    return values


def pair_features(unit_a: np.ndarray, unit_b: np.ndarray) -> np.ndarray:
    """(n, M) cosine distances of aligned rows; clipped because rounding can leave [0, 2]."""
    dots = np.einsum("imr,imr->im", unit_a, unit_b, dtype=np.float32)
    return np.clip(1.0 - dots, 0.0, 2.0, dtype=np.float32)
