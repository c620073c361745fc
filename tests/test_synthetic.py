"""Demo data: sizes, distinct people, one error per true match, a disjoint reference set."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz.distance import DamerauLevenshtein, Levenshtein

from pprl.files.generated import write_records_csv, write_reference_csv, write_truth_csv
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.error_model import error_model
from pprl.protocol.data.synthetic import (
    MISSING_LOOKALIKES,
    Person,
    SyntheticData,
    _corrupted_copy,
    census_names,
    default_reference,
    generate,
    generate_third,
    pair_truth,
)

SIZE = 2000


@pytest.fixture(scope="module")
def data() -> SyntheticData:
    return generate(SIZE, seed=5)


def _triple(person: Person) -> tuple[str, str, str]:
    return person.first, person.middle, person.last


def _values(people: list[Person]) -> set[str]:
    return {value for p in people for value in _triple(p)}


def test_census_names_are_usable_probabilities() -> None:
    census = census_names()
    assert census is census_names()
    for names in (census.first, census.last):
        assert len(names.names) == len(set(names.names)) == len(names.weights)
        assert np.all(names.weights > 0)
        assert names.weights.sum() == pytest.approx(1.0)
        assert np.all(np.diff(names.weights) <= 0)
        assert not MISSING_LOOKALIKES & set(names.names)
    assert {"JAMES", "MARY"} <= set(census.first.names)  # both sexes are merged
    assert len(census.last) > 80_000


def test_sizes_and_ids(data: SyntheticData) -> None:
    assert [p.id for p in data.alice] == [f"A{i:06d}" for i in range(1, SIZE + 1)]
    assert [p.id for p in data.bob] == [f"B{i:06d}" for i in range(1, SIZE + 1)]
    assert len(data.truth) == SIZE


def test_people_are_distinct_on_each_side(data: SyntheticData) -> None:
    for people in (data.alice, data.bob):
        assert len({_triple(p) for p in people}) == len(people)


def test_each_true_match_differs_by_one_error(data: SyntheticData) -> None:
    alice = {p.id: p for p in data.alice}
    bob = {p.id: p for p in data.bob}
    assert len({a for a, _ in data.truth}) == len({b for _, b in data.truth}) == len(data.truth)
    for alice_id, bob_id in data.truth:
        a, b = _triple(alice[alice_id]), _triple(bob[bob_id])
        differing = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        assert len(differing) == 1, (a, b)
        ((x, y),) = differing
        assert 1 <= Levenshtein.distance(x, y) <= 2  # an OCR/phonetic rule may rewrite 2 letters


def test_bob_order_reveals_nothing(data: SyntheticData) -> None:
    same_number = sum(a[1:] == b[1:] for a, b in data.truth)
    assert same_number < 0.01 * SIZE
    bob_positions = [int(b[1:]) for _, b in data.truth]  # truth is in Alice's order
    assert abs(np.corrcoef(np.arange(SIZE), bob_positions)[0, 1]) < 0.1


def test_values_are_clean_with_some_missing_middles(data: SyntheticData) -> None:
    values = _values(data.alice) | _values(data.bob)
    assert not values & (MISSING_LOOKALIKES | {"nan", "NaN"})
    assert all(v == v.upper() and v.strip() == v for v in values)
    assert all(p.first and p.last for p in data.alice + data.bob)
    missing = sum(p.middle == "" for p in data.alice) / SIZE
    assert 0.12 < missing < 0.18
    assert all(p.middle for p in generate(300, seed=1, middle_missing=0.0).alice)


def test_partial_overlap() -> None:
    data = generate(500, seed=2, overlap=0.6)
    assert len(data.alice) == len(data.bob) == 500
    assert len(data.truth) == 300
    matched = {b for _, b in data.truth}
    alice_triples = {_triple(p) for p in data.alice}
    fresh = [p for p in data.bob if p.id not in matched]
    assert len(fresh) == 200
    assert not any(_triple(p) in alice_triples for p in fresh)
    assert generate(500, seed=2, overlap=0.0).truth == []


def test_more_errors_per_row() -> None:
    data = generate(300, seed=3, errors_per_row=2)
    alice = {p.id: _triple(p) for p in data.alice}
    bob = {p.id: _triple(p) for p in data.bob}
    assert len(data.truth) == 300
    assert all(alice[a] != bob[b] for a, b in data.truth)


def test_a_range_of_errors_per_row() -> None:
    """1-3 errors: copies sit at every distance from one edit to three (an OCR or phonetic
    rule may rewrite two letters at once, so the upper bound is twice the errors)."""
    data = generate(600, seed=4, errors_per_row=(1, 3), middle_missing=0.0)
    alice = {p.id: _triple(p) for p in data.alice}
    bob = {p.id: _triple(p) for p in data.bob}
    distances = [
        sum(DamerauLevenshtein.distance(x, y) for x, y in zip(alice[a], bob[b], strict=True))
        for a, b in data.truth
    ]
    assert min(distances) == 1 and max(distances) <= 6
    assert sum(d >= 3 for d in distances) > 100


def test_missing_values_in_copies() -> None:
    data = generate(500, seed=5, missing_rate=0.4, middle_missing=0.0)
    alice = {p.id: _triple(p) for p in data.alice}
    bob = {p.id: _triple(p) for p in data.bob}
    emptied = sum(
        any(x and not y for x, y in zip(alice[a], bob[b], strict=True)) for a, b in data.truth
    )
    assert 150 <= emptied <= 250  # about 40% of 500
    assert all(any(bob[b]) for _, b in data.truth)


def test_a_person_whose_every_variant_is_refused_gets_a_typo() -> None:
    """Each of this person's three phonetic variants is another record: a phenomenon with so
    few variants cannot stop the data from being generated."""
    person = ("MARIE", "HOWARD", "DEAN")
    variants = {
        ("MARIE", "HOWARD", "DEEN"),
        ("MARYE", "HOWARD", "DEAN"),
        ("MARY", "HOWARD", "DEAN"),
    }
    taken = {person, *variants}
    corrupter = Corrupter(np.random.default_rng(1))
    model = error_model("phonetic")
    copy = _corrupted_copy(corrupter, person, 1, False, taken, frozenset(), model)
    assert copy not in variants and copy in taken
    assert sum(DamerauLevenshtein.distance(x, y) for x, y in zip(copy, person, strict=True)) == 1


def test_generate_is_deterministic() -> None:
    assert generate(300, seed=7) == generate(300, seed=7)
    assert generate(300, seed=7) != generate(300, seed=8)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": -1},
        {"overlap": 1.5},
        {"middle_missing": -0.1},
        {"errors_per_row": 0},
        {"errors_per_row": (3, 1)},
        {"missing_rate": 1.1},
    ],
)
def test_bad_arguments_raise(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        generate(**{"size": 10, "seed": 1, **kwargs})  # type: ignore[arg-type]


def test_reference_is_disjoint_from_generated_data() -> None:
    reference = default_reference(2000)
    assert len(reference["first"]) == len(reference["last"]) == 2000
    assert len(set(zip(reference["first"], reference["last"], strict=True))) == 2000
    data = generate(5000, seed=11)
    generated = _values(data.alice) | _values(data.bob)
    assert not generated & (set(reference["first"]) | set(reference["last"]))


def test_reference_is_deterministic_and_realistic() -> None:
    reference = default_reference()
    assert len(reference["first"]) == 1000
    assert reference == default_reference()
    assert reference != default_reference(seed=1)
    values = reference["first"] + reference["last"]
    assert all(v and v.isalpha() and v.isupper() for v in values)
    assert not set(values) & MISSING_LOOKALIKES
    assert len(set(reference["first"])) < 1000  # drawn by frequency: common names recur


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_csv_writers_round_trip(tmp_path: Path) -> None:
    data = generate(200, seed=4)
    reference = default_reference(50)
    write_records_csv(tmp_path / "alice.csv", data.alice)
    write_truth_csv(tmp_path / "truth.csv", data.truth)
    write_reference_csv(tmp_path / "reference.csv", reference)

    assert [Person(**row) for row in _read(tmp_path / "alice.csv")] == data.alice
    assert (tmp_path / "alice.csv").read_text().splitlines()[0] == "id,first,middle,last"
    truth = _read(tmp_path / "truth.csv")
    assert [(r["alice_id"], r["bob_id"]) for r in truth] == data.truth
    rows = _read(tmp_path / "reference.csv")
    assert [r["first"] for r in rows] == reference["first"]
    assert [r["last"] for r in rows] == reference["last"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alice.csv", "reference.csv", "truth.csv"]


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "bob.csv"
    path.write_text("old\n")
    with pytest.raises(AttributeError):
        write_records_csv(path, [Person("B000001", "ANN", "", "LEE"), object()])  # type: ignore[list-item]
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["bob.csv"]


def test_a_third_register_copies_alices_people_with_its_own_errors() -> None:
    data = generate(600, seed=5, overlap=0.8)
    carol, alice_carol = generate_third(data, seed=5, overlap=0.7)
    assert generate(600, seed=5, overlap=0.8) == data  # the two-party data is unchanged
    assert [p.id for p in carol] == [f"C{i:06d}" for i in range(1, 601)]
    assert len(alice_carol) == 420 and len({c for _, c in alice_carol}) == 420
    alice = {p.id: _triple(p) for p in data.alice}
    held = {p.id: _triple(p) for p in carol}
    for alice_id, carol_id in alice_carol:
        differing = [(x, y) for x, y in zip(alice[alice_id], held[carol_id], strict=True) if x != y]
        assert len(differing) == 1
    # Carol's other people are no one else's, and her records are all distinct.
    copies = {c for _, c in alice_carol}
    others = {held[c] for c in held if c not in copies}
    assert len(others) == 180
    assert not others & ({*alice.values()} | {_triple(p) for p in data.bob})
    assert len(set(held.values())) == 600
    reference = default_reference(2000)
    assert not {v for t in held.values() for v in t} & set(reference["first"] + reference["last"])
    # Bob and Carol share exactly the people both copied from Alice.
    bob_carol = pair_truth(data.truth, alice_carol)
    bob_of, carol_of = dict(data.truth), dict(alice_carol)
    assert set(bob_carol) == {(bob_of[a], carol_of[a]) for a in set(bob_of) & set(carol_of)}
    assert 0 < len(bob_carol) < 420
