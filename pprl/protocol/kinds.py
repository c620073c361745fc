"""Attribute kinds: how a register's value of each kind is normalised before smashing.

Both parties must normalise alike, so the kind of every attribute is part of the agreement;
the date format is not, because each party parses its own file into the same canonical form.
The scale of a quantity or of coordinates (the size of one unit of distance) is, because it
sets the distances.
A blank cell is a missing value (None), never the empty string: the features and the
classifier see that it is missing instead of a distance to "".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Context, Decimal

# name: person names; text: free text (street, suburb); date: calendar dates, canonical
# YYYYMMDD; number: digit strings (postcode, house number, phone, SSN), letters refused;
# code: letters and digits without punctuation (a UK postcode, a licence number);
# category: a small set of values (sex, state); quantity: a real number (a latitude, a height,
# a weight), compared by its absolute difference in units of the attribute's scale;
# coordinates: a point on the Earth, "LAT,LON" in decimal degrees, compared by the
# great-circle (haversine) distance in units of the attribute's scale, in metres. That scale
# is also the stated tolerance: two records of one place may lie up to one scale apart (a
# GPS fix's error, a geocoder's rounding), and the training corrupts a point by moving it
# within that distance (error_model.coordinate_errors).
KINDS = ("name", "text", "date", "number", "code", "category", "quantity", "coordinates")
# The kinds whose distance is counted in units of a per-attribute scale, which they need.
SCALED_KINDS = ("quantity", "coordinates")
DEFAULT_KIND = "name"
# The mean Earth radius (IUGG), in metres, of the haversine distance.
EARTH_RADIUS_METRES = 6_371_008.8
# The reference set's own date columns are written as ISO dates, whatever the records use.
REFERENCE_DATE_FORMAT = "%Y-%m-%d"
DEFAULT_DATE_FORMAT = "%Y-%m-%d"

_NUMBER_SEPARATORS = re.compile(r"[\s\-./()+]")
_NOT_ALPHANUMERIC = re.compile(r"[^0-9A-Z]")
_PUNCTUATION = re.compile(r"[^\w\s]")
# A sign, digits and at most one decimal point; no comma, since "12,500" may be twelve and a
# half or twelve thousand five hundred, and no exponent or thousands separator.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
# Latitude and longitude, separated by a comma, a semicolon or a space (spaces allowed around
# a comma or semicolon); each part a decimal as a quantity is written.
_COORDINATE_PAIR = re.compile(r"([^,;\s]+)\s*[,;\s]\s*([^,;\s]+)")
# A double's shortest repr has at most 17 significant digits: this context never rounds it,
# whatever another module makes of the thread's default context.
_REPR_DIGITS = Context(prec=17)


class BadValue(ValueError):
    """A value its kind cannot read; the loader adds the file, row and field."""


@dataclass(frozen=True)
class Attribute:
    """One compared attribute: its column, its kind, (dates only) the format it is written
    in, as a strptime pattern, and (quantities and coordinates only) its scale, the
    difference that counts as one unit of distance (in metres for coordinates, where it is
    also the tolerance: two records of one place may lie up to one scale apart)."""

    name: str
    kind: str = DEFAULT_KIND
    date_format: str = DEFAULT_DATE_FORMAT
    scale: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"attribute {self.name!r} has unknown kind {self.kind!r}; "
                f"expected one of {', '.join(KINDS)}"
            )
        if (self.kind in SCALED_KINDS) != (self.scale is not None):
            raise ValueError(
                f"attribute {self.name!r}: a quantity or coordinates, and no other kind, "
                "has a scale"
            )
        if self.scale is not None:
            check_scale(self.name, self.scale)

    def normalise(self, raw: str) -> str | None:
        """The canonical form both parties smash, or None when the cell is blank."""
        return normalise_value(self.kind, raw, self.date_format)


def kinds_of(attributes: Sequence[Attribute]) -> dict[str, str]:
    """Each attribute's kind, as the agreement takes them."""
    return {attribute.name: attribute.kind for attribute in attributes}


