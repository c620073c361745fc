"""FEBRL4 (or any two record files with a truth file) linked in one process under method
variants, to choose the daemon's defaults for real data: prints precision, recall and F1 of
the agreed linkage per variant.

    python benchmarks/febrl_variants.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --variant error_model=registers ...
"""

from __future__ import annotations

import argparse

from lab.in_process import add_table_arguments, link_tables, method_choices, schema_tables
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol.agreement import Agreement
from pprl.protocol.method import method_params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant", action="append", default=[], help="KEY=VALUE[,KEY=VALUE] of [method]"
    )
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    truth = read_truth(args.truth)
    reference = load_reference(args.reference)
    for variant in args.variant or [""]:
        method = method_params(**method_choices(read.method, variant))
        agreement = Agreement(reference, read.mapping, method, read.kinds, read.scales)
        outcome = link_tables(read.tables, truth, agreement, args.seed)
        quality = outcome.quality
        print(
            f"{variant or 'schema defaults':45s} precision {quality.precision:.4f} "
            f"recall {quality.recall:.4f} F1 {quality.f1:.4f} ({outcome.seconds:.1f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
