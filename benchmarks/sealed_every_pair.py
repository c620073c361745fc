"""Sealed linkage with no blocking keys, in one process: every pair's sign under CKKS
(lab.every_pair), then the accepted pairs in conflict ranked as the graph
join ranks its candidates (real CKKS, the agreed thresholds), each party one to one by its
buckets, the two intersected, on the models a daemon trains.

What it answers: what closing the keys' two gaps on names alone (the linker's pairs they
miss, and who is in the peer's file among the people sharing a key) costs in time and bytes,
and what the signs of every pair tell a scoring party instead (docs/research/sealed.md, "Every pair,
no keys").

    python benchmarks/sealed_every_pair.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--rows N] --json out.json
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from lab import every_pair
from lab.in_process import (
    add_table_arguments,
    run_command,
    scoring_forms,
    sealed_inputs,
    sealed_parties,
    with_partners,
)
from lab.result_file import write_result
from lab.sealed_round_trip import round_trip
from pprl.files.sealed_bytes import dumped, dumped_ciphertext, evaluation_keys, loaded_ciphertext
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import linear_form, scoring, session

PARTIES = ("alice", "bob")


def guessed_from_signs(
    accepted: np.ndarray,
    own: dict[str, list[str]],
    peer: dict[str, list[str]],
    partner_of_peer: np.ndarray,
) -> dict[str, Any]:
    """The scoring party's attack on its signs, its own file as the dictionary: each peer
    row's name guessed as the most common value among the own records its classifier accepts
    with it, its true partner left out (as if absent from the file: the people without a
    partner). Returns the share of the peer's rows (a name present) whose name, and whose
    every name at once, is guessed right."""
    right = {name: 0 for name in own}
    every, present = 0, {name: 0 for name in own}
    for j in range(accepted.shape[1]):
        rows = np.flatnonzero(accepted[:, j])
        rows = rows[rows != partner_of_peer[j]]
        hits = []
        for name, values in own.items():
            truth = peer[name][j]
            if not truth:
                continue
            present[name] += 1
            guess = Counter(values[i] for i in rows if values[i]).most_common(1)
            hits.append(bool(guess) and guess[0][0] == truth)
            right[name] += hits[-1]
        every += bool(hits) and all(hits) and len(hits) == len(own)
    rows = accepted.shape[1]
    out = {f"{name}_right": round(right[name] / max(present[name], 1), 4) for name in own}
    # The guess without the signs: every row given the own file's most common value.
    for name, values in own.items():
        mode = Counter(v for v in values if v).most_common(1)[0][0]
        hits = sum(v == mode for v in peer[name])
        out[f"{name}_right_without_signs"] = round(hits / max(present[name], 1), 4)
    return out | {"every_name_right": round(every / rows, 4), "peer_rows": rows}


def signs_sealed(
    keys: scoring.SecretKeys,
    columns: np.ndarray,
    peer: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Every pair's sign through the bytes the wire would carry: (rows, peer rows) accepted,
    and the seconds and bytes of each side."""
    began = time.perf_counter()
    sent = [
        [dumped_ciphertext(item, keys.context) for item in block]
        for block in every_pair.encrypted_blocks(keys, columns)
    ]
    public, conjugation = dumped(keys.public), dumped(keys.conjugation)
    encrypt_s = time.perf_counter() - began
    began = time.perf_counter()
    context = scoring.seal_context(keys.setting)
    held = evaluation_keys(context, public, conjugation)
    received = [[loaded_ciphertext(context, data, seeded=True) for data in b] for b in sent]
    signs = every_pair.Signs(keys, len(columns), len(peer))
    back = 0
    decrypt_s = 0.0
    for result in every_pair.evaluated(
        context, held, received, len(columns), peer, keys.setting, rng
    ):
        data = dumped_ciphertext(result, context)
        back += len(data)
        mark = time.perf_counter()
        signs.add(loaded_ciphertext(keys.context, data, seeded=False))
        decrypt_s += time.perf_counter() - mark
    evaluate_s = time.perf_counter() - began - decrypt_s
    assert signs.complete
    sent_bytes = len(public) + sum(len(d) for block in sent for d in block)
    return signs.accepted, {
        "encrypt_s": round(encrypt_s, 1),
        "evaluate_s": round(evaluate_s, 1),
        "decrypt_s": round(decrypt_s, 1),
        "mb_sent": round(sent_bytes / 1e6, 1),
        "mb_returned": round(back / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument(
        "--rows",
        type=int,
        default=0,
        help="Alice's first N records and their partners (0: both files whole)",
    )
    parser.add_argument(
        "--plaintext",
        action="store_true",
        help="the signs from the scores in the clear (no time or bytes), as CKKS computes "
        "them up to its sign errors near 0",
    )
    parser.add_argument(
        "--rank-in-clear",
        action="store_true",
        help="the accepted pairs ranked from their scores in the clear, their ciphertexts "
        "counted from the layout instead of made (at 5,000 a side they are gigabytes)",
    )
    parser.add_argument(
        "--accept-above",
        type=float,
        default=0.0,
        help="with --plaintext: a pair accepted only above this score (one of the agreed "
        "thresholds, so that the evaluator could subtract it as it does each threshold)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.accept_above and not args.plaintext:
        parser.error("--accept-above is measured with --plaintext only")
    inputs = sealed_inputs(args)
    read = inputs.read
    tables = with_partners(inputs.tables, inputs.truth, args.rows)
    held_a, held_b = set(tables["alice"].ids), set(tables["bob"].ids)
    truth = {(a, b) for a, b in inputs.truth if a in held_a and b in held_b}
    agreement = inputs.daemon_agreement()
    if mover_groups(agreement):
        raise SystemExit("a movers' alternative is not measured here")
    digest = agreement.digest()
    parties = sealed_parties(agreement, tables, inputs.recipes, args.seed)
    released, units = parties.released, parties.units
    ckks = session.setting(agreement.method.sealed_crypto, agreement.method.sealed_thresholds)
    rng = np.random.default_rng(args.seed)
    forms = scoring_forms(agreement, parties)

    # Rows in each party's secret order, and which pairs are true.
    order = {name: released[name].order for name in PARTIES}
    position = {
        name: {tables[name].ids[o]: row for row, o in enumerate(order[name])} for name in PARTIES
    }
    true_pairs = np.array(
        [(position["alice"][a], position["bob"][b]) for a, b in truth], dtype=np.int64
    ).reshape(-1, 2)

    names = [n for n, kind in read.kinds.items() if kind == "name"]
    named = {
        party: {n: [tables[party].attributes[n][o] for o in order[party]] for n in names}
        for party in PARTIES
    }
    results: dict[str, Any] = {"rows": {n: len(tables[n].ids) for n in PARTIES}, "sides": {}}
    kept: dict[str, set[tuple[int, int]]] = {}
    signs_seconds = 0.0
    for scorer, evaluator_party in (("alice", "bob"), ("bob", "alice")):
        form = forms[scorer]
        x, c, evaluator, live = form.x, form.c, form.evaluator, form.live
        y = linear_form.evaluator_part(units[evaluator_party], evaluator)
        columns = every_pair.columns_of(x, c, live)
        peer = every_pair.peer_columns(y, live)
        began = time.perf_counter()
        if args.plaintext:
            accepted = (columns @ peer.T) > args.accept_above
            side: dict[str, Any] = {}
        else:
            keys = scoring.secret_keys(ckks)
            accepted, side = signs_sealed(keys, columns, peer, rng)
        signs_seconds += time.perf_counter() - began
        wrong = int(np.count_nonzero(accepted != ((columns @ peer.T) > args.accept_above)))
        own_true = true_pairs if scorer == "alice" else true_pairs[:, ::-1]
        partner = np.full(len(columns), -1)
        partner[own_true[:, 0]] = own_true[:, 1]
        has = partner >= 0
        with_partner = accepted[np.flatnonzero(has), partner[has]]
        lookalike = accepted.copy()
        lookalike[np.flatnonzero(has), partner[has]] = False
        pairs = np.argwhere(accepted)
        # Rank only the accepted pairs in conflict, as the graph join ranks its candidates.
        began = time.perf_counter()
        placed = session.score_layout(pairs, ckks, columns.shape[1])
        if args.plaintext or args.rank_in_clear or not len(pairs):
            scores = np.einsum("ij,ij->i", columns[pairs[:, 0]], peer[pairs[:, 1]])
            buckets = np.searchsorted(np.asarray(ckks.thresholds), scores, side="left")
            rounds = sum(placed.batch_rounds(b) for b in range(placed.batches))
            ranked: dict[str, Any] = {
                "rank_ciphertexts_sent": placed.batches * ckks.ciphertexts(columns.shape[1]),
                "rank_ciphertexts_returned": rounds * ckks.threshold_ciphertexts,
            }
        else:
            keys = scoring.secret_keys(ckks)
            run = round_trip(keys, x, c, y, placed, rng, live=live)
            buckets = scoring.buckets(keys, run.returned, placed, len(pairs))
            ranked = {
                "rank_s": round(time.perf_counter() - began, 1),
                "rank_mb_sent": round(run.bytes_sent / 1e6, 1),
                "rank_mb_returned": round(run.bytes_returned / 1e6, 1),
            }
        found = session.one_to_one(
            pairs, buckets, scorer == "alice", digest, agreement.method.assignment
        )
        kept[scorer] = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
        partner_of_peer = np.full(len(peer), -1)
        partner_of_peer[own_true[:, 1]] = own_true[:, 0]
        attack = guessed_from_signs(
            accepted, named[scorer], named[evaluator_party], partner_of_peer
        )
        results["sides"][scorer] = {
            "columns": int(columns.shape[1]),
            "pairs_accepted": len(pairs),
            "signs_wrong": wrong,
            "true_pairs_accepted": int(with_partner.sum()),
            "true_pairs": int(has.sum()),
            "rows_with_a_lookalike_accepted": int(lookalike.any(axis=1).sum()),
            "rows_without_a_partner_with_an_accept": int(accepted[~has].any(axis=1).sum()),
            "rows_without_a_partner": int((~has).sum()),
            "in_conflict": int(np.count_nonzero(placed.ranked[placed.pair_of >= 0])),
            "guessed_from_signs": attack,
            **side,
            **ranked,
        }
        print(scorer, results["sides"][scorer], flush=True)
    agreed = kept["alice"] & {(r, c) for c, r in kept["bob"]}
    a_ids, b_ids = tables["alice"].ids, tables["bob"].ids
    linked = {(a_ids[order["alice"][r]], b_ids[order["bob"][c]]) for r, c in agreed}
    quality = linkage_quality(linked, truth)
    results |= {
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
        "signs_s": round(signs_seconds, 1),
    }
    print(
        f"every pair: P {quality.precision:.4f} R {quality.recall:.4f} F1 {quality.f1:.4f}"
        f"  signs {signs_seconds:.1f} s",
        flush=True,
    )
    if args.json:
        results["command"] = run_command(args)
        write_result(args.json, results)


if __name__ == "__main__":
    main()
