"""What the kernel model's random features cost, apart from the parties' training draws: in
one process, per training draw (`--seeds`), F1 over several draws of the random features
(`--draws`; a daemon's come from the run's agreement digest, so they change run to run) at
the agreed count and at a count large enough to stand for the exact kernel (`--many`), on
the pairs the keys join (both classifiers on every pair, each party one to one by its
buckets, the two intersected: the graph join, buckets from the scaled scores in the clear).

    python benchmarks/sealed_feature_draws.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml --json out.json
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import (
    SealedInputs,
    SealedParties,
    add_table_arguments,
    run_command,
    sealed_inputs,
    sealed_parties,
)
from lab.result_file import write_result
from pprl.protocol.agreement import Agreement
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.sealed import linear_form, session
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.kernel_features import RandomFeatures
from pprl.protocol.sealed.shared_keys import shared_key_pairs

PARTIES = ("alice", "bob")


@dataclass(frozen=True)
class Draw:
    """One training draw of both parties and the pairs the keys join (rows in the parties'
    release orders)."""

    parties: SealedParties
    pairs: np.ndarray


def f1_of(agreement: Agreement, inputs: SealedInputs, draw: Draw, count: int, label: str) -> float:
    """F1 of both parties' buckets through `count` random features an entry, drawn from the
    digest and `label`, on the draw's pairs; each scoring party's kernel widths its own, as
    in a run."""
    digest = agreement.digest()
    ckks = session.setting(agreement.method.sealed_crypto, agreement.method.sealed_thresholds)
    units, models, kept = draw.parties.units, draw.parties.models, {}
    for name, peer, own in (("alice", "bob", draw.pairs), ("bob", "alice", draw.pairs[:, ::-1])):
        agreed = evaluator_plaintext(agreement, models[name], digest).kernel
        if agreed is None:
            raise SystemExit("the schema's model is linear: no random features to measure")
        kernel = RandomFeatures(agreed.widths, count, f"{digest}|{label}", agreed.exact)
        evaluator = linear_form.Peer(kernel)
        x, c = linear_form.scorer_part(models[name], units[name], evaluator)
        own_y = linear_form.evaluator_part(units[name], evaluator)
        entries = units[name].shape[1]
        x, c, _ = linear_form.scaled_forms(x, c, None, own_y, entries)
        y = linear_form.evaluator_part(units[peer], evaluator)
        scores = c[own[:, 0]] + np.einsum("ij,ij->i", x[own[:, 0]], y[own[:, 1]])
        buckets = np.searchsorted(np.asarray(ckks.thresholds), scores, side="left")
        found = session.one_to_one(own, buckets, name == "alice", digest)
        kept[name] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
    both = kept["alice"] & {(j, i) for i, j in kept["bob"]}
    ids_a, ids_b = inputs.tables["alice"].ids, inputs.tables["bob"].ids
    oa, ob = (draw.parties.released[name].order for name in PARTIES)
    return linkage_quality({(ids_a[oa[i]], ids_b[ob[j]]) for i, j in both}, inputs.truth).f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument("--seeds", default="1,2,3", help="the parties' training draws")
    parser.add_argument("--draws", type=int, default=5, help="feature draws per training draw")
    parser.add_argument("--many", type=int, default=2048, help="features standing for the kernel")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args, args.recipes)
    tables = inputs.tables
    agreement = inputs.daemon_agreement()
    count = agreement.method.sealed_kernel_features
    results: dict[str, Any] = {"recipes": inputs.recipes, "features": count, "rows": []}
    for seed in (int(v) for v in args.seeds.split(",") if v):
        parties = sealed_parties(agreement, tables, inputs.recipes, seed)
        keys = [[[key.encode() for key in row] for row in parties.keys[name]] for name in PARTIES]
        draw = Draw(parties, shared_key_pairs(*keys))
        by_draw = [f1_of(agreement, inputs, draw, count, f"draw {d}") for d in range(args.draws)]
        many = f1_of(agreement, inputs, draw, args.many, "many")
        row = {
            "seed": seed,
            "pairs": len(draw.pairs),
            "f1_by_draw": by_draw,
            "f1_median": statistics.median(by_draw),
            "f1_many": many,
        }
        results["rows"].append(row)
        spread = f"{min(by_draw):.4f}-{max(by_draw):.4f}"
        print(
            f"training draw {seed}: {count} features, median of {args.draws} feature draws "
            f"{row['f1_median']:.4f} ({spread}); {args.many} features {many:.4f}",
            flush=True,
        )
    if args.json:
        results["command"] = run_command(args)
        write_result(args.json, results)


if __name__ == "__main__":
    main()
