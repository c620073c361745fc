"""The privacy gate against the Bayes decision on the same release: generated voter-like
records released at given noise levels (or the noise a gate limit chooses), attacked on all
rows by the gate (audit_rows: every attacker, every prior) and by the brute-force
Bayes decoder (lab.bayes_decoder: the noise's covariance estimated from the release,
the census lists and frequencies as priors). The gate's rate should be at least the
decoder's; both are printed with the agreed linkage's F1 at that noise.

    python benchmarks/gate_oracle.py --size 2000 --sigmas 3.375 --gate 0.1 --json out.json
    python benchmarks/gate_oracle.py --size 5000 --reference actors_2000.csv --gate 0.1
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from lab.bayes_decoder import bayes_reidentified
from lab.in_process import gate_sigmas
from lab.result_file import write_result
from pprl.bench.data import read_reference
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ["first", "middle", "last"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000, help="generated records a side")
    parser.add_argument("--seed", type=int, default=7, help="of the generated records")
    parser.add_argument("--reference", help="reference set CSV (default: the built-in one)")
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--sigmas", default="", help="comma-separated sigmas")
    parser.add_argument("--gate", type=float, help="also the sigma this gate limit chooses")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    columns = read_reference(args.reference, args.reference_rows)
    reference = ReferenceSet(args.reference or "built-in", columns)
    data = synthetic.generate(args.size, args.seed)
    sides = {
        "alice": {a: [getattr(p, a) for p in data.alice] for a in ATTRIBUTES},
        "bob": {a: [getattr(p, a) for p in data.bob] for a in ATTRIBUTES},
    }
    rows_a = {p.id: i for i, p in enumerate(data.alice)}
    rows_b = {p.id: i for i, p in enumerate(data.bob)}
    truth = {(rows_a[a], rows_b[b]) for a, b in data.truth}
    randomness = {name: Randomness(1, name) for name in sides}
    dictionary = census_dictionary(reference.columns)
    census = synthetic.census_names()
    # The decoder estimates the noise from names outside the records' (the commonest are).
    spare = census.last.names[2000:6000:2]
    sigmas = [float(s) for s in args.sigmas.split(",") if s]
    base = Agreement(reference, DEFAULT_MAPPING, method_params(noise_sigma=1.0))
    out: dict[str, Any] = {
        "command": vars(args) | {"json": str(args.json and args.json.name)},
        "rows": [],
    }
    if args.gate is not None:
        chosen = gate_sigmas(base, sides, dictionary, randomness, args.gate)
        out["gate_choice"] = chosen
        sigmas.append(max(chosen.values()))
    for sigma in sigmas:
        agreement = base.with_noise(sigma)
        linkage = pipeline.link_in_process(
            agreement, sides["alice"], sides["bob"], (randomness["alice"], randomness["bob"])
        )
        f1 = 2 * len(linkage.agreed & truth) / (len(linkage.agreed) + len(truth))
        released = linkage.alice.released
        everyone = np.arange(args.size)
        began = time.perf_counter()
        gate = audit_rows(agreement, released, everyone, sides["alice"], dictionary)
        gate_seconds = time.perf_counter() - began
        shuffled = {a: [v[i] for i in released.order] for a, v in sides["alice"].items()}
        began = time.perf_counter()
        oracle, per_attribute = bayes_reidentified(
            agreement,
            released.tensor,
            shuffled,
            ATTRIBUTES,
            dictionary.names,
            dictionary.priors,
            spare,
            np.random.default_rng(5),
        )
        row = {
            "sigma": sigma,
            "f1": f1,
            "gate": gate.record_reidentified,
            "gate_attacker": gate.attack,
            "gate_any_name": gate.record_exposed,
            "gate_recovered": {a.attribute: a.recovered for a in gate.attributes},
            "gate_seconds": round(gate_seconds, 1),
            "bayes": oracle,
            "bayes_recovered": per_attribute,
            "bayes_seconds": round(time.perf_counter() - began, 1),
        }
        out["rows"].append(row)
        print(
            f"sigma {sigma:g}: F1 {f1:.4f}; gate {row['gate']:.1%} ({gate.attack}; any name "
            f"{gate.record_exposed:.1%}; {row['gate_recovered']}); Bayes {oracle:.1%} "
            f"({per_attribute})",
            flush=True,
        )
    if args.json:
        if args.reference:
            out["command"]["reference"] = Path(args.reference).name
        write_result(args.json, out)


if __name__ == "__main__":
    main()
