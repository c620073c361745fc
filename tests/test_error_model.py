"""The register error model: each phenomenon does what it says, alone and in the mixture."""

from __future__ import annotations

import csv
from collections import Counter
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from nicknames import NickNamer

from pprl.cli import main
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.error_model import (
    DEFAULT_COUNTS,
    MODEL_NAMES,
    MODELS,
    PHENOMENA,
    ErrorModel,
    date_errors,
    digit_errors,
    error_model,
    has_address,
    name_variants,
    quantity_errors,
    roles_of,
    spread_edits,
    surname_pool,
)
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.data.synthetic import generate
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.training import corrupt_records, corrupt_sample
from pprl.protocol.own_training import training_sample

NAMES = ("first", "middle", "last")
PERSON = ("WILLIAM", "JAMES", "SMITH")
DRAWS = 300


def draws(model: str, values=PERSON, names=NAMES, kinds=None, n=DRAWS, seed=1):
    rng = np.random.default_rng(seed)
    return [error_model(model).corrupt(values, rng, names=names, kinds=kinds) for _ in range(n)]


def test_every_phenomenon_has_a_model_of_its_own_and_the_names_are_distinct() -> None:
    assert set(PHENOMENA) <= set(MODEL_NAMES)
    assert {"one-error", "registers", "multi"} <= set(MODEL_NAMES)
    assert len(set(MODEL_NAMES)) == len(MODEL_NAMES)
    with pytest.raises(ValueError, match="registers"):
        error_model("no-such-model")


def test_nicknames_are_variants_from_the_table_both_ways() -> None:
    table = NickNamer()
    assert "BILL" in name_variants("WILLIAM")
    assert "WILLIAM" in name_variants("BILL")  # back from the nickname to the name
    for first, _, _ in draws("nickname"):
        lower = first.lower()
        assert first != "WILLIAM"
        assert lower in table.nicknames_of("william") | table.canonicals_of("william")
    assert len({first for first, _, _ in draws("nickname")}) > 3


def test_nickname_touches_only_the_first_name_and_falls_back_to_a_typo() -> None:
    for first, middle, last in draws("nickname"):
        assert (middle, last) == ("JAMES", "SMITH") and first != "WILLIAM"
    assert name_variants("XQZWV") == ()
    for copy in draws("nickname", values=("XQZWV", "", "SMITH")):
        assert copy != ["XQZWV", "", "SMITH"]


def test_middle_name_is_dropped_or_reduced_to_one_letter() -> None:
    seen = Counter(middle for _, middle, _ in draws("middle"))
    assert set(seen) == {"", "J"}
    assert all(copy[0::2] == ["WILLIAM", "SMITH"] for copy in draws("middle"))


def test_a_phenomenon_without_options_leaves_the_others_their_weights() -> None:
    """One error drawn by weight among the phenomena that apply: with nickname and middle at
    1 : 3 and a date error at 10 on a record with no date, about a quarter nicknames and three
    quarters middle names, and never a failure for the date's weight."""
    model = ErrorModel.mixture("x", {"nickname": 1.0, "middle": 3.0, "date": 10.0}, {1: 1.0})
    rng = np.random.default_rng(3)
    copies = [model.corrupt(PERSON, rng, names=NAMES) for _ in range(4000)]
    nicknamed = sum(copy[0] != "WILLIAM" for copy in copies)
    middled = sum(copy[1] != "JAMES" for copy in copies)
    assert nicknamed + middled == 4000
    assert 0.22 < nicknamed / 4000 < 0.28


def test_errors_that_leave_nothing_an_error_applies_to_are_kept_and_no_value_is_told() -> None:
    """Two errors drawn, the first blanking the name: the postcode left takes no error (a code
    takes no typo, and a record keeps a value), so the copy keeps the first error instead of
    failing TRAIN (seen on the European registers at 50,000 a side). A record no error applies
    to at all is refused, its values not in the message, which may leave the daemon."""
    model = ErrorModel.mixture("blanks", {"missing": 1.0}, {2: 1.0})
    rng = np.random.default_rng(2)
    copies = [model.corrupt(("ANNA", "4426MR"), rng, kinds=("name", "code")) for _ in range(200)]
    assert Counter(map(tuple, copies))[("", "4426MR")] > 50
    assert all(copy != ["ANNA", "4426MR"] and any(copy) for copy in copies)
    with pytest.raises(ValueError, match="applies to a record of kinds") as refused:
        error_model("registers").corrupt(("", "4426MR"), rng, kinds=("name", "code"))
    assert "4426MR" not in str(refused.value)


