"""The hidden join against the graph join, in one process, on the same keys and models: real
blinding (two scalars a party for the hidden join) and real CKKS scoring of both classifiers,
each party's accepted pairs one to one by bucket, the two intersected. Reports quality, the
seconds of the keys and of the scoring, and the bytes each party sends, for both joins
(pprl.protocol.sealed.hidden_join; docs/research/sealed.md, "A join neither party reads").
With `--names-per-row K` each row also names at most K slots, so that the evaluator could
bound what it resolves by K times the declared rows (docs/research/sealed.md, "At most K
slots a row").

    python benchmarks/sealed_hidden_join.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml --json out.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from lab.in_process import (
    add_table_arguments,
    run_command,
    scoring_forms,
    sealed_inputs,
    sealed_parties,
)
from lab.result_file import write_result
from lab.sealed_round_trip import round_trip
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import hidden_join, linear_form, scoring, session
from pprl.protocol.sealed.blinding import Blinder
from pprl.protocol.sealed.recipes import group_size

PARTIES = ("alice", "bob")


def capped(join: hidden_join.Join, count: int) -> hidden_join.Join:
    """The join with each entry's rows cut to its first `count` (the evaluator's order is a
    random one): what a fixed count would score; the dummies filling the rest decide reject
    and so add nothing but slots."""
    kept = np.minimum(join.counts(), count)
    rows = np.concatenate(
        [join.rows[start : start + n] for start, n in zip(join.starts[:-1], kept, strict=True)]
        or [np.zeros(0, dtype=np.int64)]
    )
    starts = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)
    return hidden_join.Join(starts, rows.astype(np.int64))


# How a row's ties in its best bucket are ordered when it names at most K slots
# (--names-per-row): the slots' order (the scorer's random entry order, then the evaluator's
# within an entry); the entries the evaluator told the fewest rows first; or the entries whose
# key the fewest of the scorer's own rows hold first (what it knows whatever the counts).
TIES = ("first", "count", "own")


def tie_order(rule: str, told: np.ndarray, own: np.ndarray) -> np.ndarray:
    """The slots in the order a row names its ties in under `rule` (TIES): `told` and `own`
    are each slot's entry's count told by the evaluator and held among the scorer's rows."""
    slots = np.arange(len(told))
    if rule == "first":
        return slots
    return np.lexsort((slots, told if rule == "count" else own))


