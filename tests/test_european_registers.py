"""The European registers generator: the same files for a seed, each phenomenon doing what it
says on the true pair it names, B's dates in their own format, namesakes among B's others."""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from collections import Counter
from datetime import datetime

import pytest

pytest.importorskip("faker")

from pprl.bench import european_registers as eu


@pytest.fixture(scope="module")
def registers() -> eu.Registers:
    return eu.generate(1500, 0.8, seed=4)


def test_a_seed_gives_the_same_registers(registers: eu.Registers) -> None:
    again = eu.generate(1500, 0.8, seed=4)
    assert again == registers
    assert eu.generate(1500, 0.8, seed=5).alice != registers.alice


def test_a_seed_gives_the_same_registers_in_every_process() -> None:
    """Whatever Python's string hashing (faker lists Italian towns from a set)."""
    code = (
        "import hashlib, json; from pprl.bench.european_registers import generate; "
        "r = generate(400, 0.8, 4); "
        "print(hashlib.sha256(json.dumps([r.alice, r.bob, r.truth]).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


def _holds(phenomenon: str, a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether B's copy shows `phenomenon` (the typos that follow may hide it now and then)."""
    written = b["first_name"] + b["last_name"]
    if phenomenon == "mover":
        return any(a[f] != b[f] for f in ("postcode", "city", "street"))
    if phenomenon == "blank":
        return sum(b[f] == "" for f in eu.BLANKABLE) == 1
    if phenomenon == "compound_cut":
        return len(a["last_name"].replace("-", " ").split()) > 1 == len(b["last_name"].split())
    if phenomenon == "nfd":
        return any(unicodedata.combining(c) for c in written)
    if phenomenon == "diacritics":
        return written.isascii() and not (a["first_name"] + a["last_name"]).isascii()
    if phenomenon == "swap":
        return b["first_name"] != a["first_name"] and b["last_name"] != a["last_name"]
    return True


def test_every_phenomenon_appears_and_does_what_it_says(registers: eu.Registers) -> None:
    alice = {row["id"]: row for row in registers.alice}
    bob = {row["id"]: row for row in registers.bob}
    assert len(registers.truth) == 1200
    seen = Counter(phenomenon for _, _, phenomenon in registers.truth)
    assert set(seen) == set(eu.PHENOMENA) and min(seen.values()) >= 10
    shown = Counter(p for a, b, p in registers.truth if _holds(p, alice[a], bob[b]))
    for phenomenon, count in seen.items():
        assert shown[phenomenon] >= 0.9 * count, phenomenon
    assert all(alice[a]["sex"] == bob[b]["sex"] for a, b, _ in registers.truth)
    blank = [p for _, b, p in registers.truth if any(bob[b][f] == "" for f in eu.BLANKABLE)]
    assert set(blank) == {"blank"}  # nothing else leaves a field blank


def test_the_two_files_write_dates_in_their_own_formats(registers: eu.Registers) -> None:
    alice = {row["id"]: row for row in registers.alice}
    bob = {row["id"]: row for row in registers.bob}
    for a_id, b_id, _ in registers.truth:
        a, b = alice[a_id]["date_of_birth"], bob[b_id]["date_of_birth"]
        if a and b:
            assert datetime.strptime(a, eu.DATE_FORMATS["a"]) == datetime.strptime(
                b, eu.DATE_FORMATS["b"]
            )


def test_some_of_bobs_others_are_namesakes_of_alices_people(registers: eu.Registers) -> None:
    partnered = {b for _, b, _ in registers.truth}
    names = {(r["first_name"], r["last_name"]) for r in registers.alice}
    others = [r for r in registers.bob if r["id"] not in partnered]
    namesakes = sum((r["first_name"], r["last_name"]) in names for r in others)
    assert len(others) == 300 and namesakes >= 30


def test_the_benchmark_links_swapped_names_only_with_the_combined_entry(tmp_path) -> None:
    """benchmarks/european_phenomena.py --extra first_name+last_name=...: a second pprl row
    whose mapping compares first and last name's sorted words together, the same for a
    swapped pair."""
    from tests.scripts import benchmark_script

    bench = benchmark_script("european_phenomena")
    data = tmp_path / "eu"
    eu.write(eu.generate(400, 0.8, seed=1), data)
    truth = bench.read_truth(data / "truth.csv")
    assert sum(p == "swap" for p in truth.values()) >= 5
    plain = bench.run_pprl(data, "names", "", truth, seed=1)
    entry = ("first_name+last_name", "first_name+last_name")
    combined = bench.run_pprl(data, "names", "", truth, seed=1, extra=(entry,))
    assert plain["recall_by_phenomenon"]["swap"] == 0.0
    assert combined["recall_by_phenomenon"]["swap"] > 0.5
    assert combined["f1"] > plain["f1"]
