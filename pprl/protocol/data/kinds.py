"""Attribute kinds: how a register's value of each kind is read, compared and checked in a
reference column. One `Kind` object per kind, in the `KINDS` registry; the rest of the method
asks the kind instead of comparing its name.

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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pprl.protocol.data.canonical import (
    EARTH_RADIUS_METRES,
    BadValue,
    ascii_upper,
    canonical_coordinates,
    canonical_quantity,
    composed,
    point_of,
)
from pprl.protocol.data.distances import (
    coordinate_table,
    date_table,
    levenshtein_table,
    quantity_table,
)
from pprl.protocol.errors import SettingError

if TYPE_CHECKING:
    from pprl.protocol.data.distances import Metric

DEFAULT_KIND = "name"
# The reference set's own date columns are written as ISO dates, whatever the records use.
REFERENCE_DATE_FORMAT = "%Y-%m-%d"
DEFAULT_DATE_FORMAT = "%Y-%m-%d"

_NUMBER_SEPARATORS = re.compile(r"[\s\-./()+]")
_NOT_ALPHANUMERIC = re.compile(r"[^0-9A-Z]")
_PUNCTUATION = re.compile(r"[^\w\s]")
_APOSTROPHES = re.compile("['\u2019\u02bc`]")


class Kind:
    """One attribute kind: upper-cased text compared by edit distance, unless a subclass says
    otherwise."""

    name: ClassVar[str]
    # Whether its distance is counted in units of a per-attribute scale, which it then needs.
    scaled: ClassVar[bool] = False
    # The dimensions of a scaled kind's positions (`points`); 0 for the others.
    dimensions: ClassVar[int] = 0
    # Fewer distinct values in a mapped reference column leave every record's distance vector
    # nearly alike: a run would link nothing (1,000 identical rows did) or fail in SMASH.
    min_reference_values: ClassVar[int] = 2
    # What a reference column mapped from it must be written as, when that is not obvious.
    reference_form: ClassVar[str] = ""
    # Whether each party states the format its cells are written in ([records] date_formats).
    formatted: ClassVar[bool] = False
    # Whether the peer's dictionary of names attacks it (the privacy gate), and the error
    # model's name variants (nicknames, a name's role: first, middle, last) apply.
    names_people: ClassVar[bool] = False
    # Whether its values are words: they take typing, OCR and phonetic errors, and can be
    # combined with other words or cut to an initial (pprl.protocol.data.combined).
    words: ClassVar[bool] = False
    # How messages name an attribute of this kind ("a quantity", "coordinates").
    described: ClassVar[str] = ""
    # Whether a value names one person alone (a social security number): sealed linkage's
    # default blocking keys key on it by itself (pprl.protocol.sealed.session).
    identifies: ClassVar[bool] = False
    # Its part in sealed linkage's default blocking keys (pprl.protocol.sealed.session):
    # "name" (its Soundex code), "date", "place" (with a date or both names it singles a
    # person out: an address part) or "number" (a place two of which with one name still do:
    # a postcode and a street number); "" for none (a category is shared by too many, a
    # quantity or a point is rarely written alike twice).
    blocking_role: ClassVar[str] = ""

    def read(self, text: str, date_format: str) -> str | None:
        """The canonical form of a non-blank cell (spacing already collapsed); BadValue when
        the kind cannot read it."""
        return text.upper()

    def distances(
        self, values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float | None
    ) -> np.ndarray:
        """(len(a), len(b)) uint8 distances between present values, at most `clamp`."""
        return levenshtein_table(values_a, values_b, clamp)

    def blank_reference(self) -> str | None:
        """Why a blank reference cell cannot be compared against, or None when it can."""
        return None

    def scale_example(self, attribute: str) -> str:
        """What a scaled kind's scale is, with an example, for a configuration that lacks it."""
        raise TypeError(f"a {self.name} has no scale")

    def points(self, values: Sequence[str], scale: float) -> np.ndarray:
        """(n, dimensions) positions of a scaled kind's values in units of `scale`."""
        raise TypeError(f"a {self.name} has no position")


