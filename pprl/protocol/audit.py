"""What a peer who knows the reference set learns from released vectors: a dictionary attack.

The attacker smashes a public name list against the same reference column and compares each
released vector with the dictionary's vectors. Two attacks are scored against the true values:
- exact lookup: the released vector equals the vectors of exactly one dictionary name, the
  true one (the "candidate set" is every name sharing the released vector);
- nearest neighbour: the single closest dictionary vector (Euclidean) is the true name's; a tie
  counts as a failure.
Exact lookup is what raw integer distances allow; noise defeats it, nearest neighbour not
necessarily, so both are reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_BLOCK_ROWS = 512


@dataclass(frozen=True)
class EntryAudit:
    """Per released value: exact-lookup success, nearest-neighbour success, candidate count."""

    exact: np.ndarray  # (n,) bool
    nearest: np.ndarray  # (n,) bool
    candidates: np.ndarray  # (n,) int: dictionary names with exactly the released vector

    @property
    def exact_rate(self) -> float:
        return float(self.exact.mean()) if len(self.exact) else 0.0

    @property
    def nearest_rate(self) -> float:
        return float(self.nearest.mean()) if len(self.nearest) else 0.0

    @property
    def median_candidates(self) -> float:
        return float(np.median(self.candidates)) if len(self.candidates) else 0.0


def audit_entry(
    released: np.ndarray,
    truth: Sequence[str],
    dictionary: Sequence[str],
    dictionary_vectors: np.ndarray,
) -> EntryAudit:
    """Attack (n, R) released vectors with (d, R) dictionary vectors of the names `dictionary`."""
    if len(released) != len(truth):
        raise ValueError(f"{len(released)} vectors for {len(truth)} true values")
    if len(dictionary) != len(dictionary_vectors):
        raise ValueError(f"{len(dictionary)} names for {len(dictionary_vectors)} vectors")
    names_by_vector: dict[bytes, list[str]] = defaultdict(list)
    exact_vectors = np.asarray(dictionary_vectors, dtype=np.float64)
    for name, vector in zip(dictionary, exact_vectors, strict=True):
        names_by_vector[vector.tobytes()].append(name)
    values = np.asarray(released, dtype=np.float64)
    found = [names_by_vector.get(vector.tobytes(), []) for vector in values]
    exact = np.array([names == [t] for names, t in zip(found, truth, strict=True)], dtype=bool)
    candidates = np.array([len(names) for names in found], dtype=np.int64)
    nearest = np.zeros(len(values), dtype=bool)
    if len(exact_vectors):
        squares = np.einsum("dr,dr->d", exact_vectors, exact_vectors)
        for start in range(0, len(values), _BLOCK_ROWS):
            block = values[start : start + _BLOCK_ROWS]
            distances = squares[None, :] - 2.0 * block @ exact_vectors.T  # + |x|^2, same per row
            best = distances.min(axis=1, keepdims=True)
            ties = np.isclose(distances, best, rtol=0.0, atol=1e-9).sum(axis=1)
            winners = distances.argmin(axis=1)
            for offset, (winner, tie) in enumerate(zip(winners, ties, strict=True)):
                row = start + offset
                nearest[row] = tie == 1 and dictionary[winner] == truth[row]
    return EntryAudit(exact, nearest, candidates)
