"""What a record id may be, on both sides of the wire, and how result files keep a
spreadsheet from running one."""

from __future__ import annotations

import pytest

from pprl.protocol.data.record_ids import MAX_ID_CHARS, id_problem, spreadsheet_safe


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("", "empty id"),
        ("a" * (MAX_ID_CHARS + 1), "characters"),
        ("AB\x00C", "U+0000"),
        ("ID\u202e1", "U+202E"),  # a right-to-left override
        ("ID\u200b1", "U+200B"),  # a zero-width space
    ],
)
def test_ids_that_would_corrupt_or_deceive_are_refused_without_repeating_them(
    value: str, words: str
) -> None:
    problem = id_problem(value)
    assert problem is not None and words in problem
    if value:
        assert value not in problem


@pytest.mark.parametrize("value", ["A000001", "ÉLODIE-7", "a" * MAX_ID_CHARS, "12 345"])
def test_ordinary_ids_pass(value: str) -> None:
    assert id_problem(value) is None


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("-0.125000", "-0.125000"),  # a negative score stays a number
        ("A000001", "A000001"),
    ],
)
def test_result_cells_never_run_as_formulas(value: str, written: str) -> None:
    assert spreadsheet_safe(value) == written