class Name(Kind):
    """Person names: accents folded (MÜLLER, MULLER; ŁUKASZ, LUKASZ), apostrophes dropped
    (O'BRIEN, OBRIEN), hyphens, full stops and other punctuation read as spaces (JEAN-LUC,
    JEAN LUC): one register writes a name each of these ways and another the other."""

    name = "name"
    blocking_role = "name"
    min_reference_values = 10
    names_people = True
    words = True

    def read(self, text: str, date_format: str) -> str | None:
        unquoted = _APOSTROPHES.sub("", ascii_upper(text))
        return " ".join(_PUNCTUATION.sub(" ", unquoted).split()) or None


class Category(Kind):
    """A small set of values (sex, state)."""

    name = "category"


class Text(Kind):
    """Free text (street, suburb): accents and punctuation dropped."""

    name = "text"
    blocking_role = "place"
    min_reference_values = 10
    words = True

    def read(self, text: str, date_format: str) -> str | None:
        return " ".join(_PUNCTUATION.sub(" ", ascii_upper(text)).split()) or None


class Code(Kind):
    """Letters and digits without punctuation (a UK postcode, a licence number)."""

    name = "code"
    blocking_role = "number"

    def read(self, text: str, date_format: str) -> str | None:
        return _NOT_ALPHANUMERIC.sub("", ascii_upper(text)) or None


class Number(Kind):
    """Digit strings (postcode, house number, phone, SSN); letters refused."""

    name = "number"
    blocking_role = "number"

    def read(self, text: str, date_format: str) -> str | None:
        digits = _NUMBER_SEPARATORS.sub("", text)
        if not digits.isascii() or not digits.isdigit():
            raise BadValue(text, "is not a number (digits, with spaces or - . / ( ) +)")
        return digits


class Identifier(Number):
    """A number given to one person (social security, national insurance, health service
    number): read, compared and corrupted as a number. One that two records share names one
    person, so sealed linkage keys on it alone; a typo in it is caught by the other keys."""

    name = "identifier"
    identifies = True


class Date(Kind):
    """Calendar dates, canonical YYYYMMDD, compared by edit distance with day and month
    swaps one edit away."""

    name = "date"
    blocking_role = "date"
    formatted = True
    reference_form = f" (reference dates are written {REFERENCE_DATE_FORMAT})"

    def read(self, text: str, date_format: str) -> str | None:
        try:
            return datetime.strptime(text, date_format).strftime("%Y%m%d")
        except ValueError:
            raise BadValue(text, f"is not a date in the format {date_format!r}") from None

    def distances(
        self, values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float | None
    ) -> np.ndarray:
        return date_table(values_a, values_b, clamp)


class Quantity(Kind):
    """A real number (a latitude, a height, a weight), compared by its absolute difference
    in units of the attribute's scale."""

    name = "quantity"
    scaled = True
    dimensions = 1
    described = "a quantity"

    def read(self, text: str, date_format: str) -> str | None:
        return canonical_quantity(text)

    def distances(
        self, values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float | None
    ) -> np.ndarray:
        if scale is None:
            raise SettingError("a quantity's distance needs its scale")
        return quantity_table(values_a, values_b, clamp, scale)

    def blank_reference(self) -> str | None:
        return "a blank cell: a column mapped from a quantity needs a number in every row"

    def scale_example(self, attribute: str) -> str:
        return (
            f"quantity {attribute} needs its scale, the difference that counts as one unit of "
            f"distance (e.g. scales = {{ {attribute} = 0.5 }})"
        )

    def points(self, values: Sequence[str], scale: float) -> np.ndarray:
        """On the line."""
        return np.array([[float(value) / scale] for value in values], dtype=np.float64)


