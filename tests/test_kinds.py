"""Attribute kinds: canonical forms, and distances that suit each kind."""

from __future__ import annotations

import pytest

from pprl.protocol.distances import kind_distances
from pprl.protocol.kinds import BadValue, normalise_value, swap_day_month


@pytest.mark.parametrize(
    ("kind", "raw", "canonical"),
    [
        ("name", "  mary  ann ", "MARY ANN"),
        ("text", "12, St. Kilda Rd.", "12 ST KILDA RD"),
        ("text", "Rue de l'Église", "RUE DE L EGLISE"),
        ("code", "sw1a 1aa", "SW1A1AA"),
        ("number", "(02) 6123-4567", "0261234567"),
        ("category", " nsw ", "NSW"),
        ("date", "1987-11-23", "19871123"),
        ("name", "   ", None),
        ("date", "", None),
    ],
)
def test_canonical_forms(kind: str, raw: str, canonical: str | None) -> None:
    assert normalise_value(kind, raw) == canonical


def test_a_date_format_is_stated_and_enforced() -> None:
    assert normalise_value("date", "23/11/1987", "%d/%m/%Y") == "19871123"
    assert normalise_value("date", "19871123", "%Y%m%d") == "19871123"
    with pytest.raises(BadValue, match="not a date"):
        normalise_value("date", "11/23/1987", "%d/%m/%Y")


def test_letters_in_a_number_are_refused() -> None:
    with pytest.raises(BadValue, match="not a number"):
        normalise_value("number", "26O0")


def test_a_swapped_day_and_month_or_a_year_slip_stays_close() -> None:
    """Plain edit distance puts 19871105 and 19870511 four edits apart; the date distance
    tries the swap, so their distances to any reference date differ by at most one."""
    date, swapped, slipped = "19871105", swap_day_month("19871105"), "19881105"
    reference = ["19500101", "19871231", "20010911", "19760704", "19870511"]
    plain = kind_distances([date, swapped], reference, "name")
    dated = kind_distances([date, swapped, slipped], reference, "date")
    assert (abs(plain[0].astype(int) - plain[1].astype(int)) > 1).any()
    assert (abs(dated[0].astype(int) - dated[1].astype(int)) <= 1).all()
    assert (abs(dated[0].astype(int) - dated[2].astype(int)) <= 1).all()
    assert dated[1, 4] == 0 and dated[0, 4] == 1