def test_swap_exchanges_first_with_last_or_middle() -> None:
    seen = {tuple(copy) for copy in draws("swap")}
    assert seen == {("SMITH", "JAMES", "WILLIAM"), ("JAMES", "WILLIAM", "SMITH")}
    # Without a middle name only first and last can change places.
    assert {tuple(c) for c in draws("swap", values=("ANN", "", "LEE"))} == {("LEE", "", "ANN")}


def test_missing_blanks_exactly_one_field() -> None:
    for copy in draws("missing"):
        blank = [i for i, value in enumerate(copy) if value == ""]
        assert len(blank) == 1
        assert all(copy[i] == PERSON[i] for i in range(3) if i not in blank)


def test_surname_is_hyphenated_or_changed() -> None:
    pool = set(surname_pool())
    assert len(pool) == 1000
    kinds = Counter()
    for first, middle, last in draws("surname"):
        assert (first, middle) == ("WILLIAM", "JAMES")
        parts = last.split("-")
        if len(parts) == 2:
            assert "SMITH" in parts and (set(parts) - {"SMITH"}) <= pool
            kinds["hyphenated"] += 1
        else:
            assert last in pool and last != "SMITH"
            kinds["changed"] += 1
    assert kinds["hyphenated"] > kinds["changed"] > 0


def _valid(value: str) -> bool:
    try:
        datetime.strptime(value, "%Y%m%d")
    except ValueError:
        return False
    return True


def test_date_errors_are_valid_dates_one_error_away() -> None:
    errors = date_errors("19800412")
    assert errors["day-month"] == ["19801204"]
    assert errors["year"] == ["19790412", "19810412"]
    assert all(
        _valid(d) and sum(a != b for a, b in zip(d, "19800412", strict=True)) == 1
        for d in errors["digit"]
    )
    assert "19800432" not in errors["digit"]  # no 32nd day
    # Exactly the substitutions strptime reads as dates, for dates near a calendar's edges.
    for value in ("19800412", "20000229", "00010101", "99991231", "19001231"):
        substituted = {
            value[:i] + d + value[i + 1 :] for i in range(8) for d in "0123456789" if d != value[i]
        }
        assert set(date_errors(value)["digit"]) == {d for d in substituted if _valid(d)}
    assert "day-month" not in date_errors("19800413")  # no 13th month
    assert "day-month" not in date_errors("19800505")  # the same date
    assert "year" not in date_errors("20000229")  # 1999 and 2001 have no 29 February
    assert date_errors("not a date") == {}


def test_digit_errors_substitute_transpose_or_drop_and_keep_digits() -> None:
    errors = digit_errors("0213")
    assert len(errors["substitute"]) == 4 * 9
    assert errors["transpose"] == ["2013", "0123", "0231"]
    assert errors["drop"] == ["213", "013", "023", "021"]
    assert "transpose" not in digit_errors("777")
    assert "drop" not in digit_errors("7")
    assert digit_errors("12A") == {}


def test_quantity_errors_are_keyed_digits_read_back_as_quantities() -> None:
    errors = quantity_errors("175.5")
    assert errors["transpose"] == ["157.5", "715.5"]
    assert len(errors["substitute"]) == 4 * 9
    assert {"176.5", "175.8", "75.5", "175"} <= set(errors["substitute"])  # 075.5, 175.0
    assert quantity_errors("-0.05")["transpose"] == ["-0.5"]  # -0.50
    assert "transpose" not in quantity_errors("7.7")
    assert quantity_errors("175.50") == {} and quantity_errors("12,5") == {}  # not canonical


