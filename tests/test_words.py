"""What AGREE tells the operator about its records: a column mostly unreadable is named with
the setting that reads it, a few unreadable cells only counted."""

from __future__ import annotations

from pprl.party.phases.words import data_words


def _report(unreadable: dict[str, int]) -> dict[str, object]:
    return {
        "reference_shared": {"dob->dob": 0},
        "repeated_groups": 0,
        "repeated_records": 0,
        "missing_values": dict(unreadable),
        "unreadable_values": unreadable,
        "records": 5000,
    }


def test_a_column_mostly_unreadable_names_the_date_format_setting() -> None:
    words = data_words(_report({"dob": 4799, "height": 3}))
    assert "unreadable cells counted as missing: dob 4799, height 3" in words
    assert "4,799 of 5,000 dob cells cannot be read" in words
    assert 'date_formats names the format (e.g. { dob = "%d.%m.%Y" })' in words
    assert "height cells" not in words  # a few typos are only counted


def test_a_few_unreadable_cells_are_only_counted() -> None:
    words = data_words(_report({"dob": 2500}))
    assert "cannot be read" not in words  # half is not most