class Coordinates(Kind):
    """A point on the Earth, "LAT,LON" in decimal degrees, compared by the great-circle
    (haversine) distance in units of the attribute's scale, in metres. That scale is also the
    stated tolerance: two records of one place may lie up to one scale apart (a GPS fix's
    error, a geocoder's rounding), and the training corrupts a point by moving it within that
    distance (error_model.coordinate_errors)."""

    name = "coordinates"
    scaled = True
    dimensions = 3
    described = "coordinates"

    def read(self, text: str, date_format: str) -> str | None:
        return canonical_coordinates(text)

    def distances(
        self, values_a: Sequence[str], values_b: Sequence[str], clamp: int, scale: float | None
    ) -> np.ndarray:
        if scale is None:
            raise SettingError("the distance of coordinates needs their scale")
        return coordinate_table(values_a, values_b, clamp, scale)

    def blank_reference(self) -> str | None:
        return "a blank cell: a column mapped from coordinates needs a point (LAT,LON) in every row"

    def scale_example(self, attribute: str) -> str:
        return (
            f"coordinates {attribute} need their scale, the metres that count as one unit of "
            "distance and the tolerance within which two records of one place may lie "
            f"(e.g. scales = {{ {attribute} = 50 }})"
        )

    def points(self, values: Sequence[str], scale: float) -> np.ndarray:
        """On the Earth's surface in metres, as 3-D points, so that nearby places are near in
        every direction whatever the latitude, with no projection to agree."""
        pairs = [point_of(value) for value in values]
        radians = np.radians(np.array(pairs, dtype=np.float64).reshape(len(values), 2))
        latitude, longitude = radians[:, 0], radians[:, 1]
        xyz = np.stack(
            [
                np.cos(latitude) * np.cos(longitude),
                np.cos(latitude) * np.sin(longitude),
                np.sin(latitude),
            ],
            axis=1,
        )
        return xyz * (EARTH_RADIUS_METRES / scale)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Name(),
        Text(),
        Date(),
        Number(),
        Identifier(),
        Code(),
        Category(),
        Quantity(),
        Coordinates(),
    )
}
# The kinds whose distance is counted in units of a per-attribute scale, which they need.
SCALED_KINDS = tuple(name for name, kind in KINDS.items() if kind.scaled)
WORD_KINDS = tuple(name for name, kind in KINDS.items() if kind.words)


def kind_named(name: str) -> Kind:
    """The registry's entry, or a ValueError that lists the kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise SettingError(f"unknown kind {name!r}; expected one of {', '.join(KINDS)}") from None


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
            raise SettingError(
                f"attribute {self.name!r} has unknown kind {self.kind!r}; "
                f"expected one of {', '.join(KINDS)}"
            )
        if KINDS[self.kind].scaled != (self.scale is not None):
            raise SettingError(
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
    text = " ".join(composed(raw).split())
    if not text:
        return None
    return kind_named(kind).read(text, date_format)


def kind_distances(
    values_a: Sequence[str],
    values_b: Sequence[str],
    kind: str = DEFAULT_KIND,
    clamp: int = 254,
    scale: float | None = None,
    metric: Metric | None = None,
) -> np.ndarray:
    """(len(a), len(b)) uint8 distances of the kind between present (non-empty) values;
    anything above `clamp` - 1 reads as `clamp`. `scale` is a quantity's unit of distance,
    or coordinates' in metres; `metric`, when given, replaces the kind's distance."""
    if metric is not None:
        return metric.table(values_a, values_b, kind, clamp, scale)
    return kind_named(kind).distances(values_a, values_b, clamp, scale)


def check_scale(name: str, scale: float) -> None:
    """A quantity's or coordinates' scale divides every difference, so it must be a finite
    positive number."""
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        raise SettingError(f"the scale of {name!r} must be a number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise SettingError(f"the scale of {name!r} must be a finite number > 0, got {scale!r}")