def test_date_and_digit_errors_go_only_to_their_kinds_and_name_errors_only_to_names() -> None:
    names = ("first", "middle", "last", "born", "postcode")
    kinds = ("name", "name", "name", "date", "number")
    record = ("WILLIAM", "JAMES", "SMITH", "19800412", "02134")
    for copy in draws("date", record, names, kinds):
        assert copy[:3] + copy[4:] == list(record[:3] + record[4:])
        assert any(copy[3] in found for found in date_errors("19800412").values())
    for copy in draws("digit", record, names, kinds):
        assert copy[:4] == list(record[:4]) and copy[4].isdigit() and copy[4] != "02134"
    for copy in draws("registers", record, names, kinds, n=1000):
        assert all(not any(c.isdigit() for c in value) for value in copy[:3])
        assert copy[3] == "" or _valid(copy[3])
        assert copy[4] == "" or copy[4].isdigit()
    # Names only: a date model has nothing to touch and falls back to a typo on a name.
    for copy in draws("date", n=20):
        assert copy != list(PERSON)


def test_an_identifier_takes_a_numbers_digit_errors() -> None:
    """An identifier is a number given to one person: the error model types into it as into
    any number, and into nothing else of the record."""
    names = ("first", "last", "ssn")
    kinds = ("name", "name", "identifier")
    record = ("WILLIAM", "SMITH", "4012233")
    copies = draws("digit", record, names, kinds)
    assert copies and all(copy[:2] == list(record[:2]) for copy in copies)
    assert all(copy[2].isdigit() and copy[2] != "4012233" for copy in copies)


def test_typo_ocr_and_phonetic_are_single_edits_of_their_kind() -> None:
    value = ("PHILLIP", "", "CLARK")
    for model in ("typo", "ocr", "phonetic"):
        for copy in draws(model, value):
            assert sum(a != b for a, b in zip(copy, value, strict=True)) == 1
            assert copy[1] == ""  # a missing value is not typed into
    assert any(copy[0] == "FILLIP" for copy in draws("phonetic", value))


def test_the_number_of_errors_follows_the_weights() -> None:
    model = error_model("multi")
    rng = np.random.default_rng(7)
    seen = Counter(model.count(rng) for _ in range(5000))
    for k, weight in DEFAULT_COUNTS.items():
        assert abs(seen[k] / 5000 - weight) < 0.03
    assert set(seen) == {1, 2, 3}
    assert Counter(error_model("nickname").count(rng) for _ in range(100)) == {1: 100}


def test_multi_makes_one_to_three_edits() -> None:
    from rapidfuzz.distance import DamerauLevenshtein

    distances = Counter(
        sum(DamerauLevenshtein.distance(a, b) for a, b in zip(copy, PERSON, strict=True))
        for copy in draws("multi", n=2000)
    )
    assert set(distances) <= {1, 2, 3, 4, 5, 6}  # an OCR or phonetic edit can span two letters
    assert distances[1] > distances[2] > distances[3] > 0


def test_variants_has_name_variants_and_edits_but_no_blanks_swaps_or_new_surnames() -> None:
    copies = draws("variants", n=2000)
    assert any(c[1] == "J" for c in copies)  # middle initial
    assert any(c[0] in name_variants("WILLIAM") for c in copies)  # nickname
    assert all(c[0] and c[2] for c in copies)  # no blank first or last name
    assert not any(c[0] == "SMITH" or "-" in c[2] for c in copies)  # no swap, no new surname
    assert all(c != list(PERSON) for c in copies)


def test_corrupting_is_deterministic_for_a_seed() -> None:
    for model in MODEL_NAMES:
        assert draws(model, n=50, seed=3) == draws(model, n=50, seed=3)
    assert draws("registers", n=50, seed=3) != draws("registers", n=50, seed=4)


def test_the_default_mixture_reaches_every_name_phenomenon() -> None:
    copies = draws("registers", n=2000)
    assert any(c[1] == "J" for c in copies)  # middle initial
    assert any(c[0] in name_variants("WILLIAM") for c in copies)  # nickname
    assert any(c[0] == "SMITH" for c in copies)  # swap
    assert any("-" in c[2] for c in copies)  # hyphenated surname
    assert any("" in c and c[1] for c in copies)  # a blank besides the middle name
    assert all(c != list(PERSON) and any(c) for c in copies)


