"""Three releases on the same two files in one run: the reference-set release and the
Bloom-filter release (both parties in one process, through the functions the daemons use),
and the anonlink stack at its best threshold (chosen with the truth, its best case). Prints
quality, bytes each party sends, time and the peer's dictionary attack on each release.

    python benchmarks/bloom_compare.py --records-a febrl4/records_a.csv \\
        --records-b febrl4/records_b.csv --truth febrl4/truth.csv \\
        --reference febrl4/ref_all.csv --schema benchmarks/febrl4/schema_names.toml \\
        --peer-fields given_name,surname --json docs/research/results/bloom_febrl4_names.json

With --sigmas, each noise scale adds two rows: the reference release and the filters'
distances to the reference set's filters (encoding "bloom-distances"), both with Gaussian
noise sigma (FedSim's standardised units), each with its attack success tau and Gaussian
mechanism epsilon, and the attack measured on it.

The attacks use the census first names and surnames (the privacy gate's dictionary) on 1,000
of Alice's records: on the reference release, the gate's strongest attacker; on the Bloom
release, the peer encoding the dictionary with the key it holds (bloom_audit); on the anonlink
stack's CLKs, the peer hashing each listed name into each name field with the secret it
holds (lab.clk_attack), on the same records.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from lab.clk_attack import attack_clks
from lab.in_process import add_table_arguments, link_tables, schema_tables
from lab.result_file import write_result
from pprl.bench.grid import machine
from pprl.bench.peer import ALL_FIELDS, NAME_FIELDS, Records, read_records, run_peer
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.records import RecordTable
from pprl.protocol.gate import audit_release
from pprl.protocol.linkage.bloom_linkage import BloomAgreement, link_in_process
from pprl.protocol.method import method_params
from pprl.protocol.metrics import Quality, linkage_quality
from pprl.protocol.privacy import noise
from pprl.protocol.privacy.audit import AuditReport, census_dictionary
from pprl.protocol.privacy.bloom_audit import audit_filters
from pprl.protocol.vectors.bloom import BloomKey, BloomParams
from pprl.protocol.vectors.randomness import Randomness

AUDITED = 1000


def _quality(quality: Quality) -> dict[str, float]:
    return {
        "precision": round(quality.precision, 4),
        "recall": round(quality.recall, 4),
        "f1": round(quality.f1, 4),
    }


def _leakage(report: AuditReport) -> dict[str, Any]:
    return {
        "records_reidentified": round(report.record_reidentified, 4),
        "records_exposed": round(report.record_exposed, 4),
        "by_attribute": {a.attribute: round(a.result.nearest_rate, 4) for a in report.attributes},
    }


def reference_release(
    tables: tuple[RecordTable, RecordTable],
    truth: set[tuple[str, str]],
    agreement: Agreement,
    seed: int,
) -> dict[str, Any]:
    outcome = link_tables(tables, truth, agreement, seed)
    alice = tables[0]
    randomness = Randomness(seed, "alice")
    released = pipeline.release(agreement, alice.attributes, randomness)
    dictionary = census_dictionary(agreement.reference.columns)
    report = audit_release(agreement, released, alice.attributes, dictionary, AUDITED, randomness)
    return {
        **_quality(outcome.quality),
        "seconds": round(outcome.seconds, 1),
        "bytes_per_party": int(released.tensor.nbytes),
        "leakage": _leakage(report),
        "noise": _noise(agreement),
    }


def _noise(agreement: Agreement) -> dict[str, Any]:
    """sigma, sigma0 and the distances' unit, tau and epsilon (for a one-edit change)."""
    sigma, sigma0 = agreement.method.noise_sigma, agreement.sigma0
    coordinates, change, unit = agreement.sensitivity
    out: dict[str, Any] = {"sigma": sigma, "sigma0": round(sigma0, 3), "unit": unit}
    if sigma > 0:
        sensitivity = change * coordinates**0.5 / sigma0
        out["tau"] = round(noise.attack_success(sigma, sigma0), 4)
        out["epsilon"] = round(noise.gaussian_epsilon(sigma, sensitivity, noise.DELTA), 1)
    return out


def audited_rows(n: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(n, AUDITED, replace=False))


def anonlink_leakage(path: Path, fields: tuple[str, ...], seed: int) -> dict[str, Any]:
    """The key holder's attack on the CLKs of the records the Bloom release's attack takes."""
    records = read_records(path, fields)
    rows = audited_rows(len(records.ids), seed)
    sample = Records(path, [records.ids[i] for i in rows], [records.values[i] for i in rows])
    census = synthetic.census_names()
    attacked = [name for name in NAME_FIELDS if name in fields]
    leakage = attack_clks(sample, fields, attacked, [*census.first.names, *census.last.names])
    return {
        "records_reidentified": round(leakage.records_reidentified, 4),
        "records_exposed": round(leakage.records_exposed, 4),
        "by_attribute": {name: round(rate, 4) for name, rate in leakage.by_field.items()},
    }


