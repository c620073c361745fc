"""The corrupter makes one edit of the asked kind, reaches every kind, and is reproducible."""

from __future__ import annotations

import re
import string

import numpy as np
import pytest
from rapidfuzz.distance import DamerauLevenshtein, Levenshtein

from pprl.protocol.data.corruption import (
    ERROR_KINDS,
    OCR_PAIRS,
    PHONETIC_PAIRS,
    QWERTY_NEIGHBOURS,
    Corrupter,
)

VALUES = ("PHILLIPS", "SCHMIDT", "MCCORMICK", "KNIGHT", "QUEEN", "MARIE", "O'BRIEN", "AB", "XU")


def _pattern_results(value: str, pairs: tuple[tuple[str, str], ...]) -> set[str]:
    rules = [*pairs, *((b, a) for a, b in pairs)]
    return {
        value[: m.start()] + target + value[m.start() + len(source) :]
        for source, target in rules
        for m in re.finditer(f"(?={re.escape(source)})", value)
    }


def one_edit_results(value: str, kind: str) -> set[str]:
    """Every value one edit of ``kind`` can make, written independently of the module's code."""
    v = value
    if kind == "keyboard":
        return {
            v[:i] + n + v[i + 1 :] for i, c in enumerate(v) for n in QWERTY_NEIGHBOURS.get(c, "")
        }
    if kind == "insert":
        return {v[:i] + c + v[i:] for i in range(len(v) + 1) for c in string.ascii_uppercase}
    if kind == "delete":
        return {v[:i] + v[i + 1 :] for i in range(len(v))} if len(v) >= 2 else set()
    if kind == "transpose":
        return {v[:i] + v[i + 1] + v[i] + v[i + 2 :] for i in range(len(v) - 1) if v[i] != v[i + 1]}
    return _pattern_results(v, OCR_PAIRS if kind == "ocr" else PHONETIC_PAIRS)


def _corrupter(seed: int = 0, **kwargs: object) -> Corrupter:
    return Corrupter(np.random.default_rng(seed), **kwargs)  # type: ignore[arg-type]


def test_keyboard_table_is_symmetric_and_covers_every_letter() -> None:
    assert set(QWERTY_NEIGHBOURS) == set(string.ascii_uppercase)
    for letter, neighbours in QWERTY_NEIGHBOURS.items():
        assert letter not in neighbours
        for n in neighbours:
            assert letter in QWERTY_NEIGHBOURS[n], (letter, n)


@pytest.mark.parametrize("kind", ERROR_KINDS)
@pytest.mark.parametrize("value", VALUES)
def test_explicit_kind_makes_one_edit_of_that_kind(kind: str, value: str) -> None:
    expected = one_edit_results(value, kind)
    corrupter = _corrupter()
    if not expected:
        with pytest.raises(ValueError):
            corrupter.corrupt_value(value, kind)
        return
    results = {corrupter.corrupt_value(value, kind) for _ in range(1500)}
    assert value not in results
    assert results <= expected
    if len(expected) <= 60:  # every site is drawn, not just some
        assert results == expected


@pytest.mark.parametrize("value", ["PHILLIPS", "SMITH", "JO"])
def test_edit_distances_match_the_kind(value: str) -> None:
    corrupter = _corrupter(1)
    for _ in range(200):
        for kind in ("keyboard", "insert", "delete"):
            assert Levenshtein.distance(value, corrupter.corrupt_value(value, kind)) == 1
        keyed = corrupter.corrupt_value(value, "keyboard")
        assert len(keyed) == len(value)
        swapped = corrupter.corrupt_value(value, "transpose")
        assert DamerauLevenshtein.distance(value, swapped) == 1
        assert sorted(swapped) == sorted(value)


def test_single_letter_ocr_and_phonetic_substitutions_keep_the_length() -> None:
    corrupter = _corrupter(2)
    for kind, value in (("ocr", "BOB"), ("phonetic", "ZAZA")):  # only 1-to-1 rules apply here
        for _ in range(50):
            result = corrupter.corrupt_value(value, kind)
            assert len(result) == len(value)
            assert Levenshtein.distance(value, result) == 1


def test_random_kind_reaches_every_kind() -> None:
    value = "PHILLIPS"
    by_kind = {kind: one_edit_results(value, kind) for kind in ERROR_KINDS}
    corrupter = _corrupter(3)
    seen = {corrupter.corrupt_value(value) for _ in range(3000)}
    assert seen <= set().union(*by_kind.values())
    for kind, results in by_kind.items():
        only_this_kind = results - set().union(*(r for k, r in by_kind.items() if k != kind))
        assert seen & only_this_kind, kind