def test_one_error_is_the_existing_corruption_byte_for_byte() -> None:
    records = [["ANNA", "", "LEE"], ["JOHN", "PAUL", "SMITH"]] * 20
    legacy = Corrupter(np.random.default_rng(5))
    expected = [legacy.corrupt_record(r, n_errors=1) for r in records]
    rng = np.random.default_rng(5)
    assert [error_model("one-error").corrupt(r, rng) for r in records] == expected


def test_models_refuse_bad_weights_and_bad_records() -> None:
    with pytest.raises(ValueError):
        ErrorModel.mixture("x", {"sneeze": 1.0})
    with pytest.raises(ValueError):
        ErrorModel.mixture("x", {"typo": 0.0})
    with pytest.raises(ValueError):
        ErrorModel.mixture("x", {"typo": 1.0}, {0: 1.0})
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="names and kinds"):
        MODELS["typo"].corrupt(PERSON, rng, names=("first",))
    with pytest.raises(ValueError, match="unknown kinds"):
        MODELS["typo"].corrupt(PERSON, rng, kinds=("name", "name", "colour"))


def test_roles_come_from_column_names() -> None:
    assert roles_of(["First", "middle_name", "SURNAME", "born"]) == (
        "first",
        "middle",
        "last",
        None,
    )
    assert roles_of(["street", "Postcode", "suburb", "soc_sec_id"]) == (
        "address",
        "address",
        "address",
        None,
    )
    assert has_address(["first", "postcode"]) and not has_address(["first", "last", "dob"])


MOVER_NAMES = ("first", "last", "dob", "street", "postcode", "city", "ssn")
MOVER_KINDS = ("name", "name", "date", "text", "code", "text", "number")
RESIDENT = ("ANNA", "MULLER", "19800101", "HAUPTSTRASSE 1", "10115", "BERLIN", "1234567")
ELSEWHERE = ("JAN", "DEKKER", "19700505", "KERKSTRAAT 9", "1317YB", "ALMERE", "7654321")


def test_a_mover_takes_every_address_field_of_another_record_and_keeps_the_rest() -> None:
    rng = np.random.default_rng(3)
    model = error_model("mover")
    for _ in range(50):
        moved = model.corrupt(RESIDENT, rng, names=MOVER_NAMES, kinds=MOVER_KINDS, donor=ELSEWHERE)
        assert moved[3:6] == list(ELSEWHERE[3:6])  # street, postcode and city, together
        assert moved[:3] + moved[6:] == list(RESIDENT[:3] + RESIDENT[6:])
    # without another record's address to take, no move: a typo instead
    stayed = model.corrupt(RESIDENT, rng, names=MOVER_NAMES, kinds=MOVER_KINDS)
    assert stayed[3:6] == list(RESIDENT[3:6]) or stayed != list(RESIDENT)


def test_training_moves_records_only_where_there_is_an_address() -> None:
    """Records without an address are corrupted exactly as a model given no donor does: the
    donors are drawn only when some column is part of an address (and the model moves)."""
    assert error_model("registers-movers").moves and not error_model("registers").moves
    names = list(ATTRIBUTES)
    rng = np.random.default_rng(5)
    got = corrupt_records(ATTRIBUTES, names, rng=rng, corruption="registers-movers")
    rng = np.random.default_rng(5)
    model = error_model("registers-movers")
    rows = list(zip(*(ATTRIBUTES[n] for n in names), strict=True))
    expected = [model.corrupt(r, rng, names=names, kinds=["name"] * 3) for r in rows]
    assert got == {n: [row[j] for row in expected] for j, n in enumerate(names)}
    with_address = {**ATTRIBUTES, "postcode": ["1000", "2000", "3000", "4000"] * 50}
    moved = corrupt_records(
        with_address, list(with_address), rng=np.random.default_rng(5), corruption="mover",
        kinds={"postcode": "code"},
    )  # fmt: skip
    rows = range(len(moved["postcode"]))
    changed = [i for i in rows if moved["postcode"][i] != with_address["postcode"][i]]
    assert len(changed) > 100  # every record whose donor lives elsewhere moved (3 in 4)
    assert all(moved["postcode"][i] in ("1000", "2000", "3000", "4000") for i in changed)
    assert all(moved["first"][i] == with_address["first"][i] for i in changed)


# --- training ---------------------------------------------------------------------------------