def bloom_release(
    tables: tuple[RecordTable, RecordTable],
    truth: set[tuple[str, str]],
    agreement: BloomAgreement,
    seed: int,
) -> dict[str, Any]:
    alice, bob = tables
    began = time.perf_counter()
    rngs = (np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2]))
    linkage = link_in_process(agreement, alice.attributes, bob.attributes, rngs)
    seconds = time.perf_counter() - began
    found = {(alice.ids[a], bob.ids[b]) for a, b in linkage.agreed}
    sample = audited_rows(len(alice), seed)
    filters = agreement.encode(alice.attributes)
    census = synthetic.census_names()
    report = audit_filters(
        agreement,
        filters[sample],
        {name: [values[i] for i in sample] for name, values in alice.attributes.items()},
        [*census.first.names, *census.last.names],
    )
    return {
        **_quality(linkage_quality(found, truth)),
        "seconds": round(seconds, 1),
        "bytes_per_party": int(filters.nbytes),
        "leakage": _leakage(report),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--peer-fields", required=True, help="anonlink's fields, or 'all'")
    parser.add_argument("--bits", type=int, default=BloomParams.bits)
    parser.add_argument("--hashes", type=int, default=BloomParams.hashes)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sigmas", type=float, nargs="*", help="noise scales to compare")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    tables, truth = read.tables, read_truth(args.truth)
    method = method_params(**read.method)
    reference = load_reference(args.reference)
    agreement = Agreement(reference, read.mapping, method, read.kinds, read.scales)
    key = BloomKey.generate()
    bloom = BloomAgreement(
        key,
        BloomParams(args.bits, args.hashes),
        tuple(dict.fromkeys(attribute for attribute, _ in read.mapping)),
        read.kinds,
        method,
    )
    fields = ALL_FIELDS if args.peer_fields == "all" else tuple(args.peer_fields.split(","))
    began = time.perf_counter()
    peer = run_peer(args.records_a, args.records_b, truth, fields)
    noisy: dict[str, dict[str, Any]] = {}
    for sigma in args.sigmas or ():
        # method_params at this sigma: noise changes the best features and training
        for encoding in ("reference", "bloom-distances"):
            noisy_method = method_params(**read.method, noise_sigma=sigma, encoding=encoding)
            release = Agreement(
                reference,
                read.mapping,
                noisy_method,
                read.kinds,
                read.scales,
                bloom_key=key if encoding != "reference" else None,
            )
            name = "reference release" if encoding == "reference" else "bloom distances"
            noisy[f"{name} sigma {sigma:g}"] = reference_release(tables, truth, release, args.seed)
    rows = {
        **noisy,
        "reference release": reference_release(tables, truth, agreement, args.seed),
        "bloom release": bloom_release(tables, truth, bloom, args.seed),
        "anonlink (best threshold)": {
            **{k: peer.best.as_dict()[k] for k in ("precision", "recall", "f1")},
            "threshold": peer.best.threshold,
            "seconds": round(peer.seconds["encode"] + peer.seconds["match"], 1),
            "bytes_per_party": 128 * tables[0].__len__(),  # one 1,024-bit CLK per record
            "leakage": anonlink_leakage(args.records_a, fields, args.seed),
        },
    }
    result = {
        "command": "python benchmarks/bloom_compare.py "
        + " ".join(
            f"--{k.replace('_', '-')} " + (" ".join(map(str, v)) if isinstance(v, list) else str(v))
            for k, v in vars(args).items()
            if v is not None
        ),
        "machine": machine(),
        "records": [len(t) for t in tables],
        "bloom": {"bits": args.bits, "hashes": args.hashes, "attributes": list(bloom.attributes)},
        "rows": rows,
        "wall_seconds": round(time.perf_counter() - began, 1),
    }
    print(
        f"{'release':<34} {'P':>7} {'R':>7} {'F1':>7} {'s':>6} {'KB/party':>9} {'re-id':>6} "
        f"{'tau':>7} {'epsilon':>8}"
    )
    for name, row in rows.items():
        leak = row.get("leakage", {}).get("records_reidentified")
        terms = row.get("noise", {})
        print(
            f"{name:<34} {row['precision']:7.4f} {row['recall']:7.4f} {row['f1']:7.4f} "
            f"{row['seconds']:6.1f} {row['bytes_per_party'] / 1e3:9.0f} "
            + ("     -" if leak is None else f"{leak:6.1%}")
            + f" {terms.get('tau', '-'):>7} {terms.get('epsilon', '-'):>8}"
        )
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
