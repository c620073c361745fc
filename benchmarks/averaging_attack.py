"""A peer that links the same records several times and averages what it receives: the
dictionary attack on one release against the attack on the mean of several, with fresh
noise per run and with keyed noise (pprl.protocol.vectors.keyed_noise).

    .venv/bin/python benchmarks/averaging_attack.py --size 2000 --reference-rows 2000 \\
        --sigma 2 --runs 10 --releases distances projected \\
        --json docs/research/results/averaging.json

Alice's generated records are released `--runs` times through the daemon's pipeline; the
attack is the privacy gate's (audit_release, census first and last names) on the
codes' mean, rounded back onto the byte grid, over every record.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pprl.bench.grid import machine
from pprl.files.atomic import write_text_atomic
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_release
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.randomness import Randomness
from pprl.protocol.vectors.release import RELEASES

ATTRIBUTES = ("first", "middle", "last")


def releases(agreement, columns, randomness: list[Randomness]) -> list[np.ndarray]:
    """Each run's tensor in the records' own order, so rows line up across runs."""
    out = []
    for source in randomness:
        released = pipeline.release(agreement, columns, source)
        tensor = np.empty_like(released.tensor)
        tensor[released.order] = released.tensor
        out.append(tensor)
    return out


def attack(agreement, columns, dictionary, tensors: list[np.ndarray]) -> dict[str, float]:
    mean = np.rint(np.mean(tensors, axis=0)).astype(np.uint8)
    released = Released(np.arange(len(mean)), mean)
    report = audit_release(agreement, released, columns, dictionary, len(mean), Randomness(0))
    figures = {"records": report.record_reidentified}
    figures |= {a.attribute: a.result.nearest_rate for a in report.attributes}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--sigma", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--releases", nargs="+", choices=RELEASES, default=list(RELEASES))
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    people = synthetic.generate(args.size, args.seed).alice
    columns = {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}
    reference = synthetic.default_reference(args.reference_rows)
    dictionary = census_dictionary(reference)
    rows = []
    print("| release | noise | runs averaged | records re-identified | first | middle | last |")
    print("|---|---|---|---|---|---|---|")
    for release in args.releases:
        params = method_params(noise_sigma=args.sigma, release=release)
        agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, params)
        key = NoiseKey.generate()
        for noise, sources in (
            ("fresh", [Randomness() for _ in range(args.runs)]),
            ("keyed", [Randomness(noise_key=key) for _ in range(args.runs)]),
        ):
            began = time.perf_counter()
            tensors = releases(agreement, columns, sources)
            for runs in (1, args.runs):
                figures = attack(agreement, columns, dictionary, tensors[:runs])
                rows.append({"release": release, "noise": noise, "runs": runs, **figures})
                print(
                    f"| {release} | {noise} | {runs} | {figures['records']:.1%} "
                    f"| {figures['first']:.1%} | {figures['middle']:.1%} | {figures['last']:.1%} |",
                    flush=True,
                )
            print(f"({noise}: {time.perf_counter() - began:.0f} s)", flush=True)
    if args.json:
        settings = {
            "machine": machine(),
            "args": {k: v for k, v in vars(args).items() if k != "json"},
        }
        write_text_atomic(args.json, json.dumps({"settings": settings, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