ATTRIBUTES = {
    "first": ["WILLIAM", "ROBERT", "ELIZABETH", "ANN"] * 50,
    "middle": ["JAMES", "", "MARY", "LOUISE"] * 50,
    "last": ["SMITH", "JONES", "TAYLOR", "BROWN"] * 50,
}


def test_training_corrupts_with_a_named_model_and_one_error_is_spread() -> None:
    names = list(ATTRIBUTES)

    def sample(corruption: str) -> tuple[dict, dict]:
        rng = np.random.default_rng(9)
        return corrupt_sample(ATTRIBUTES, names, size=100, rng=rng, corruption=corruption)

    assert sample("one-error") == sample("spread")
    own, corrupted = sample("middle")
    for i, middle in enumerate(own["middle"]):
        if middle:
            assert corrupted["middle"][i] in ("", middle[0])
            assert (corrupted["first"][i], corrupted["last"][i]) == (
                own["first"][i],
                own["last"][i],
            )
        else:  # no middle name to drop: a typo instead
            assert [corrupted[n][i] for n in names] != [own[n][i] for n in names]


def test_quantities_take_quantity_errors_and_no_other() -> None:
    names, kinds = ("first", "last", "height"), ("name", "name", "quantity")
    record = ("WILLIAM", "SMITH", "175.5")
    for copy in draws("quantity", record, names, kinds):
        assert copy[:2] == list(record[:2])
        assert any(copy[2] in found for found in quantity_errors("175.5").values())
    copies = draws("registers", record, names, kinds, n=1000)
    assert all(c[2] == "" or float(c[2]) >= 0 for c in copies)  # always a number, or blank
    touched = sum(c[2] not in ("", "175.5") for c in copies)
    assert 10 < touched < 150  # weight 0.05 of about 1.5 errors a record


def test_the_paper_edits_leave_quantities_numbers() -> None:
    """One-error edits letters into any field; a quantity edited so would be no number, so it
    keeps its value, and a record of quantities alone takes a quantity error instead."""
    values, kinds = ["ANN", "", "165.5"], ["name", "name", "quantity"]
    rng = np.random.default_rng(6)
    copies = [spread_edits(Corrupter(rng), values, kinds, 2) for _ in range(200)]
    assert all(copy[2] == "165.5" and copy[:2] != values[:2] for copy in copies)
    alone = [spread_edits(Corrupter(rng), ["80", ""], ["quantity"] * 2, 1) for _ in range(50)]
    errors = quantity_errors("80").values()
    assert all(a[1] == "" and any(a[0] in found for found in errors) for a in alone)
    # Without quantities, the draws of the paper's corruption itself.
    names = [["ANN", "", "LEE"], ["JOHN", "PAUL", "SMITH"]] * 10
    legacy = Corrupter(np.random.default_rng(5))
    expected = [legacy.corrupt_record(r, n_errors=2) for r in names]
    ours = Corrupter(np.random.default_rng(5))
    assert [spread_edits(ours, r, ["name"] * 3, 2) for r in names] == expected
    rng = np.random.default_rng(8)
    model = error_model("one-error")
    assert all(model.corrupt(values, rng, kinds=kinds)[2] == "165.5" for _ in range(50))


def test_training_reads_quantity_kinds_whatever_the_corruption() -> None:
    attributes = {
        "first": ["ANN", "BOB", "CY", ""] * 10,
        "height": ["165.5", "", "180", "172"] * 10,
    }
    kinds = {"height": "quantity"}
    for corruption in ("one-error", "registers", "quantity"):
        rng = np.random.default_rng(2)
        own, corrupted = corrupt_sample(
            attributes, ["first", "height"], size=40, rng=rng, corruption=corruption, kinds=kinds
        )
        assert all(h == "" or float(h) >= 0 for h in corrupted["height"]), corruption
    # The quantity model alone changes every height there is (30 of 40 records have one).
    assert sum(c != o for c, o in zip(corrupted["height"], own["height"], strict=True)) == 30


def test_training_reads_date_kinds() -> None:
    attributes = {"first": ["ANN", "BOB"] * 10, "born": ["19800412", "19751101"] * 10}
    rng = np.random.default_rng(2)
    own, corrupted = corrupt_sample(
        attributes, ["first", "born"], size=20, rng=rng, corruption="date", kinds={"born": "date"}
    )
    assert corrupted["first"] == own["first"]
    assert all(c != o and _valid(c) for c, o in zip(corrupted["born"], own["born"], strict=True))