def scales_of(attributes: Sequence[Attribute]) -> dict[str, float]:
    """The scale of each quantity and coordinates attribute, as the agreement takes them."""
    return {a.name: a.scale for a in attributes if a.scale is not None}


def normalise_value(kind: str, raw: str, date_format: str = DEFAULT_DATE_FORMAT) -> str | None:
    """Canonical form of one cell; raises BadValue when the kind cannot read it."""
    text = " ".join(raw.split())
    if not text:
        return None
    if kind in ("name", "category"):
        return text.upper()
    if kind == "text":
        return " ".join(_PUNCTUATION.sub(" ", _ascii_upper(text)).split()) or None
    if kind == "code":
        return _NOT_ALPHANUMERIC.sub("", _ascii_upper(text)) or None
    if kind == "number":
        digits = _NUMBER_SEPARATORS.sub("", text)
        if not digits.isascii() or not digits.isdigit():
            raise BadValue(f"{raw!r} is not a number (digits, with spaces or - . / ( ) +)")
        return digits
    if kind == "date":
        try:
            return datetime.strptime(text, date_format).strftime("%Y%m%d")
        except ValueError:
            raise BadValue(f"{raw!r} is not a date in the format {date_format!r}") from None
    if kind == "quantity":
        return canonical_quantity(text)
    if kind == "coordinates":
        return canonical_coordinates(text)
    raise ValueError(f"unknown kind {kind!r}")


def canonical_quantity(text: str) -> str:
    """The shortest decimal that reads back as the same double, without exponent or trailing
    zeros ("175.50" and "+175.5" are both 175.5; "-0" is 0): two parties writing one number
    differently still compare equal, and the distance is computed from what it reads back."""
    if not _DECIMAL.fullmatch(text):
        raise BadValue(
            f"{text!r} is not a decimal number (digits, an optional sign and decimal point; "
            "no decimal comma or thousands separator)"
        )
    number = float(text) + 0.0
    if not math.isfinite(number):
        raise BadValue(f"{text!r} is too large a number")
    return format(Decimal(repr(number)).normalize(_REPR_DIGITS), "f")


def canonical_coordinates(text: str) -> str:
    """The canonical "lat,lon", each part written by canonical_quantity ("48.85660, 2.3522"
    and "48.8566;2.3522" are both 48.8566,2.3522), refusing anything else and a point off the
    globe: a latitude outside [-90, 90] or a longitude outside [-180, 180]."""
    expected = (
        "coordinates are LAT,LON in decimal degrees (e.g. 48.8566,2.3522; also LAT LON or LAT;LON)"
    )
    match = _COORDINATE_PAIR.fullmatch(text.strip())
    if match is None:
        raise BadValue(f"{text!r} is not a point: {expected}")
    try:
        latitude, longitude = canonical_quantity(match[1]), canonical_quantity(match[2])
    except BadValue:
        raise BadValue(f"{text!r} is not a point: {expected}") from None
    if not -90 <= float(latitude) <= 90:
        raise BadValue(f"{text!r} has latitude {latitude}, outside -90 to 90: {expected}")
    if not -180 <= float(longitude) <= 180:
        raise BadValue(f"{text!r} has longitude {longitude}, outside -180 to 180: {expected}")
    return f"{latitude},{longitude}"


def point_of(canonical: str) -> tuple[float, float]:
    """(latitude, longitude) in degrees of a canonical "lat,lon"."""
    latitude, _, longitude = canonical.partition(",")
    return float(latitude), float(longitude)


def check_scale(name: str, scale: float) -> None:
    """A quantity's or coordinates' scale divides every difference, so it must be a finite
    positive number."""
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        raise ValueError(f"the scale of {name!r} must be a number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"the scale of {name!r} must be a finite number > 0, got {scale!r}")


def _ascii_upper(text: str) -> str:
    """Accents dropped (É -> E) so that registers typed with and without them agree."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper()


def swap_day_month(canonical: str) -> str:
    """YYYYMMDD with day and month exchanged: the most common date error in registers."""
    return canonical[:4] + canonical[6:8] + canonical[4:6]
