"""A scoring party that crafts its fresh ciphertexts (c1 its own, not SEAL's from a seed), its
public key (zeros) and its conjugation key, against the evaluator: how closely it reads the
evaluator's plaintext coordinates out of the returned ciphertexts, before the evaluator
required seeded ciphertexts (the crafted ones handed to the evaluation) and with seeded ones
under the same crafted keys; and whether the evaluator's reading refuses the ciphertexts and
the public and conjugation keys sent (lab.crafted_keys_attack).

    python benchmarks/sealed_crafted_keys_attack.py --size 5000 --pairs 6000 --width 64 \
        --json docs/research/results/sealed_crafted_keys_attack.json
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lab.crafted_keys_attack import attack
from lab.in_process import run_command
from lab.result_file import write_result
from lab.sealed_round_trip import scoring_arguments


def main() -> None:
    args = scoring_arguments(__doc__.split("\n\n")[0], 5000, 20_000).parse_args()
    results: dict = {"command": run_command(args)}
    for name, seeded in (("crafted_ciphertexts", False), ("seeded_ciphertexts", True)):
        rng = np.random.default_rng(args.seed)
        read, refused = attack(args.size, args.pairs, args.width, seeded, rng)
        results[name] = {**dataclasses.asdict(read), "refused": dataclasses.asdict(refused)}
        print(
            f"{name}: refused {refused}; {read.pairs_in_no_conflict} pairs in no conflict, "
            f"angle error median {read.angle_error_median:.2g} rad; {read.pairs_in_conflict} "
            f"in conflict, relative error median {read.relative_error_median:.2g} "
            f"(95%: {read.relative_error_95:.2g})",
            flush=True,
        )
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
