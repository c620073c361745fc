"""What a linkage around a join hidden inside a two-party computation would hold, link and
reveal, modelled in the clear on the sealed mode's own keys and classifiers
(docs/research/sealed.md, "A join inside a secure computation").

The join is the hash bins' (`lab.hash_bins`: each party's entries in the bins their
keys hash to, C a bin), as SPU computes it (benchmarks/secure_join_spu.py). Each pair the bins
hold is scored by both parties' classifiers as sealed scoring computes them (the scaled forms
and the agreed thresholds, without CKKS's rare sign errors near a threshold). Then the
computation opens only the slots whose keys meet and which both classifiers accept; each party
is told its own bucket for those, puts them one to one by it, and the two are intersected, as
today. Nothing of this runs inside here: the model says what such a pipeline would link and
reveal before anyone builds it.

Reported per capacity (and for the keys' whole join, no bins): the non-private linker's links
the bins hold (the issue's completeness: every pair scored, no noise, gate off), F1, the
slots a computation would hold (bins x C x C), and what the opened slots tell beyond the
links: each party's rows without a partner in the other file that an opened slot puts next to
one of the other party's rows. A peer holding a list of people then knows that someone close
to its row, sharing a key with it, is in the file.

    python benchmarks/hidden_pipeline_model.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--recipes R] \\
        [--capacities 4,8,16] --json out.json
"""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import Any

import numpy as np

from lab.hash_bins import (
    KEY_BITS,
    binned,
    binned_pairs,
    bins_in_the_clear,
    hashed,
    plaintext_join,
)
from lab.in_process import (
    add_table_arguments,
    link_tables,
    plain_agreement,
    run_command,
    scoring_forms,
    sealed_inputs,
    sealed_parties,
    without_partners,
)
from lab.result_file import write_result
from pprl.protocol.data.records import RecordTable
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.sealed import linear_form, session

PARTIES = ("alice", "bob")
Pairs = set[tuple[int, int]]


def opened(buckets: dict[str, np.ndarray], level: int) -> np.ndarray:
    """The pairs the computation would open: both classifiers' scores at or above the
    `level`-th threshold (1: both accept). One comparison a slot and classifier inside."""
    return (buckets["alice"] >= level) & (buckets["bob"] >= level)


def without_partner_next_to(found: Pairs, alone: dict[str, set[int]]) -> dict[str, int]:
    """Per party, its rows without a partner that `found` pairs with a row of the other's."""
    seen = {"alice": {i for i, _ in found}, "bob": {j for _, j in found}}
    return {name: len(seen[name] & alone[name]) for name in PARTIES}


