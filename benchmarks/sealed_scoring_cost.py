"""What encrypted scoring costs (pprl.protocol.sealed.scoring): one classifier on random
candidate pairs, both parties in one process, timed step by step, with the decrypted signs
checked against the plaintext scores.

Rows have `--width` coordinates (entries x projected coordinates: 4 x 16 = 64 for names at a
small k, 4 x 63 = 252 at the built-in set's k) drawn as unit-scale vectors; `--pairs`
candidate pairs are drawn at random (0.4% of 5,000 x 5,000 is 100,000: what the best keys
measured so far keep on FEBRL4's ten fields).

    python benchmarks/sealed_scoring_cost.py --size 5000 --pairs 100000 --width 64 --json out.json
"""

from __future__ import annotations

import time

import numpy as np

from lab.result_file import write_result
from lab.sealed_round_trip import random_scoring, round_trip, scoring_arguments
from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.layout import best_rounds, layout


def main() -> None:
    args = scoring_arguments(__doc__.split("\n\n")[0], 5000, 100_000).parse_args()
    rng = np.random.default_rng(args.seed)
    x, y, c, pairs = random_scoring(args.size, args.pairs, args.width, rng)
    setting = scoring.CkksSetting()
    rounds = best_rounds(pairs, setting.slots)
    placed = layout(pairs, setting.slots, rounds)
    began = time.perf_counter()
    keys = scoring.secret_keys(setting)
    made = time.perf_counter() - began
    run = round_trip(keys, x, c, y, placed, rng)
    timings = {"keys": made, **run.seconds}
    began = time.perf_counter()
    decided = scoring.buckets(keys, run.returned, placed, len(pairs)) > 0
    timings["decrypt"] = time.perf_counter() - began
    plain = c[pairs[:, 0]] + np.einsum("ij,ij->i", x[pairs[:, 0]], y[pairs[:, 1]])
    wrong = decided != (plain > 0)
    products = placed.rounds * placed.batches * (args.width + 1)
    result = {
        "command": vars(args) | {"json": str(args.json and args.json.name)},
        "pairs": len(pairs),
        "rounds": placed.rounds,
        "batches": placed.batches,
        "seconds": timings,
        "slot_products_per_second": products * setting.slots / timings["evaluate"],
        "bytes_public_key": len(run.public),
        "bytes_conjugation_key": len(run.conjugation),
        "bytes_sent": run.bytes_sent,
        "bytes_returned": run.bytes_returned,
        "signs_wrong": int(wrong.sum()),
        "largest_wrong_score": float(np.abs(plain[wrong]).max()) if wrong.any() else 0.0,
    }
    print(
        f"{len(pairs):,} pairs, width {args.width}: {placed.rounds} rounds x {placed.batches} "
        f"batches; encrypt {timings['encrypt']:.1f} s, evaluate {timings['evaluate']:.1f} s, "
        f"decrypt {timings['decrypt']:.1f} s; sent {run.bytes_sent / 1e6:.0f} MB (the public "
        f"and conjugation keys {(len(run.public) + len(run.conjugation)) / 1e6:.1f} MB of it), "
        f"returned {run.bytes_returned / 1e6:.0f} MB; "
        f"{result['signs_wrong']} signs wrong (all |score| <= "
        f"{result['largest_wrong_score']:.3f})",
        flush=True,
    )
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
