"""An evaluator that returns ciphertexts of its own making, modelled in numpy at SEAL's ring
(N = 8192): of the scoring party's ternary secret key, how much a linear estimator recovers
from the signs of the decryptions, given every sign (an upper bound on what the scorer's
actions tell), for 1 to 48 crafted ciphertexts of N signs each; and the same estimator fed
coins' signs (lab.crafted_results_model). `--bits B ...` adds one ciphertext of which
only B signs are read, the most a replacing evaluator reads while the checks miss it.

    python benchmarks/sealed_crafted_results_model.py \
        --json docs/research/results/sealed_crafted_results_model.json
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from lab.crafted_results_model import estimate
from lab.in_process import run_command
from lab.result_file import write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--degree", type=int, default=8192, help="the ring's degree N")
    parser.add_argument("--rounds", type=int, nargs="+", default=[1, 2, 4, 8, 16, 48])
    parser.add_argument(
        "--bits",
        type=int,
        nargs="*",
        default=[],
        help="also one ciphertext of which only this many signs are read (each B)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    cases = [(rounds, None) for rounds in args.rounds] + [(1, bits) for bits in args.bits]
    for signs_known in (True, False):
        for rounds, bits in cases:
            rng = np.random.default_rng(args.seed)
            found = estimate(args.degree, rounds, rng, signs_known, bits)
            rows.append({**dataclasses.asdict(found), "signs_known": signs_known, "bits": bits})
            read = f"{rounds} x N" if bits is None else f"{bits} signs"
            print(
                f"{'signs' if signs_known else 'coins'}, {read}: coefficients right "
                f"{found.coefficients_right:.3f}, signs right where not 0 "
                f"{found.signs_right_where_not_zero:.3f}",
                flush=True,
            )
    if args.json:
        write_result(args.json, {"command": run_command(args), "estimates": rows})


if __name__ == "__main__":
    main()
