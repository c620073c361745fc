"""The blocking keys' join computed inside a two-party secure computation, so that neither
party learns which keys meet, nor how many of the peer's rows hold one: what it costs
(docs/research/sealed.md, "What is missing", "A join inside a secure computation").

Each party's keys are the schema's (its default recipes, as the daemons derive them), one
entry per distinct key of a row, hashed to 48 bits (30 in the ring 2^32). SPU's Cheetah
protocol (SecretFlow's secure processing unit: two parties, semi-honest, no third party)
sorts both parties' entries together by key inside the computation and flags each entry
against its next W neighbours: the slots a fixed number a key would give, which is what
hides the counts; or, with --capacity C, by hash bins (`binned`): each party's entries in
the bins their keys hash to, C a bin with dummies of its own, and C x C equalities a bin
inside, which costs far less than the sort. Nothing is opened inside; the benchmark opens the
flags afterwards only to count the pairs they hold against the plaintext join of the same
keys. Scoring the flagged
slots and the one-to-one step would come on top, inside the same computation; they are not
run here.

SPU pins numpy below 2, so the computation runs in SPU's own environment
(benchmarks/secure_join_spu.py); without --spu-python the script only counts the entries,
joins them in plaintext and computes the window in the clear (what a larger file's cost and
completeness are computed from):

    python -m venv .venv-spu && .venv-spu/bin/pip install spu==0.9.5
    python benchmarks/secure_join_cost.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml \\
        --spu-python .venv-spu/bin/python [--rows N] [--window W | --capacity C] [--field 32] \
        --json out.json
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
import tempfile
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
from lab.in_process import add_table_arguments, run_command, sealed_inputs, with_partners
from lab.result_file import write_result
from pprl.protocol.sealed.recipes import recipe_keys


def entries(alice: list[list[int]], bob: list[list[int]]) -> dict[str, np.ndarray]:
    """One entry per key of a row: its key, its side (0 Alice, 1 Bob) and its row."""
    sides = [(0, alice), (1, bob)]
    return {
        "keys": np.array([k for _, rows in sides for row in rows for k in row], dtype=np.int64),
        "sides": np.array([s for s, rows in sides for row in rows for _ in row], dtype=np.int64),
        "rows": np.array([i for _, rows in sides for i, row in enumerate(rows) for _ in row]),
    }


def flagged_pairs(flags: np.ndarray, sides: np.ndarray, rows: np.ndarray) -> set[tuple[int, int]]:
    """The (Alice row, Bob row) pairs the opened flags hold: slot (t, t + w) for flag w,
    its entries in either order."""
    found: set[tuple[int, int]] = set()
    for w, flag in enumerate(flags, start=1):
        (t,) = np.nonzero(flag)
        first_is_alices = sides[t] == 0
        alice = np.where(first_is_alices, rows[t], rows[t + w])
        bob = np.where(first_is_alices, rows[t + w], rows[t])
        found.update(zip(alice.tolist(), bob.tolist(), strict=True))
    return found


def window_in_the_clear(
    data: dict[str, np.ndarray], window: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What secure_join_spu.join computes and opens, computed in the clear: what a window
    finds on files too large to run the computation on."""
    order = np.lexsort((np.arange(len(data["keys"])), data["sides"], data["keys"]))
    key, side, row = data["keys"][order], data["sides"][order], data["rows"][order]
    flags = [
        np.pad((key[:-w] == key[w:]) & (side[:-w] != side[w:]), (0, w))
        for w in range(1, window + 1)
    ]
    return np.stack(flags), side, row


def secure_join(
    spu_python: Path, data: dict[str, np.ndarray], options: list[str]
) -> dict[str, Any]:
    """The join run by secure_join_spu.py in SPU's environment, with its `options`."""
    script = Path(__file__).with_name("secure_join_spu.py")
    with tempfile.TemporaryDirectory() as folder:
        given, opened = Path(folder, "entries.npz"), Path(folder, "opened.npz")
        np.savez(given, **data)
        subprocess.run([*map(str, (spu_python, script, given, opened)), *options], check=True)
        with np.load(opened) as out:
            return {name: out[name] for name in out.files}


