"""Attribute kinds: canonical forms, and distances that suit each kind."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.data import distances
from pprl.protocol.data.canonical import BadValue, swap_day_month
from pprl.protocol.data.kinds import Attribute, kind_distances, normalise_value
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.vectors.smashing import distance_table, smash_values


@pytest.mark.parametrize(
    ("kind", "raw", "canonical"),
    [
        ("name", "  mary  ann ", "MARY ANN"),
        # one register writes a name with accents and punctuation, another without
        ("name", "Müller-Schmidt", "MULLER SCHMIDT"),
        ("name", "O'Brien", "OBRIEN"),
        ("name", "D\u2019Angelo", "DANGELO"),
        ("name", "Łukasz", "LUKASZ"),
        ("name", "Ørsted", "ORSTED"),
        ("name", "Jean-Luc St. John", "JEAN LUC ST JOHN"),
        ("name", "van der Berg", "VAN DER BERG"),
        ("name", "'", None),
        ("text", "12, St. Kilda Rd.", "12 ST KILDA RD"),
        ("text", "Rue de l'Église", "RUE DE L EGLISE"),
        ("code", "sw1a 1aa", "SW1A1AA"),
        ("number", "(02) 6123-4567", "0261234567"),
        ("category", " nsw ", "NSW"),
        ("date", "1987-11-23", "19871123"),
        ("quantity", " 175.50 ", "175.5"),
        ("quantity", "+0.250", "0.25"),
        ("quantity", ".5", "0.5"),
        ("quantity", "-12.", "-12"),
        ("quantity", "-0.0", "0"),
        ("quantity", "1700", "1700"),
        ("quantity", "-33.8688", "-33.8688"),
        ("coordinates", " -33.86880 ; 151.2093 ", "-33.8688,151.2093"),
        ("coordinates", "48.8566 2.3522", "48.8566,2.3522"),
        ("name", "   ", None),
        ("date", "", None),
        ("quantity", " ", None),
        ("coordinates", " ", None),
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


@pytest.mark.parametrize(
    "raw",
    ["12,5", "1,250", "abc", "1 000", "1e3", "nan", "inf", "1_000", "--5", "5-", "1.2.3", "١٢"],
)
def test_a_quantity_is_a_plain_decimal_and_nothing_ambiguous(raw: str) -> None:
    """A decimal comma or a thousands separator could mean either, so both are refused."""
    with pytest.raises(BadValue, match="not a decimal number"):
        normalise_value("quantity", raw)


def test_one_number_written_two_ways_is_one_canonical_quantity() -> None:
    assert normalise_value("quantity", "0.10") == normalise_value("quantity", "+.1") == "0.1"
    with pytest.raises(BadValue, match="too large"):
        normalise_value("quantity", "1" + "0" * 400)


def test_a_quantity_takes_its_scale_from_its_attribute() -> None:
    assert Attribute("height", "quantity", scale=0.5).normalise("175.50") == "175.5"


@pytest.mark.parametrize(
    ("kind", "scale", "words"),
    [
        ("quantity", None, "a quantity or coordinates, and no other kind, has a scale"),
        ("coordinates", None, "a quantity or coordinates, and no other kind, has a scale"),
        ("name", 1.0, "a quantity or coordinates, and no other kind, has a scale"),
        ("coordinates", 0.0, "must be a finite number > 0"),
        ("quantity", 0.0, "must be a finite number > 0"),
        ("quantity", -1.0, "must be a finite number > 0"),
        ("quantity", float("nan"), "must be a finite number > 0"),
        ("quantity", True, "must be a number"),
    ],
)
def test_a_quantity_and_only_a_quantity_has_a_positive_scale(
    kind: str, scale: float | None, words: str
) -> None:
    with pytest.raises(ValueError, match="'height'") as caught:
        Attribute("height", kind, scale=scale)
    assert words in str(caught.value)


def test_a_quantity_distance_is_the_difference_in_units_of_the_scale() -> None:
    table = kind_distances(["175.5", "170"], ["170", "160", "180.2", "-10"], "quantity", scale=0.5)
    # 5.5/0.5, 15.5/0.5, 4.7/0.5 -> 9.4, and 185.5/0.5 = 371 clamped to 254
    assert table.tolist() == [[11, 31, 9, 254], [0, 20, 20, 254]]
    assert table.dtype == np.uint8
    # 0.3 - 0.1 is 0.19999999999999998: rounded, not truncated, it is two tenths
    assert kind_distances(["0.3"], ["0.1"], "quantity", scale=0.1).tolist() == [[2]]
    assert kind_distances(["0.3"], ["0.1"], "quantity", scale=0.01).tolist() == [[20]]


def test_a_quantity_distance_is_clamped_like_any_other() -> None:
    table = kind_distances(["0"], ["3", "9", "10", "11", "500"], "quantity", clamp=10, scale=1)
    assert table.tolist() == [[3, 9, 10, 10, 10]]


def test_a_quantity_without_its_scale_has_no_distance() -> None:
    with pytest.raises(ValueError, match="scale"):
        kind_distances(["1"], ["2"], "quantity")


def test_a_large_quantity_table_is_computed_in_blocks_alike(monkeypatch) -> None:
    values = [str(v) for v in np.random.default_rng(3).uniform(-90, 90, size=37).round(3)]
    reference = values[:11]
    whole = kind_distances(values, reference, "quantity", scale=0.25)
    monkeypatch.setattr(distances, "_QUANTITY_CELLS", 25)  # two rows of 11 at a time
    assert (kind_distances(values, reference, "quantity", scale=0.25) == whole).all()
    numbers = np.array([float(v) for v in values])
    direct = np.minimum(np.rint(np.abs(numbers[:, None] - numbers[None, :11]) / 0.25), 254)
    assert (whole == direct).all()


def test_a_missing_quantity_is_released_as_the_missing_code() -> None:
    reference = ["150", "175", "200"]
    codes, _, table = distance_table(["175.5", "", "150"], reference, kind="quantity", scale=0.5)
    assert table[codes[1]].tolist() == [MISSING_CODE] * 3
    assert table[codes[0]].tolist() == [51, 1, 49]
    smashed = smash_values(["", "150"], reference, kind="quantity", scale=0.5)
    assert smashed.tolist() == [[MISSING_CODE] * 3, [0, 50, 100]]