def capped_names(
    own_rows: np.ndarray,
    buckets: np.ndarray,
    most: np.ndarray,
    levels: int,
    fallback: np.ndarray,
    order: np.ndarray,
) -> np.ndarray:
    """best_slots with the slots taken in `order`: its ties go to the first in that order."""
    named = np.zeros(len(buckets), dtype=bool)
    named[order] = hidden_join.best_slots(
        own_rows[order], buckets[order], most, levels, fallback[order]
    )
    return named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument(
        "--levels",
        default="0,1,2",
        help="naming rules measured: each row's accepted slots within this many buckets of "
        "its best (besides every accepted slot)",
    )
    parser.add_argument(
        "--plaintext",
        action="store_true",
        help="buckets from the scaled scores in the clear, as CKKS computes them up to its "
        "sign errors near a threshold (no time or bytes)",
    )
    parser.add_argument(
        "--projected-components",
        type=int,
        default=0,
        help="[method] projected_components instead of the schema's (0: the schema's)",
    )
    parser.add_argument(
        "--kernel-features",
        type=int,
        default=-1,
        help="[method] sealed_kernel_features instead of the schema's or the daemons' default "
        "(-1: those)",
    )
    parser.add_argument(
        "--fixed-count",
        type=int,
        default=0,
        help="with --plaintext: every entry told this count, its rows cut to it (the "
        "evaluator's first, a random choice) and the rest of its slots dummies that decide "
        "reject, so that counts tell nothing (not built in the daemons; 0: the true counts)",
    )
    parser.add_argument(
        "--names-per-row",
        default="",
        help="with --levels: also name at most K slots a row (K comma-separated, e.g. 1,2,3), "
        "so that the evaluator could resolve at most K times the scorer's declared rows "
        "(empty: only today's bound, a row's entries)",
    )
    parser.add_argument(
        "--ties",
        default="first",
        help=f"with --names-per-row: which of a row's ties it names first, comma-separated "
        f"among {', '.join(TIES)} (tie_order)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.fixed_count and not args.plaintext:
        parser.error("--fixed-count is measured with --plaintext only")
    per_row = [int(v) for v in args.names_per_row.split(",") if v]
    ties = [v for v in args.ties.split(",") if v]
    if set(ties) - set(TIES):
        parser.error(f"--ties takes {', '.join(TIES)}")
    inputs = sealed_inputs(args, args.recipes)
    tables, truth = inputs.tables, inputs.truth
    recipes_text = inputs.recipes
    changes: dict[str, Any] = {}
    if args.kernel_features >= 0:
        changes["sealed_kernel_features"] = args.kernel_features
    if args.projected_components:
        changes["projected_components"] = args.projected_components
    agreement = inputs.daemon_agreement(**changes)
    if mover_groups(agreement):
        raise SystemExit("a movers' alternative is not measured here")
    digest = agreement.digest()
    parties = sealed_parties(agreement, tables, recipes_text, args.seed)
    released, units, keys = parties.released, parties.units, parties.keys
    ckks = session.setting(agreement.method.sealed_crypto, agreement.method.sealed_thresholds)
    context = session.key_context(digest, "benchmark run")
    rng = np.random.default_rng(args.seed)
    forms = scoring_forms(agreement, parties)
    lives = {name: form.live for name, form in forms.items()}

    def y_of(scorer: str, evaluator_party: str) -> np.ndarray:
        return linear_form.evaluator_part(units[evaluator_party], forms[scorer].evaluator)

    def ids(found: set[tuple[int, int]]) -> set[tuple[str, str]]:
        a, b = tables["alice"].ids, tables["bob"].ids
        oa, ob = released["alice"].order, released["bob"].order
        return {(a[oa[r]], b[ob[c]]) for r, c in found}

    results: dict[str, Any] = {"recipes": recipes_text, "rows": []}

    def report(label: str, kept: dict[str, set[tuple[int, int]]], extra: dict[str, Any]) -> None:
        agreed = kept["alice"] & {(r, c) for c, r in kept["bob"]}
        q = linkage_quality(ids(agreed), truth)
        row = {"join": label, "precision": q.precision, "recall": q.recall, "f1": q.f1} | extra
        results["rows"].append(row)
        print(
            f"{label:<40} P {q.precision:.4f} R {q.recall:.4f} F1 {q.f1:.4f}  "
            + "  ".join(f"{k} {v}" for k, v in extra.items()),
            flush=True,
        )

    # -- the graph join: both parties hold every row's doubly blinded keys ------------------
    began = time.perf_counter()
    blinders = {name: Blinder() for name in PARTIES}
    once = {n: session.blinded_rows(blinders[n], context, keys[n]) for n in PARTIES}
    twice = {
        name: session.grouped(once[name][0], session.reblinded(blinders[peer], once[name][1], name))
        for name, peer in (("alice", "bob"), ("bob", "alice"))
    }
    pairs = session.candidates(twice["alice"], twice["bob"])
    key_seconds = time.perf_counter() - began
    kept, sent, score_seconds = {}, {n: 0 for n in PARTIES}, 0.0
    for name, peer, own_pairs in (("alice", "bob", pairs), ("bob", "alice", pairs[:, ::-1])):
        x, c = forms[name].x, forms[name].c
        coordinates = int(lives[name].sum()) + 1
        placed = session.score_layout(own_pairs, ckks, coordinates)
        began = time.perf_counter()
        secret = scoring.secret_keys(ckks)
        run = round_trip(secret, x, c, y_of(name, peer), placed, rng, live=lives[name])
        buckets = scoring.buckets(secret, run.returned, placed, len(own_pairs))
        score_seconds += time.perf_counter() - began
        sent[name] += run.bytes_sent
        sent[peer] += run.bytes_returned
        found = session.one_to_one(own_pairs, buckets, name == "alice", digest)
        kept[name] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
    report(
        "graph",
        kept,
        {
            "candidates": len(pairs),
            "scored": len(pairs),
            "keys_s": round(key_seconds, 1),
            "scoring_s": round(score_seconds, 1),
            "mb_sent": {n: round(v / 1e6, 1) for n, v in sent.items()},
        },
    )

    # -- the hidden join: entries without rows, joined by the evaluator only ---------------
    began = time.perf_counter()
    entry_blinder = {name: Blinder() for name in PARTIES}
    row_blinder = {name: Blinder() for name in PARTIES}
    sent = {n: 0 for n in PARTIES}
    joins, own_entries = {}, {}
    for scorer, evaluator_party in (("alice", "bob"), ("bob", "alice")):
        mine = hidden_join.entries(keys[scorer], rng, group_size(recipes_text))
        sizes, values = session.blinded_rows(entry_blinder[scorer], context, mine.keys)
        counts, rows_once = session.blinded_rows(
            row_blinder[evaluator_party], context, keys[evaluator_party]
        )
        back = session.reblinded(entry_blinder[scorer], rows_once, "rows")
        entries_twice = session.reblinded(row_blinder[evaluator_party], values, "entries")
        sent[scorer] += len(values) + len(back)
        sent[evaluator_party] += len(rows_once) + 8 * len(mine)  # + the counts
        joins[scorer] = hidden_join.joined(
            session.grouped(sizes, entries_twice),
            session.grouped(counts, back),
            rng,
        )
        own_entries[scorer] = mine
    key_seconds = time.perf_counter() - began
    levels = [int(v) for v in args.levels.split(",") if v]
    within = [(d, k, tie) for d in levels for k in [0, *per_row] for tie in (ties if k else [""])]

    def rule_name(d: int, k: int, tie: str) -> str:
        name = f"slots within {d} of the row's best"
        return name + (f", at most {k} a row, ties {tie}" if k else "")

    rules = ("every accepted slot", *(rule_name(*w) for w in within))
    declared = sum(len(keys[n]) for n in PARTIES)
    kept_by: dict[str, dict[str, set[tuple[int, int]]]] = {rule: {} for rule in rules}
    resolved = dict.fromkeys(rules, 0)
    widest = dict.fromkeys(rules, 0)  # the most slots one row named
    score_seconds, scored = 0.0, 0
    padded = 0
    for scorer, evaluator_party in (("alice", "bob"), ("bob", "alice")):
        join, mine = joins[scorer], own_entries[scorer]
        if args.fixed_count:
            join = capped(join, args.fixed_count)
            padded += args.fixed_count * len(mine)
        x, c = forms[scorer].x, forms[scorer].c
        slots = hidden_join.slot_pairs(join.counts())
        coordinates = int(lives[scorer].sum()) + 1
        placed = hidden_join.every_slot_ranked(session.score_layout(slots, ckks, coordinates))
        theirs = hidden_join.evaluator_layout(placed, join)
        own_rows = mine.rows[slots[:, 0]]
        peer_rows = join.rows[slots[:, 1]]  # what the evaluator resolves at REVEAL
        began = time.perf_counter()
        if args.plaintext:
            y = y_of(scorer, evaluator_party)
            buckets = forms[scorer].buckets(y, own_rows, peer_rows, ckks.thresholds)
        else:
            secret = scoring.secret_keys(ckks)
            run = round_trip(
                secret,
                x[mine.rows],
                c[mine.rows],
                y_of(scorer, evaluator_party),
                theirs,
                rng,
                live=lives[scorer],
            )
            buckets = scoring.buckets(secret, run.returned, placed, len(slots))
            sent[scorer] += run.bytes_sent
            sent[evaluator_party] += run.bytes_returned
        score_seconds += time.perf_counter() - began
        scored += len(slots)
        most = np.bincount(mine.rows)  # entries a row
        fallback = mine.fallback[slots[:, 0]]
        # Per slot, its entry's count as told (a fixed count tells the same of every entry),
        # and among the scorer's own rows.
        told = join.counts()[slots[:, 0]]
        if args.fixed_count:
            told = np.full(len(slots), args.fixed_count)
        own_join = hidden_join.joined(mine.keys, keys[scorer], np.random.default_rng(0))
        own = own_join.counts()[slots[:, 0]]
        named_by = [buckets > 0]
        for d, k, tie in within:
            order = tie_order(tie or "first", told, own)
            cap = np.minimum(most, k) if k else most
            named_by.append(capped_names(own_rows, buckets, cap, d, fallback, order))
        for rule, named in zip(rules, named_by, strict=True):
            resolved[rule] += int(np.count_nonzero(named))
            if named.any():
                widest[rule] = max(widest[rule], int(np.bincount(own_rows[named]).max()))
            accepted, best = hidden_join.accepted_pairs(
                own_rows[named], peer_rows[named], buckets[named]
            )
            found = session.one_to_one(accepted, best, scorer == "alice", digest)
            kept_by[rule][scorer] = set(
                zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True)
            )
    for rule in rules:
        report(
            f"hidden, naming {rule}",
            kept_by[rule],
            {
                "candidates": len(pairs),
                "scored": scored,
                "resolved": resolved[rule],
                "resolved_per_row": round(resolved[rule] / declared, 3),
                "most_a_row": widest[rule],
                **({"slots_with_dummies": padded} if args.fixed_count else {}),
                "keys_s": round(key_seconds, 1),
                "scoring_s": round(score_seconds, 1),
                "mb_sent": {n: round(v / 1e6, 1) for n, v in sent.items()},
            },
        )
    if args.json:
        results["command"] = run_command(args)
        write_result(args.json, results)


if __name__ == "__main__":
    main()
