"""How close the expected F1 comes to the true one: two record files with a truth file,
linked in one process (the daemons' pipeline functions) at several noise levels and at the
noise each party's default gate chooses; per level the agreed linkage's true precision,
recall and F1 beside each party's estimates, before sending (TRAIN's) and fitted to its own
links (MATCH's; pprl.protocol.expectation).

    python benchmarks/expected_quality.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --sigmas 0,1,2 --gate 0.1 --json out.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from lab.in_process import add_table_arguments, gate_sigmas, run_command, schema_tables
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.expectation import after_linking, before_sending, simulate
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.vectors.randomness import Randomness


def measure(
    agreement: Agreement,
    parties: dict[str, Any],
    truth: set[tuple[str, str]],
    randomness: dict[str, Randomness],
) -> dict[str, Any]:
    """The agreed linkage's quality and each party's estimates: before sending (TRAIN's) and
    fitted to its own links (MATCH's)."""
    alice, bob = parties["alice"], parties["bob"]
    began = time.perf_counter()
    linkage = pipeline.link_in_process(
        agreement, alice.attributes, bob.attributes, (randomness["alice"], randomness["bob"])
    )
    seconds = time.perf_counter() - began
    found = {(alice.ids[a], bob.ids[b]) for a, b in linkage.agreed}
    quality = linkage_quality(found, truth)
    row: dict[str, Any] = {
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
        "link_seconds": round(seconds, 1),
    }
    for name, side, peer in (("alice", linkage.alice, bob), ("bob", linkage.bob, alice)):
        began = time.perf_counter()
        simulations = simulate(agreement, parties[name].attributes, side.model, randomness[name])
        matches = side.matched.matches
        mean_score = float(matches.scores.mean()) if len(matches) else 0.0
        fitted = after_linking(
            simulations, len(matches), mean_score, len(parties[name].ids), len(peer.ids)
        )
        row[f"{name}_accepted"] = len(matches)
        row[f"{name}_own_links"] = _own_quality(
            side.pairs, name == "alice", alice.ids, bob.ids, truth
        )
        row[f"{name}_mean_score"] = mean_score
        row[f"{name}_before_sending"] = before_sending(simulations).as_dict()
        row[f"{name}_after_linking"] = fitted.as_dict()
        row[f"{name}_simulations"] = [s.as_dict() for s in simulations]
        row[f"{name}_seconds"] = round(time.perf_counter() - began, 1)
    return row


def _own_quality(
    pairs: set[tuple[int, int]],
    own_is_alice: bool,
    alice_ids: list[str],
    bob_ids: list[str],
    truth: set[tuple[str, str]],
) -> dict[str, float]:
    """One party's own one-to-one links (own record, peer record), before the agreement,
    against the truth: what its fitted estimate describes."""
    oriented = pairs if own_is_alice else {(a, b) for b, a in pairs}
    found = {(alice_ids[a], bob_ids[b]) for a, b in oriented}
    quality = linkage_quality(found, truth)
    return {"precision": quality.precision, "recall": quality.recall, "f1": quality.f1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--sigmas", default="0", help="comma-separated sigmas to measure at")
    parser.add_argument(
        "--gate", type=float, help="also at the noise each party's gate at this limit chooses"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    parties = dict(zip(("alice", "bob"), read.tables, strict=True))
    truth = read_truth(args.truth)
    reference = load_reference(args.reference)
    randomness = {name: Randomness(args.seed, name) for name in parties}
    # The method as a daemon with automatic noise has it: the noisy defaults (projected).
    noisy = method_params(**{**read.method, "noise_sigma": 1.0})
    base = Agreement(reference, read.mapping, noisy, read.kinds, read.scales)
    levels: list[tuple[str, float]] = [("fixed", float(s)) for s in args.sigmas.split(",") if s]
    results: dict[str, Any] = {
        "command": run_command(args),
        "rows": [],
    }
    if args.gate is not None:
        dictionary = census_dictionary(reference.columns)
        columns = {name: table.attributes for name, table in parties.items()}
        chosen = gate_sigmas(base, columns, dictionary, randomness, args.gate)
        results["gate_choice"] = chosen
        levels.append((f"gate {args.gate:g}", max(chosen.values())))
    for label, sigma in levels:
        method = method_params(**{**read.method, "noise_sigma": sigma})
        agreement = Agreement(reference, read.mapping, method, read.kinds, read.scales)
        measured = measure(agreement, parties, truth, randomness)
        row = {"level": label, "sigma": sigma, **measured}
        results["rows"].append(row)
        estimates = " | ".join(
            f"{when}: " + " ".join(f"{n} {row[f'{n}_{key}']['f1']:.3f}" for n in parties)
            for when, key in (("before sending", "before_sending"), ("after", "after_linking"))
        )
        print(
            f"{label:>10} sigma {sigma:<6g} true P {row['precision']:.3f} R {row['recall']:.3f} "
            f"F1 {row['f1']:.3f} | {estimates}",
            flush=True,
        )
    if args.json:
        write_result(args.json, results)


if __name__ == "__main__":
    main()
