"""The reference set's projection basis two ways, in one run: a full SVD of a column's
centred distance table (what a daemon computed at its first SMASH until 2026-11-26) against
only the leading eigenvectors of its Gram matrix (what it computes now), on the built-in
reference set's name columns. Reports the median seconds of each and how far apart the two
bases are (1 - |cosine| per direction, largest over the directions).

    python benchmarks/reference_basis.py --rows 2000 --repeats 5 --json out.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from lab.result_file import write_result
from pprl.protocol.data.kinds import kind_distances
from pprl.protocol.data.synthetic import default_reference
from pprl.protocol.vectors.release import kept_components, leading_directions


def full_svd(centred: np.ndarray, k: int) -> np.ndarray:
    return np.linalg.svd(centred, full_matrices=False)[2][:k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    reference = default_reference(args.rows)
    k = kept_components(args.rows)
    out: dict = {"rows": args.rows, "components": k, "columns": {}}
    for column in ("first", "last"):
        values = list(reference[column])
        table = kind_distances(values, values, "name").astype(np.float64)
        centred = table - table.mean(axis=0)
        seconds: dict[str, list[float]] = {"full_svd": [], "leading_eigenvectors": []}
        bases = {}
        for _ in range(args.repeats):
            for name, method in (
                ("full_svd", full_svd),
                ("leading_eigenvectors", leading_directions),
            ):
                began = time.perf_counter()
                bases[name] = method(centred, k)
                seconds[name].append(time.perf_counter() - began)
        cosines = np.abs(np.sum(bases["full_svd"] * bases["leading_eigenvectors"], axis=1))
        out["columns"][column] = {
            "median_seconds": {name: round(statistics.median(s), 3) for name, s in seconds.items()},
            "largest_direction_difference": float(1 - cosines.min()),
        }
        print(column, out["columns"][column])
    if args.json:
        write_result(args.json, out)


if __name__ == "__main__":
    main()