def partners_removed(
    tables: dict[str, RecordTable], truth: set[tuple[str, str]], share: float, rng: Any
) -> tuple[dict[str, RecordTable], set[tuple[str, str]]]:
    """Alice's partners of a `share` of Bob's rows removed (`without_partners`), so that each
    file holds people the other does not, and the truth that is left."""
    alice, bob = tables["alice"], tables["bob"]
    split = without_partners(alice, bob, truth, share, rng)
    alone = {record for record, out in zip(bob.ids, split.unpartnered, strict=True) if out}
    removed = {a for a, b in truth if b in alone}
    kept_ids = [record for record in alice.ids if record not in removed]
    kept = RecordTable(alice.path, kept_ids, split.alice)
    return {"alice": kept, "bob": bob}, {(a, b) for a, b in truth if a not in removed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument("--capacities", default="4,8,16", help="bin capacities modelled")
    parser.add_argument(
        "--levels",
        default="1",
        help="thresholds both scores must reach for a slot to be opened (1: both accept)",
    )
    parser.add_argument(
        "--unpartnered",
        type=float,
        default=0.3,
        help="share of Bob's rows whose partner is removed from Alice's file, as the attacks do",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args, args.recipes)
    read = inputs.read
    tables, truth = partners_removed(
        inputs.tables, inputs.truth, args.unpartnered, np.random.default_rng(args.seed)
    )
    agreement = inputs.daemon_agreement()
    digest = agreement.digest()
    parties = sealed_parties(agreement, tables, inputs.recipes, args.seed)
    forms = scoring_forms(agreement, parties)
    thresholds = session.setting(
        agreement.method.sealed_crypto, agreement.method.sealed_thresholds
    ).thresholds
    # Rows are released rows (each party's secret order), as the keys and forms are.
    row_of = {
        name: {
            tables[name].ids[record]: row for row, record in enumerate(parties.released[name].order)
        }
        for name in PARTIES
    }
    ids = {name: [tables[name].ids[r] for r in parties.released[name].order] for name in PARTIES}
    true_rows = {(row_of["alice"][a], row_of["bob"][b]) for a, b in truth}
    alone = {
        "alice": set(range(len(ids["alice"]))) - {i for i, _ in true_rows},
        "bob": set(range(len(ids["bob"]))) - {j for _, j in true_rows},
    }
    linker = link_tables(
        (tables["alice"], tables["bob"]), truth, plain_agreement(read, inputs.reference)
    ).found
    linker_rows = {(row_of["alice"][a], row_of["bob"][b]) for a, b in linker}
    salt = secrets.token_bytes(16)
    keys = {name: hashed(parties.keys[name], salt, KEY_BITS[64]) for name in PARTIES}
    y = {
        name: linear_form.evaluator_part(parties.units[peer], forms[name].evaluator)
        for name, peer in (("alice", "bob"), ("bob", "alice"))
    }

    def linked(pairs: Pairs, level: int) -> dict[str, Any]:
        """Both classifiers on `pairs`, the opened ones one to one each, intersected."""
        every = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        a, b = every[:, 0], every[:, 1]
        buckets = {
            "alice": forms["alice"].buckets(y["alice"], a, b, thresholds),
            "bob": forms["bob"].buckets(y["bob"], b, a, thresholds),
        }
        shown = opened(buckets, level)
        kept = {}
        for name, own in (("alice", every[shown]), ("bob", every[shown][:, ::-1])):
            found = session.one_to_one(own, buckets[name][shown], name == "alice", digest)
            kept[name] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
        links = kept["alice"] & {(j, i) for i, j in kept["bob"]}
        quality = linkage_quality({(ids["alice"][i], ids["bob"][j]) for i, j in links}, truth)
        revealed = {tuple(p) for p in every[shown].tolist()}
        beside = without_partner_next_to(revealed - links, alone)
        return {
            "opened_at_threshold": thresholds[level - 1],
            "pairs_scored": len(every),
            "linker_links_held": round(len(linker_rows & pairs) / max(1, len(linker_rows)), 4),
            "true_pairs_held": len(true_rows & pairs),
            "pairs_opened": len(revealed),
            "links": len(links),
            "precision": round(quality.precision, 4),
            "recall": round(quality.recall, 4),
            "f1": round(quality.f1, 4),
            "rows_without_partner_in_an_opened_pair_beyond_the_links": {
                name: round(count / max(1, len(alone[name])), 4) for name, count in beside.items()
            },
            "rows_without_partner_in_a_link": {
                name: round(count / max(1, len(alone[name])), 4)
                for name, count in without_partner_next_to(links, alone).items()
            },
        }

    result: dict[str, Any] = {
        "recipes": inputs.recipes,
        "rows": {name: len(ids[name]) for name in PARTIES},
        "unpartnered": args.unpartnered,
        "rows_without_partner": {name: len(alone[name]) for name in PARTIES},
        "entries": {name: sum(map(len, keys[name])) for name in PARTIES},
        "linker_links": len(linker_rows),
        "by_join": [],
    }
    joins: list[tuple[dict[str, Any], Pairs]] = [
        (
            {"join": "every pair sharing a key (no bins)"},
            plaintext_join(keys["alice"], keys["bob"])[0],
        )
    ]
    rng = np.random.default_rng(args.seed)
    for capacity in (int(c) for c in args.capacities.split(",") if c):
        data = binned(keys["alice"], keys["bob"], capacity, 64, rng)
        held = binned_pairs(bins_in_the_clear(data), data)
        slots = int(data["keys_a"].size * capacity)
        joins.append(({"join": f"hash bins, C = {capacity}", "slots": slots}, held))
    for label, pairs in joins:
        for level in (int(v) for v in args.levels.split(",") if v):
            result["by_join"].append(label | linked(pairs, level))
    for row in result["by_join"]:
        print(row, flush=True)
    if args.json:
        result["command"] = run_command(args)
        write_result(args.json, result)


if __name__ == "__main__":
    main()
