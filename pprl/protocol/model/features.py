"""Pair features: per mapping entry, the cosine distance of two smashed vectors, and whether
the entry's value is missing on one side or on both.

A missing value is released as a vector of MISSING_CODE (no distance reaches it) and becomes
a zero unit vector here, so its cosine distance to anything is exactly 1; the two indicator
features let the classifier give that case its own weight instead of reading it as "these
values differ".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The paper's cosine, then variants that survive noise on the released distances
# (docs/research/privacy.md): centred on the reference set's mean distances, also scaled by their
# spread, or centred and projected onto the reference set's leading components; the last
# with an entry that joins several attributes read about as its raw cosine instead
# (RAW_JOINS, sealed linkage's: release.raw_reading).
RAW_JOINS = "projected-cosine-raw-joins"
FEATURES = ("cosine", "centred-cosine", "standardised-cosine", "projected-cosine", RAW_JOINS)
# The features read from the reference set's leading components.
PROJECTED = ("projected-cosine", RAW_JOINS)
# The released code of every coordinate of a missing value; distances are clamped below it.
MISSING_CODE = 255
# Per mapping entry: cosine distance, missing on exactly one side, missing on both.
FEATURES_PER_ENTRY = 3


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
    # (M,) a constant coordinate appended to each entry's vectors before they are scaled to
    # unit length, or None. Cosine alone ignores the vectors' lengths; with the constant,
    # 1 - cosine blends in their squared Euclidean distance (its limit, over 2 constant^2,
    # as the constant grows), which under Gaussian noise separates matches much better.
    constant: np.ndarray | None = None

    def entry(self, m: int) -> Standardise:
        basis = None if self.basis is None else self.basis[m]
        constant = None if self.constant is None else self.constant[m : m + 1]
        return Standardise(self.centre[m], self.scale[m], basis, constant)


def unit_vectors(tensor: np.ndarray, standardise: Standardise | None = None) -> np.ndarray:
    """Scale each [i, m] vector to unit length, so a cosine distance is 1 - a dot product.

    A missing value's vector (all MISSING_CODE) becomes zero, and so does an all-zero vector,
    instead of dividing by 0: cosine distance 1 to anything.
    """
    missing = missing_values(tensor)
    values = tensor.astype(np.float32)
    if standardise is not None:
        values -= standardise.centre
        values /= standardise.scale
        if standardise.basis is not None:
            basis = standardise.basis.astype(np.float32, copy=False)
            pattern = "...r,rk->...k" if basis.ndim == 2 else "...mr,mrk->...mk"
            values = np.einsum(pattern, values, basis, dtype=np.float32)
        if standardise.constant is not None:
            extra = np.broadcast_to(standardise.constant[..., None], (*values.shape[:-1], 1))
            values = np.concatenate([values, extra.astype(np.float32)], axis=-1)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    np.divide(values, norms, out=values, where=norms > 0)
    if missing.any():
        values[missing] = 0.0
    return values


def missing_values(tensor: np.ndarray) -> np.ndarray:
    """(..., M) bool: which released vectors stand for a missing value. A real code never
    reaches MISSING_CODE, so the first coordinate decides; only released uint8 codes carry
    it (a float array is already values, where 255.0 is just a number)."""
    if tensor.dtype != np.uint8:
        return np.zeros(tensor.shape[:-1], dtype=bool)
    return np.asarray(tensor[..., 0]) == MISSING_CODE


def missing_units(unit: np.ndarray) -> np.ndarray:
    """(..., M) bool: which unit vectors are zero, i.e. missing values."""
    return np.logical_not(unit.any(axis=-1))


def feature_count(entries: int) -> int:
    return FEATURES_PER_ENTRY * entries


def indicator_features(missing_a: np.ndarray, missing_b: np.ndarray) -> np.ndarray:
    """(..., 2M) float32: missing on exactly one side, then missing on both, per entry."""
    one = np.logical_xor(missing_a, missing_b)
    both = np.logical_and(missing_a, missing_b)
    return np.concatenate([one, both], axis=-1).astype(np.float32)


def pair_features(unit_a: np.ndarray, unit_b: np.ndarray) -> np.ndarray:
    """(n, 3M) features of aligned rows: cosine distances (clipped, because rounding can leave
    [0, 2]), then the missing indicators."""
    dots = np.einsum("imr,imr->im", unit_a, unit_b, dtype=np.float32)
    distances = np.clip(1.0 - dots, 0.0, 2.0, dtype=np.float32)
    indicators = indicator_features(missing_units(unit_a), missing_units(unit_b))
    return np.concatenate([distances, indicators], axis=-1)
