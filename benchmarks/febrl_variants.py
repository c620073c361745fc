"""FEBRL4 (or any two record files with a truth file) linked in one process under method
variants, to choose the daemon's defaults for real data: prints precision, recall and F1 of
the agreed linkage per variant.

    python benchmarks/febrl_variants.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --variant error_model=registers ...
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pprl.bench.in_process import link_tables, method_choices
from pprl.party.config import records_schema
from pprl.party.local import load_schema, read_truth
from pprl.protocol import pipeline
from pprl.protocol.kinds import kinds_of, scales_of
from pprl.protocol.method import method_params
from pprl.protocol.records import load_records
from pprl.protocol.reference import load_reference


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
    kinds, scales = kinds_of(attributes), scales_of(attributes)
    policy = records.get("on_bad_value", "error")
    alice = load_records(args.records_a, records.get("id_column", "id"), attributes, policy)
    bob = load_records(args.records_b, records.get("id_column", "id"), attributes, policy)
    truth = read_truth(args.truth)
    reference = load_reference(args.reference)
    mapping = [tuple(entry) for entry in schema["reference"]["mapping"]]
    for variant in args.variant or [""]:
        method = method_params(**method_choices(schema.get("method", {}), variant))
        agreement = pipeline.Agreement(reference, mapping, method, kinds, scales)
        outcome = link_tables((alice, bob), truth, agreement, args.seed)
        quality = outcome.quality
        print(
            f"{variant or 'schema defaults':45s} precision {quality.precision:.4f} "
            f"recall {quality.recall:.4f} F1 {quality.f1:.4f} ({outcome.seconds:.1f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