def test_the_agreed_error_model_corrupts_the_training_sample() -> None:
    firsts = ["AMY", "ZED", "BO", "CY", "DI", "ED", "FAY", "GUS", "HAL", "IDA"]
    lasts = ["OAK", "ASH", "ELM", "FIR", "YEW", "BAY", "BOX", "FIG", "LIME", "PINE"]
    reference = ReferenceSet("reference", {"first": firsts, "last": lasts})
    mapping = (("first", "first"), ("last", "last"), ("middle", "first"))
    agreement = Agreement(reference, mapping, method_params(error_model="middle"))
    sample = training_sample(agreement, ATTRIBUTES, np.random.default_rng(4), size=50)
    rng = np.random.default_rng(4)
    names = ["first", "last", "middle"]
    _, expected = corrupt_sample(ATTRIBUTES, names, size=50, rng=rng, corruption="middle")
    assert sample.corrupted == expected
    assert MethodParams().error_model == "one-error"
    with pytest.raises(ValueError, match="error_model"):
        method_params(error_model="sloppy")


# --- test data ----------------------------------------------------------------------------------


def test_generate_with_partial_overlap_and_namesakes() -> None:
    size = 1000
    data = generate(size, seed=11, overlap=0.7, namesakes=0.5, errors="registers")
    assert len(data.truth) == 700 and len(data.bob) == size
    matched = {b for _, b in data.truth}
    alice = {(p.first, p.last): p for p in data.alice}
    new_people = [p for p in data.bob if p.id not in matched]
    namesakes = [p for p in new_people if (p.first, p.last) in alice]
    assert 150 <= len(namesakes) <= 170  # 150 made, a few more by chance
    for person in namesakes:
        assert person.middle != alice[(person.first, person.last)].middle
    alice_triples = {(p.first, p.middle, p.last) for p in data.alice}
    assert not any((p.first, p.middle, p.last) in alice_triples for p in data.bob)


def test_generate_with_one_phenomenon_alone() -> None:
    data = generate(300, seed=2, errors="swap")
    alice = {p.id: p for p in data.alice}
    bob = {p.id: p for p in data.bob}
    for a, b in data.truth:
        x, y = alice[a], bob[b]
        swapped = {(y.first, y.middle, y.last)} & {
            (x.last, x.middle, x.first),
            (x.middle, x.first, x.last),
        }
        assert swapped, (x, y)


def test_generate_defaults_are_unchanged_by_the_new_options() -> None:
    assert generate(300, seed=2) == generate(300, seed=2, errors=None, namesakes=0.0)
    with pytest.raises(ValueError):
        generate(100, seed=1, errors="registers", errors_per_row=2)
    with pytest.raises(ValueError):
        generate(100, seed=1, namesakes=1.5)


def test_the_generate_command_writes_one_phenomenon_with_partial_overlap(tmp_path: Path) -> None:
    args = ["generate", "--out", str(tmp_path), "--size", "200", "--seed", "3"]
    assert main([*args, "--errors", "nickname", "--overlap", "0.7", "--namesakes", "0.5"]) == 0
    with (tmp_path / "truth.csv").open(encoding="utf-8") as handle:
        truth = list(csv.DictReader(handle))
    assert len(truth) == 140
    with (tmp_path / "bob.csv").open(encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 200
    assert main([*args, "--namesakes", "2"]) == 2


def test_a_record_blanked_by_its_first_errors_is_drawn_again_not_refused() -> None:
    """Several "missing" errors on a short record could blank every field; the model then
    redraws instead of failing on the next error."""
    model = error_model("missing")
    rng = np.random.default_rng(0)
    blanking = ErrorModel.mixture("blanking", {"missing": 1.0}, {3: 1.0})
    for _ in range(200):
        out = blanking.corrupt(["ANN", "", "LEE"], rng, names=["first", "middle", "last"])
        assert any(out) and out != ["ANN", "", "LEE"]
    assert any(model.corrupt(["ANN", "", "LEE"], rng, names=["first", "middle", "last"]))
