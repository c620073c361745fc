"""How much of the plaintext the peer recovers from the smashed tensors it receives.

The peer must know the reference set to take part, so it can smash any public name list
itself and look the received vectors up. This measures that attack on the demo data:

    .venv/bin/python benchmarks/dictionary_attack.py --size 2000 --reference-rows 20 200 1000

A value counts as re-identified when exactly one dictionary name has its distance vector
(the mapping entry's row of the tensor) and that name is the true value.
"""

from __future__ import annotations

import argparse

import numpy as np

from pprl.protocol.data import synthetic
from pprl.protocol.privacy.audit import audit_entry
from pprl.protocol.vectors.smashing import smash_values


def reidentified(values: list[str], dictionary: list[str], reference: list[str]) -> np.ndarray:
    """Per value: True when its vector names exactly one dictionary entry, the right one."""
    audit = audit_entry(
        smash_values(values, reference), values, dictionary, smash_values(dictionary, reference)
    )
    return audit.exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reference-rows", type=int, nargs="+", default=[20, 200, 1000])
    args = parser.parse_args()
    census = synthetic.census_names()
    dictionaries = {"first": list(census.first.names), "last": list(census.last.names)}
    people = synthetic.generate(args.size, args.seed).alice
    print(
        f"dictionary: census first names ({len(dictionaries['first']):,}) and surnames "
        f"({len(dictionaries['last']):,}); targets: {len(people):,} generated records\n"
    )
    print(
        "| reference rows | first names re-identified | surnames re-identified "
        "| records with first and last re-identified |"
    )
    print("|---|---|---|---|")
    for rows in args.reference_rows:
        reference = synthetic.default_reference(rows)
        hits = {
            attr: reidentified(
                [getattr(p, attr) for p in people], dictionaries[attr], reference[attr]
            )
            for attr in ("first", "last")
        }
        both = hits["first"] & hits["last"]
        print(
            f"| {rows} | {hits['first'].mean():.1%} | {hits['last'].mean():.1%} "
            f"| {both.mean():.1%} |"
        )


if __name__ == "__main__":
    main()
