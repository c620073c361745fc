"""Pair features: per mapping entry, the cosine distance of two smashed vectors."""

from __future__ import annotations

import numpy as np


def unit_vectors(tensor: np.ndarray) -> np.ndarray:
    """Scale each [i, m] vector to unit length, so a cosine distance is 1 - a dot product.

    An all-zero vector stays zero (cosine distance 1 to anything) instead of dividing by 0.
    """
    values = tensor.astype(np.float32)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    np.divide(values, norms, out=values, where=norms > 0)
    return values


def pair_features(unit_a: np.ndarray, unit_b: np.ndarray) -> np.ndarray:
    """(n, M) cosine distances of aligned rows; clipped because rounding can leave [0, 2]."""
    dots = np.einsum("imr,imr->im", unit_a, unit_b, dtype=np.float32)
    return np.clip(1.0 - dots, 0.0, 2.0, dtype=np.float32)
