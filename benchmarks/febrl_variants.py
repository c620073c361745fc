"""FEBRL4 (or any two record files with a truth file) linked in one process under method
variants, to choose the daemon's defaults for real data: prints precision, recall and F1 of
the agreed linkage per variant.

    python benchmarks/febrl_variants.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --variant error_model=registers ...
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pprl.party.config import records_schema
from pprl.party.local import load_schema, read_truth
from pprl.protocol import pipeline
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.randomness import Randomness
from pprl.protocol.records import load_records
from pprl.protocol.reference import load_reference


def _value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records-a", type=Path, required=True)
    parser.add_argument("--records-b", type=Path, required=True)
    parser.add_argument("--truth", type=Path, required=True)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--schema", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant", action="append", default=[], help="KEY=VALUE[,KEY=VALUE] of [method]"
    )
    args = parser.parse_args()
    schema = load_schema(args.schema)
    records = schema.get("records", {})
    attributes = records_schema(records, args.schema)
    kinds = {attribute.name: attribute.kind for attribute in attributes}
    scales = {a.name: a.scale for a in attributes if a.scale is not None}
    policy = records.get("on_bad_value", "error")
    alice = load_records(args.records_a, records.get("id_column", "id"), attributes, policy)
    bob = load_records(args.records_b, records.get("id_column", "id"), attributes, policy)
    truth = read_truth(args.truth)
    reference = load_reference(args.reference)
    mapping = [tuple(entry) for entry in schema["reference"]["mapping"]]
    for variant in args.variant or [""]:
        choices = dict(schema.get("method", {}))
        for item in filter(None, variant.split(",")):
            key, _, value = item.partition("=")
            choices[key] = _value(value)
        method = method_params(**choices)
        agreement = pipeline.Agreement(reference, mapping, method, kinds, scales)
        began = time.perf_counter()
        seeds = (Randomness(args.seed, "alice"), Randomness(args.seed, "bob"))
        linkage = pipeline.link_in_process(agreement, alice.attributes, bob.attributes, seeds)
        found = {(alice.ids[a], bob.ids[b]) for a, b in linkage.agreed}
        quality = linkage_quality(found, truth)
        print(
            f"{variant or 'schema defaults':45s} precision {quality.precision:.4f} "
            f"recall {quality.recall:.4f} F1 {quality.f1:.4f} "
            f"({time.perf_counter() - began:.1f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