def test_random_kind_is_restricted_to_the_given_kinds() -> None:
    corrupter = _corrupter(4, kinds=("transpose",))
    assert {corrupter.corrupt_value("ABC") for _ in range(100)} == {"BAC", "ACB"}


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("A", "delete"),
        ("", "delete"),
        ("AA", "transpose"),
        ("BAT", "ocr"),
        ("BOB", "phonetic"),
        ("--", "keyboard"),
        ("", "keyboard"),
        ("", "transpose"),
        ("", "ocr"),
        ("", "phonetic"),
    ],
)
def test_kind_that_does_not_apply_raises(value: str, kind: str) -> None:
    with pytest.raises(ValueError):
        _corrupter().corrupt_value(value, kind)


def test_unknown_kinds_are_rejected() -> None:
    with pytest.raises(ValueError):
        _corrupter().corrupt_value("SMITH", "typo")
    with pytest.raises(ValueError):
        _corrupter(kinds=("keyboard", "typo"))
    with pytest.raises(ValueError):
        _corrupter(kinds=())


def test_empty_value_only_takes_an_insert() -> None:
    corrupter = _corrupter(5)
    results = {corrupter.corrupt_value("") for _ in range(500)}
    assert results == set(string.ascii_uppercase)


def test_no_kind_applies_raises() -> None:
    with pytest.raises(ValueError):
        _corrupter(kinds=("delete", "ocr")).corrupt_value("")


def test_one_error_changes_exactly_one_field_chosen_uniformly() -> None:
    corrupter = _corrupter(6)
    record = ["JOHN", "", "SMITH"]
    hits = [0, 0, 0]
    for _ in range(3000):
        result = corrupter.corrupt_record(record)
        changed = [i for i in range(3) if result[i] != record[i]]
        assert len(changed) == 1
        (field,) = changed
        assert result[field] in set().union(
            *(one_edit_results(record[field], k) for k in ERROR_KINDS)
        )
        hits[field] += 1
    assert all(900 < h < 1100 for h in hits), hits
    assert record == ["JOHN", "", "SMITH"]  # the input is not modified


def test_empty_fields_get_inserts() -> None:
    corrupter = _corrupter(7)
    for _ in range(100):
        result = corrupter.corrupt_record(["", "", ""])
        assert sorted(len(v) for v in result) == [0, 0, 1]


def test_fields_no_kind_applies_to_are_skipped() -> None:
    corrupter = _corrupter(8, kinds=("delete",))
    for _ in range(50):
        first, middle, last = corrupter.corrupt_record(["JOHN", "", "X"])
        assert (middle, last) == ("", "X")
        assert len(first) == 3


@pytest.mark.parametrize("n_errors", [2, 3, 5])
def test_several_errors_change_the_record(n_errors: int) -> None:
    corrupter = _corrupter(9)
    record = ["ANN", "", "LEE"]
    for _ in range(300):
        result = corrupter.corrupt_record(record, n_errors)
        assert len(result) == 3
        assert result != record
        distance = sum(
            DamerauLevenshtein.distance(a, b) for a, b in zip(record, result, strict=True)
        )
        assert 1 <= distance <= 2 * n_errors  # an OCR/phonetic rule may rewrite two letters


def test_record_errors_that_always_cancel_raise() -> None:
    with pytest.raises(ValueError):
        _corrupter(kinds=("transpose",)).corrupt_record(["AB"], 2)
    with pytest.raises(ValueError):
        _corrupter().corrupt_record(["AB"], 0)
    with pytest.raises(ValueError):
        _corrupter(kinds=("delete",)).corrupt_record(["A", ""])


def test_same_seed_same_corruptions() -> None:
    def run(seed: int) -> list[object]:
        corrupter = _corrupter(seed)
        values = [corrupter.corrupt_value(v) for v in VALUES * 20]
        records = [corrupter.corrupt_record(["JOHN", "Q", "SMITH"], 2) for _ in range(50)]
        return [*values, *records]

    assert run(11) == run(11)
    assert run(11) != run(12)


@pytest.mark.parametrize("n_errors", [1, 2, 3])
@pytest.mark.parametrize(("kind", "length_change"), [("insert", 1), ("delete", -1)])
def test_exactly_the_requested_number_of_edits(
    n_errors: int, kind: str, length_change: int
) -> None:
    """Inserts and deletes cannot cancel each other out, so the length change counts the edits
    one for one."""
    corrupter = Corrupter(np.random.default_rng(n_errors), kinds=(kind,))
    record = ["JONATHAN", "ELIZABETH", "MONTGOMERY"]
    for _ in range(200):
        result = corrupter.corrupt_record(record, n_errors)
        change = sum(len(b) - len(a) for a, b in zip(record, result, strict=True))
        assert change == n_errors * length_change
        distance = sum(Levenshtein.distance(a, b) for a, b in zip(record, result, strict=True))
        assert distance == n_errors