def opened_figures(
    out: dict[str, Any],
    found: set[tuple[int, int]],
    joined: set[tuple[int, int]],
    true: set[tuple[int, int]],
) -> dict[str, Any]:
    """What the run cost and what its opened flags hold (`found`) against the plaintext
    join."""
    return {
        "seconds": round(float(out["seconds"]), 2),
        "first_party_sent_bytes": int(out["sent_bytes"]),
        "first_party_received_bytes": int(out["received_bytes"]),
        "slots_in_the_computation": int(out["flags"].size),
        "pairs_found_inside": len(found),
        "share_of_the_join_found": round(len(found & joined) / max(1, len(joined)), 4),
        "false_pairs_found": len(found - joined),
        "true_pairs_found_inside": len(true & found),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument(
        "--spu-python", type=Path, help="SPU's interpreter; without it, the entries only"
    )
    parser.add_argument("--rows", type=int, default=0, help="Alice's first N and their partners")
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument(
        "--capacity", type=int, default=0, help="hash bins of C entries a side (0: the window)"
    )
    parser.add_argument(
        "--chunk", type=int, default=0, help="with --capacity: bins a computation (0: all)"
    )
    parser.add_argument("--field", type=int, choices=sorted(KEY_BITS), default=64)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args)
    tables = with_partners(inputs.tables, inputs.truth, args.rows)
    recipes = inputs.parsed_recipes()
    salt = secrets.token_bytes(16)
    keys = {
        name: hashed(
            recipe_keys(tables[name].attributes, recipes, name == "alice"),
            salt,
            KEY_BITS[args.field],
        )
        for name in ("alice", "bob")
    }
    joined, slots = plaintext_join(keys["alice"], keys["bob"])
    row_a = {record: i for i, record in enumerate(tables["alice"].ids)}
    row_b = {record: j for j, record in enumerate(tables["bob"].ids)}
    true = {(row_a[a], row_b[b]) for a, b in inputs.truth if a in row_a and b in row_b}
    result: dict[str, Any] = {
        "command": run_command(args),
        "recipes": inputs.recipes,
        "rows": {name: len(tables[name].ids) for name in keys},
        "entries": {name: sum(map(len, keys[name])) for name in keys},
        "slots_of_the_plaintext_join": slots,
        "pairs_joined_in_plaintext": len(joined),
        "true_pairs_joined_in_plaintext": len(true & joined),
    }
    options = ["--field", str(args.field)]
    if args.capacity:
        data = binned(
            keys["alice"], keys["bob"], args.capacity, args.field, np.random.default_rng()
        )
        result["capacity"] = args.capacity
        result["bins"] = len(data["keys_a"])
        in_the_clear = binned_pairs(bins_in_the_clear(data), data)
        result["share_of_the_join_the_bins_find_in_the_clear"] = round(
            len(in_the_clear) / max(1, len(joined)), 4
        )
        result["true_pairs_the_bins_find_in_the_clear"] = len(true & in_the_clear)
        options += ["--capacity", str(args.capacity), "--chunk", str(args.chunk)]
    else:
        data = entries(keys["alice"], keys["bob"])
        result["window"] = args.window
        in_the_clear = flagged_pairs(*window_in_the_clear(data, args.window))
        result["share_of_the_join_a_window_finds_in_the_clear"] = round(
            len(in_the_clear) / max(1, len(joined)), 4
        )
        options += ["--window", str(args.window)]
    if args.spu_python:
        result["protocol"] = (
            f"SPU 0.9.5, Cheetah, ring 2^{args.field}, both parties in one process (in-memory link)"
        )
        out = secure_join(args.spu_python, data, options)
        if args.capacity:
            found = binned_pairs(out["flags"], data)
        else:
            found = flagged_pairs(out["flags"], out["sides"], out["rows"])
            # A flag's padded tail is never set, so every flag row is read whole.
            result["flagged_slots_with_bobs_entry_first"] = int(
                np.sum(out["flags"] & (out["sides"] == 1))
            )
        result.update(opened_figures(out, found, joined, true))
    print(result, file=sys.stderr)
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
