"""What the privacy gate costs a party: choosing its noise at AGREE and attacking its release
at SMASH, with the dictionary's coordinates computed (cold) and read from the state
directory's cache (warm, every later run on the same reference set).

    .venv/bin/python benchmarks/gate_cost.py --size 2000 --reference-rows 2000 --repeats 3

One party, in one process, through the daemon's functions and its disk cache; medians of
`--repeats` runs; the 91,907 census names as the dictionary.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from pprl.party.gate_cache import DiskProjections
from pprl.protocol import pipeline, synthetic
from pprl.protocol.audit import census_dictionary
from pprl.protocol.keyed_noise import NoiseKey
from pprl.protocol.method import method_params
from pprl.protocol.randomness import Randomness
from pprl.protocol.reference import DEFAULT_MAPPING, ReferenceSet


def one_run(columns, reference, cache: Path, records: np.ndarray) -> tuple[float, float, float]:
    """(seconds to choose the noise, seconds for the SMASH gate, the sigma chosen)."""
    agreement = pipeline.Agreement(
        ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=1.0)
    )
    randomness = Randomness(noise_key=NoiseKey(bytes(32)))
    began = time.perf_counter()
    dictionary = census_dictionary(reference, DiskProjections(cache))
    choice = pipeline.calibrate_noise(
        agreement, columns, records, dictionary, randomness, 0.10, "every-name"
    )
    chosen = time.perf_counter() - began
    agreed = agreement.with_noise(choice.sigma)
    released = pipeline.release(agreed, columns, randomness)
    position = np.empty(len(released.order), dtype=np.int64)
    position[released.order] = np.arange(len(released.order))
    began = time.perf_counter()
    pipeline.audit_rows(agreed, released, np.sort(position[records]), columns, dictionary)
    return chosen, time.perf_counter() - began, choice.sigma


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--audit-records", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    people = synthetic.generate(args.size, 11).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}
    reference = synthetic.default_reference(args.reference_rows)
    records = np.sort(np.random.default_rng(0).choice(args.size, args.audit_records, False))
    cold, warm = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(one_run(columns, reference, Path(cache), records))
            warm.append(one_run(columns, reference, Path(cache), records))
    for label, runs in (("cold", cold), ("warm", warm)):
        choose = statistics.median(r[0] for r in runs)
        gate = statistics.median(r[1] for r in runs)
        print(
            f"{label}: choosing the noise {choose:.2f} s, SMASH gate {gate:.2f} s "
            f"(sigma {runs[0][2]:g}; medians of {len(runs)})",
            flush=True,
        )


if __name__ == "__main__":
    main()
