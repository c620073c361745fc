"""Ciphertexts on the wire as SEAL saves them (zstd) against with their coefficients packed at
their primes' widths (pprl.files.packed_ciphertexts), in one run on the same ciphertexts:
bytes, and the milliseconds to write and read one, medians.

The ciphertexts are those encrypted scoring makes at the agreed parameters: the scoring
party's fresh ones (seeded) and the evaluator's results, from one scoring of `--pairs` random
candidate pairs among `--size` rows a side at `--width` coordinates a row.

    python benchmarks/ciphertext_packing.py --size 2000 --pairs 20000 --width 64 --json out.json
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from lab.in_process import run_command
from lab.result_file import write_result
from lab.sealed_round_trip import random_scoring, round_trip, scoring_arguments
from pprl.files.sealed_bytes import dumped, dumped_ciphertext, loaded, loaded_ciphertext
from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.layout import best_rounds, layout


def _median_ms(step: Callable[[Any], Any], items: list[Any]) -> float:
    """The median milliseconds `step` takes on one of `items`."""
    times = []
    for item in items:
        began = time.perf_counter()
        step(item)
        times.append(1e3 * (time.perf_counter() - began))
    return statistics.median(times)


def _compared(kind: str, objects: list[Any], context: Any, seeded: bool) -> dict[str, Any]:
    """Bytes and medians of both forms for `objects`, written and read under `context`
    (`seeded`: fresh ones, read as the evaluator reads them)."""
    saved = [dumped(item) for item in objects]
    sent = [dumped_ciphertext(item, context) for item in objects]
    row = {
        "ciphertexts": len(objects),
        "bytes_seal": sum(map(len, saved)),
        "bytes_packed": sum(map(len, sent)),
        "write_ms_seal": _median_ms(dumped, objects),
        "write_ms_packed": _median_ms(lambda item: dumped_ciphertext(item, context), objects),
        "read_ms_seal": _median_ms(lambda data: loaded(scoring.Ciphertext, context, data), saved),
        "read_ms_packed": _median_ms(
            lambda data: loaded_ciphertext(context, data, seeded=seeded), sent
        ),
    }
    row["saved"] = 1 - row["bytes_packed"] / row["bytes_seal"]
    print(
        f"{kind}: {len(objects)} ciphertexts, {row['bytes_seal'] / len(objects) / 1e3:.1f} KB "
        f"as SEAL saves them, {row['bytes_packed'] / len(objects) / 1e3:.1f} KB packed "
        f"({row['saved']:.1%} fewer); write {row['write_ms_seal']:.2f} / "
        f"{row['write_ms_packed']:.2f} ms, read {row['read_ms_seal']:.2f} / "
        f"{row['read_ms_packed']:.2f} ms",
        flush=True,
    )
    return row


def main() -> None:
    args = scoring_arguments(__doc__.split("\n\n")[0], 2000, 20_000).parse_args()
    rng = np.random.default_rng(args.seed)
    x, y, c, pairs = random_scoring(args.size, args.pairs, args.width, rng)
    setting = scoring.CkksSetting()
    placed = layout(pairs, setting.slots, best_rounds(pairs, setting.slots))
    keys = scoring.secret_keys(setting)
    fresh = [item for batch in scoring.encrypted_batches(keys, x, c, placed) for item in batch]
    evaluated = [
        item for batch in round_trip(keys, x, c, y, placed, rng).returned for item in batch
    ]
    results = {
        "command": run_command(args),
        "fresh": _compared("fresh (seeded)", fresh, keys.context, seeded=True),
        "evaluated": _compared("evaluated", evaluated, keys.context, seeded=False),
    }
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
