"""A scoring party that crafts the first parts of its seeded conjugation key and sends one seeded
ciphertext for every column: how closely it reads the angle of the evaluator's plaintext sum
for each candidate pair in no conflict, with one seed (the attack), with an honest key beside
it, and with a seed a ciphertext (as SEAL draws them); and whether the evaluator's reading
refuses what was sent (lab.crafted_conjugation_attack).

    python benchmarks/sealed_crafted_conjugation_attack.py --size 5000 --pairs 6000 --width 64 \
        --json docs/research/results/sealed_crafted_conjugation_attack.json
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lab.crafted_conjugation_attack import attack
from lab.in_process import run_command
from lab.result_file import write_result
from lab.sealed_round_trip import scoring_arguments

CASES = {
    "one_seed_crafted_key": {"shared_seed": True, "crafted_key": True},
    "one_seed_honest_key": {"shared_seed": True, "crafted_key": False},
    "a_seed_each_crafted_key": {"shared_seed": False, "crafted_key": True},
}


def main() -> None:
    args = scoring_arguments(__doc__.split("\n\n")[0], 5000, 6000).parse_args()
    results: dict = {"command": run_command(args)}
    for name, case in CASES.items():
        read = attack(args.size, args.pairs, args.width, np.random.default_rng(args.seed), **case)
        results[name] = dataclasses.asdict(read)
        print(
            f"{name}: {read.pairs_in_no_conflict} pairs in no conflict, angle error median "
            f"{read.angle_error_median:.2g} rad (95%: {read.angle_error_95:.2g}); "
            f"refused: {read.ciphertexts_refused}",
            flush=True,
        )
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
