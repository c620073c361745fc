"""Canonical forms of values that are not plain text: decimals, points on the Earth, dates
as YYYYMMDD. Both parties write a value the same way, whatever their registers did, so the
distances between values are the same on both sides."""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Context, Decimal

from pprl.protocol.errors import PprlError

# The mean Earth radius (IUGG), in metres, of the haversine distance.
EARTH_RADIUS_METRES = 6_371_008.8

# A sign, digits and at most one decimal point; no comma, since "12,500" may be twelve and a
# half or twelve thousand five hundred, and no exponent or thousands separator.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
# Latitude and longitude, separated by a comma, a semicolon or a space (spaces allowed around
# a comma or semicolon); each part a decimal as a quantity is written.
_COORDINATE_PAIR = re.compile(r"([^,;\s]+)\s*[,;\s]\s*([^,;\s]+)")
# A double's shortest repr has at most 17 significant digits: this context never rounds it,
# whatever another module makes of the thread's default context.
_REPR_DIGITS = Context(prec=17)


class BadValue(PprlError, ValueError):
    """A value its kind cannot read; the loader adds the file, row and field. `rule` says
    what was wrong without the value, for errors that leave the party."""

    def __init__(self, value: str, rule: str) -> None:
        super().__init__(f"{value!r} {rule}")
        self.rule = rule


def canonical_quantity(text: str) -> str:
    """The shortest decimal that reads back as the same double, without exponent or trailing
    zeros ("175.50" and "+175.5" are both 175.5; "-0" is 0): two parties writing one number
    differently still compare equal, and the distance is computed from what it reads back."""
    if not _DECIMAL.fullmatch(text):
        raise BadValue(
            text,
            "is not a decimal number (digits, an optional sign and decimal point; "
            "no decimal comma or thousands separator)",
        )
    number = float(text) + 0.0
    if not math.isfinite(number):
        raise BadValue(text, "is too large a number")
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
        raise BadValue(text, f"is not a point: {expected}")
    try:
        latitude, longitude = canonical_quantity(match[1]), canonical_quantity(match[2])
    except BadValue:
        raise BadValue(text, f"is not a point: {expected}") from None
    if not -90 <= float(latitude) <= 90:
        raise BadValue(text, f"has latitude {latitude}, outside -90 to 90: {expected}")
    if not -180 <= float(longitude) <= 180:
        raise BadValue(text, f"has longitude {longitude}, outside -180 to 180: {expected}")
    return f"{latitude},{longitude}"


def point_of(canonical: str) -> tuple[float, float]:
    """(latitude, longitude) in degrees of a canonical "lat,lon"."""
    latitude, _, longitude = canonical.partition(",")
    return float(latitude), float(longitude)


def composed(text: str) -> str:
    """One Unicode form for every value (NFC), without invisible formatting characters (a
    zero-width space, a byte-order mark, a direction mark): a name typed as "é" and as "e"
    plus a combining accent, or with a stray zero-width space, is the same name. Whether
    accents then count is the kind's choice (names and text drop them)."""
    normal = unicodedata.normalize("NFC", text)
    return "".join(c for c in normal if unicodedata.category(c) != "Cf")


# Letters Unicode does not decompose into a base letter and an accent, as registers without
# them write them (ß becomes SS by upper-casing).
_UNDECOMPOSED = str.maketrans(
    {"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Æ": "AE", "æ": "ae",
     "Œ": "OE", "œ": "oe", "Þ": "TH", "þ": "th", "\u0131": "i"}
)  # fmt: skip


def ascii_upper(text: str) -> str:
    """Accents dropped (É -> E, Ł -> L, Ø -> O) so that registers typed with and without them
    agree."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper()


def swap_day_month(canonical: str) -> str:
    """YYYYMMDD with day and month exchanged: the most common date error in registers."""
    return canonical[:4] + canonical[6:8] + canonical[4:6]
