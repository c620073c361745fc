"""Count non-matching pairs that look like one-error matches in plaintext, by file size.

    .venv/bin/python benchmarks/lookalike_pairs.py --sizes 5000 20000 50000 --seed 1

A pair of different people with the same first name and surname differs at most in the
middle name, which is what a true pair with a middle-name error looks like: a classifier that
judges each pair alone must accept it. Their number grows with the square of the file size,
which is why precision of pairwise judgement falls as files grow (docs/research/results.md).
"""

from __future__ import annotations

import argparse
from collections import Counter

from pprl.bench.data import make_task


def same_first_and_last(size: int, seed: int) -> tuple[int, int]:
    """(non-matching pairs with equal first and last names, true pairs)."""
    task = make_task(size, seed)
    alice = list(zip(task.alice["first"], task.alice["last"], strict=True))
    bob = list(zip(task.bob["first"], task.bob["last"], strict=True))
    counts = Counter(bob)
    all_pairs = sum(counts[key] for key in alice)
    true_pairs = sum(alice[i] == bob[j] for i, j in task.truth)
    return all_pairs - true_pairs, len(task.truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 50000])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("| records a side | non-matching pairs with equal first and last name | true pairs |")
    print("|---|---|---|")
    for size in args.sizes:
        lookalikes, true_pairs = same_first_and_last(size, args.seed)
        print(f"| {size:,} | {lookalikes:,} | {true_pairs:,} |")


if __name__ == "__main__":
    main()
