"""What the privacy gate costs a party: choosing its noise at AGREE and attacking its release
at SMASH, with the dictionary's coordinates computed (cold), read from the state
directory's cache (warm), and read from it with the previous run's choice as the search's
start (warm + hint: what every later run of a daemon on the same reference set does). Each
run attacks its own sample of records, as a daemon's secret sample differs per run.

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

from pprl.party.storage.gate_cache import DiskProjections
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows, calibrate_noise
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.randomness import Randomness


def one_run(
    columns, reference, cache: Path, records: np.ndarray, hint: float | None = None
) -> tuple[float, float, float]:
    """(seconds to choose the noise, seconds for the SMASH gate, the sigma chosen)."""
    randomness = Randomness(noise_key=NoiseKey(bytes(32)))
    began = time.perf_counter()
    # As a daemon builds it: the reference set's principal directions kept in its cache.
    agreement = Agreement(
        ReferenceSet("built-in", reference),
        DEFAULT_MAPPING,
        method_params(noise_sigma=1.0),
        store=DiskProjections(cache),
    )
    dictionary = census_dictionary(reference, DiskProjections(cache))
    choice = calibrate_noise(
        agreement, columns, records, dictionary, randomness, 0.10, "every-name", hint=hint
    )
    chosen = time.perf_counter() - began
    agreed = agreement.with_noise(choice.sigma)
    released = pipeline.release(agreed, columns, randomness)
    position = np.empty(len(released.order), dtype=np.int64)
    position[released.order] = np.arange(len(released.order))
    began = time.perf_counter()
    audit_rows(agreed, released, np.sort(position[records]), columns, dictionary)
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
    rng = np.random.default_rng(0)

    def sample() -> np.ndarray:
        return np.sort(rng.choice(args.size, args.audit_records, False))

    runs: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": [], "warm + hint": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            first = one_run(columns, reference, Path(cache), sample())
            runs["cold"].append(first)
            runs["warm"].append(one_run(columns, reference, Path(cache), sample()))
            hinted = one_run(columns, reference, Path(cache), sample(), hint=first[2])
            runs["warm + hint"].append(hinted)
    for label, measured in runs.items():
        choose = statistics.median(r[0] for r in measured)
        gate = statistics.median(r[1] for r in measured)
        sigmas = ", ".join(f"{r[2]:g}" for r in measured)
        print(
            f"{label}: choosing the noise {choose:.2f} s, SMASH gate {gate:.2f} s "
            f"(sigma {sigmas}; medians of {len(measured)})",
            flush=True,
        )


if __name__ == "__main__":
    main()
