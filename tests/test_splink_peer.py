"""The Splink baseline (lab.splink_peer); skipped where the optional splink is missing."""

import csv
import random
from datetime import date, timedelta
from pathlib import Path

import pytest

pytest.importorskip("splink")

from lab.splink_peer import SplinkMissingError, best_one_to_one, splink_scores
from pprl.protocol.errors import SettingError

FIELDS = ("first_name", "last_name", "sex", "date_of_birth", "postcode", "city", "street")
KINDS = {
    "sex": "category",
    "date_of_birth": "date",
    "postcode": "code",
    "city": "text",
    "street": "text",
}
SYLLABLES = ("an", "be", "ko", "ma", "ri", "sel", "tor", "ul", "ven", "zi", "lo", "dra", "mi")
CITIES = ("Lyon", "Bremen", "Graz", "Porto", "Gent", "Turin", "Krakow", "Utrecht", "Izmir")


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(syllables)).capitalize()


def _person(rng: random.Random) -> dict[str, str]:
    born = date(1930, 1, 1) + timedelta(days=rng.randrange(27_000))
    return {
        "first_name": _word(rng, rng.choice((2, 3))),
        "last_name": _word(rng, 3),
        "sex": rng.choice("MF"),
        "date_of_birth": born.isoformat(),
        "postcode": f"{rng.randrange(10_000, 99_999)}",
        "city": rng.choice(CITIES),
        "street": f"{_word(rng, 2)}strasse {rng.randrange(1, 200)}",
    }


def _typo(text: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(text))
    return text[:at] + rng.choice("aeiou") + text[at + 1 :]


@pytest.fixture(scope="module")
def registers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[tuple[str, str]]]:
    """300 people in A (dates %Y-%m-%d); B (dates %d.%m.%Y): copies of 240 of them, a
    quarter each unchanged, with a typo in the first or the last name, or without postcode,
    and 60 others."""
    out = tmp_path_factory.mktemp("registers")
    rng = random.Random(7)
    alice = [{"id": f"a{k:03d}", **_person(rng)} for k in range(300)]
    bob = []
    for k, person in enumerate(rng.sample(alice, 240)):
        copy = dict(person)
        if k % 4 == 1:
            copy["first_name"] = _typo(copy["first_name"], rng)
        elif k % 4 == 2:
            copy["last_name"] = _typo(copy["last_name"], rng)
        elif k % 4 == 3:
            copy["postcode"] = ""
        bob.append(copy)
    bob += [{"id": "", **_person(rng)} for _ in range(60)]
    rng.shuffle(bob)
    truth = set()
    for k, person in enumerate(bob):
        if person["id"]:
            truth.add((person["id"], f"b{k:03d}"))
        person["id"] = f"b{k:03d}"
        person["date_of_birth"] = date.fromisoformat(person["date_of_birth"]).strftime("%d.%m.%Y")
    paths = out / "records_a.csv", out / "records_b.csv"
    for path, rows in zip(paths, (alice, bob), strict=True):
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["id", *FIELDS])
            writer.writeheader()
            writer.writerows(rows)
    return paths[0], paths[1], truth


def test_splink_links_the_registers(
    registers: tuple[Path, Path, set[tuple[str, str]]],
) -> None:
    records_a, records_b, truth = registers
    scored = splink_scores(
        records_a,
        records_b,
        FIELDS,
        KINDS,
        date_formats_a={"date_of_birth": "%Y-%m-%d"},
        date_formats_b={"date_of_birth": "%d.%m.%Y"},
    )
    best = best_one_to_one(scored, truth)
    assert best["f1"] > 0.9
    assert best["pairs"] == len(best["linked"])
    with records_a.open(encoding="utf-8") as handle:
        rows_a = {row["id"]: row for row in csv.DictReader(handle)}
    with records_b.open(encoding="utf-8") as handle:
        rows_b = {row["id"]: row for row in csv.DictReader(handle)}
    # A pair whose only difference is how its files write the date.
    unchanged = next(
        (id_a, id_b)
        for id_a, id_b in sorted(truth)
        if all(rows_a[id_a][f] == rows_b[id_b][f] for f in FIELDS if f != "date_of_birth")
    )
    assert unchanged in best["linked"]


def test_names_only_and_bad_settings(registers: tuple[Path, Path, set[tuple[str, str]]]) -> None:
    records_a, records_b, truth = registers
    scored = splink_scores(records_a, records_b, ["first_name", "last_name"])
    assert all(0.001 <= p <= 1.0 for _, _, p in scored)
    assert best_one_to_one(scored, truth)["recall"] > 0.5
    with pytest.raises(SettingError, match="two fields"):
        splink_scores(records_a, records_b, ["first_name"])
    with pytest.raises(SettingError, match="kind 'quantity'"):
        splink_scores(records_a, records_b, FIELDS, {"postcode": "quantity"})


def test_best_one_to_one_is_greedy_then_best_threshold() -> None:
    scored = [
        ("a3", "b3", 0.3),
        ("a2", "b1", 0.8),  # loses b1 to a1, then takes b2
        ("a1", "b1", 0.9),
        ("a2", "b2", 0.6),
    ]
    truth = {("a1", "b1"), ("a2", "b2"), ("a4", "b4")}
    # Cut at 0.9: P 1, R 1/3, F1 0.5; at 0.6: P 1, R 2/3, F1 0.8; at 0.3: P 2/3, R 2/3.
    assert best_one_to_one(scored, truth) == {
        "threshold": 0.6,
        "precision": 1.0,
        "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(0.8),
        "pairs": 2,
        "linked": {("a1", "b1"), ("a2", "b2")},
    }


def test_best_one_to_one_keeps_ties_together_and_nothing_without_a_true_pair() -> None:
    tied = [("a1", "b1", 0.5), ("a2", "b2", 0.5)]
    best = best_one_to_one(tied, {("a1", "b1")})
    assert (best["threshold"], best["precision"], best["pairs"]) == (0.5, 0.5, 2)
    assert best_one_to_one(tied, {("a9", "b9")}) == {
        "threshold": None,
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "pairs": 0,
        "linked": set(),
    }


def test_missing_splink_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, registers: tuple[Path, Path, set[tuple[str, str]]]
) -> None:
    monkeypatch.setattr("lab.splink_peer._SPLINK_MISSING", ImportError("No module named 'splink'"))
    with pytest.raises(ImportError, match="pip install splink") as raised:
        splink_scores(registers[0], registers[1], FIELDS)
    assert isinstance(raised.value, SplinkMissingError)
