"""A stated model of the errors real registers hold, as a mixture of phenomena.

The single GeCo-style edit of pprl.protocol.data.corruption ("one-error") is what the paper
measures, but the same person's two register entries differ in more ways: nicknames, a
dropped middle name, first and last name in each other's field, a blank, a married name, a
date with day and month exchanged. This module corrupts a record with such phenomena so
that training can learn them and the benchmarks can measure each alone.

A model is a mixture: each error picks a phenomenon with probability proportional to its
weight among those that apply to the record (a record without a date takes no date error),
then a field and a variant uniformly. The number of errors a record gets is drawn from the
model's count distribution. A record none of the model's phenomena applies to gets a typo
instead, so every corrupted record differs from its original.

Phenomena, and where they come from:

- typo: one keyboard-neighbour substitution, insertion, deletion or transposition in a name
  (Damerau 1964, "A technique for computer detection and correction of spelling errors":
  over 80% of misspelt words carry one such error; Pollock & Zamora 1984, "Automatic
  spelling correction in scientific and scholarly text": 90-95% of keyed misspellings carry
  one error).
- ocr, phonetic: a look-alike or sound-alike spelling (Christen & Pudjijono 2009, "Accurate
  synthetic generation of realistic personal information"; Tran, Vatsalan & Christen 2013,
  "GeCo: an online personal data generator and corruptor"; their OCR and phonetic
  corruptors, tables in pprl.protocol.data.corruption).
- nickname: the first name replaced by a nickname or by the name it is a nickname of, from
  the nicknames package (Northern & Crews, a hand-curated table of English given names and
  nicknames, Apache-2.0); GeCo and FEBRL replace values from such look-up tables
  (CorruptCategoricalValue; FEBRL's misspelling files, with a probability of 0.30 for
  given names in its generator).
- middle: the middle name dropped or reduced to its initial (Christen 2012, "Data
  Matching", ch. 2 on name variations: initials and omitted middle names).
- swap: first and last name, or first and middle name, in each other's field (FEBRL's field
  swaps; Christen 2012 on values in the wrong field).
- missing: a field left blank (GeCo's CorruptMissingValue; FEBRL's miss_prob).
- surname: a hyphenated double surname or a changed surname, as at marriage (Harron et al.
  2017, "Challenges in administrative data linkage for research", on name changes over
  time).
- date (kind date, YYYYMMDD): day and month exchanged, the year off by one, or one digit
  mistyped, always into a valid date (Christen 2012 on swapped day and month).
- digit (kind number): one digit substituted, two adjacent digits transposed, or a digit
  dropped (Damerau's four single errors on digit strings; FEBRL's identifier and phone
  modifications).
- quantity (kind quantity): one digit of the written number substituted, or two adjacent
  digits transposed, the point and sign kept (175.5 becomes 176.5, 175.8 or 157.5): a keying
  error, as for numbers; a digit dropped would also move the point, so it is left out.
- coordinates (kind coordinates, "lat,lon"): the point moved within the attribute's scale,
  its stated tolerance, in a random direction (a second GPS fix, a geocoder's rounding:
  uniform in the disc of one scale's radius); one digit of the latitude or the longitude
  substituted or two adjacent digits transposed, as for a quantity; or latitude and longitude
  exchanged, when the exchanged point is one. Every result is a canonical point on the
  globe; a point without a known scale takes the digit and exchange errors only.

Errors per record: the default is 1, 2 or 3 with weights 0.6, 0.3 and 0.1. The studies
above count errors per word, and find one error in 80-95% of misspelt words; a record has
several fields, so more records than words carry two or three errors. FEBRL and GeCo leave
the count to the user (FEBRL's example data sets use up to two or six modifications per
record); 0.6/0.3/0.1 is a stated assumption, not a measured rate.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache, lru_cache
from importlib import resources
from itertools import pairwise
from typing import Any

import numpy as np
from nicknames import NickNamer

from pprl.protocol.data.canonical import (
    EARTH_RADIUS_METRES,
    BadValue,
    canonical_coordinates,
    canonical_quantity,
    point_of,
    swap_day_month,
)
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.kinds import DEFAULT_KIND, KINDS, SCALED_KINDS
from pprl.protocol.errors import SettingError

PHENOMENA: tuple[str, ...] = (
    "typo",
    "ocr",
    "phonetic",
    "nickname",
    "middle",
    "swap",
    "missing",
    "surname",
    "mover",
    "date",
    "digit",
    "quantity",
    "coordinates",
)
ONE_ERROR = "one-error"
"""The paper's corruption: exactly one GeCo-style edit on any field (Corrupter, unchanged)."""

DEFAULT_COUNTS: Mapping[int, float] = {1: 0.6, 2: 0.3, 3: 0.1}

# Column names that say which part of a person's name a field holds.
ROLES: Mapping[str, str] = {
    "first": "first",
    "first_name": "first",
    "firstname": "first",
    "given": "first",
    "given_name": "first",
    "forename": "first",
    "middle": "middle",
    "middle_name": "middle",
    "middlename": "middle",
    "last": "last",
    "last_name": "last",
    "lastname": "last",
    "surname": "last",
    "family": "last",
    "family_name": "last",
}
# Column names that say a field is part of an address: a person who moves changes them all.
ADDRESS_NAMES = frozenset(
    {
        "address", "address_1", "address_2", "address1", "address2", "street", "street_name",
        "street_address", "street_number", "house_number", "city", "town", "suburb", "locality",
        "postcode", "post_code", "postal_code", "zip", "zipcode", "zip_code", "state", "county",
        "region",
    }
)  # fmt: skip
ADDRESS = "address"
_TYPO_KINDS = ("keyboard", "insert", "delete", "transpose")
# Surnames a hyphenated or changed surname draws from: the most frequent census surnames.
_SURNAME_POOL = 1000
# Redraws of a record whose errors cancel out (say, two swaps) or blank every field.
_MAX_RECORD_ATTEMPTS = 100
# Bearings, in degrees clockwise from north, of the enumerated displacements: N, NE, ... NW.
COMPASS: tuple[int, ...] = tuple(range(0, 360, 45))
# A moved point is written to the decimals at which rounding moves it by at most this share
# of the scale, and moved at most 1 - this share of the scale, so it stays within the scale.
_ROUNDING_SHARE = 1e-3
_METRES_PER_DEGREE = EARTH_RADIUS_METRES * math.pi / 180  # 111,195 m of latitude
_MIN_POINT_DECIMALS, _MAX_POINT_DECIMALS = 5, 12


@dataclass(frozen=True)
class _Record:
    """What the phenomena may read: the values being corrupted and each field's role, kind and
    scale (quantities and coordinates; None when not known)."""

    values: list[str]
    roles: tuple[str | None, ...]
    kinds: tuple[str, ...]
    avoid: Collection[str]
    scales: tuple[float | None, ...]
    # Another record of the same file, whose address a mover takes (None: no move possible).
    donor: Sequence[str] | None = None

    def fields(self, role: str) -> list[int]:
        return [i for i, r in enumerate(self.roles) if r == role and self.values[i]]


Option = Any
Options = Callable[[_Record], list[Option]]
Apply = Callable[[_Record, Option, np.random.Generator], None]


def _pick(options: Sequence[Any], rng: np.random.Generator) -> Any:
    return options[int(rng.integers(len(options)))]


# -- name phenomena --------------------------------------------------------------------------


def _textual(record: _Record) -> list[int]:
    return [i for i, v in enumerate(record.values) if v and KINDS[record.kinds[i]].words]


def _edit_options(kind: str) -> Options:
    probe = Corrupter(np.random.default_rng(0), kinds=(kind,))

    # Asked of every text field at every error drawn, as `_of_kind`'s check is.
    @lru_cache(maxsize=1 << 16)
    def applies(value: str) -> bool:
        return bool(probe.applicable_kinds(value))

    return lambda record: [i for i in _textual(record) if applies(record.values[i])]


def _typo(record: _Record, i: int, rng: np.random.Generator) -> None:
    record.values[i] = Corrupter(rng, kinds=_TYPO_KINDS).corrupt_value(record.values[i])


def _edit(kind: str) -> Apply:
    def apply(record: _Record, i: int, rng: np.random.Generator) -> None:
        record.values[i] = Corrupter(rng).corrupt_value(record.values[i], kind)

    return apply


@cache
def _nicknamer() -> NickNamer:
    return NickNamer()


def name_variants(name: str) -> tuple[str, ...]:
    """Nicknames of ``name`` and the names it is a nickname of, upper-case and sorted (letters
    only: the table's few initials such as "K.C." are left out)."""
    table = _nicknamer()
    lower = name.strip().lower()
    found = table.nicknames_of(lower) | table.canonicals_of(lower)
    return tuple(sorted(v.upper() for v in found if v.isalpha() and v.isascii() and v != lower))


def _variants(record: _Record, i: int) -> list[str]:
    return [v for v in name_variants(record.values[i]) if v not in record.avoid]


def _nickname_options(record: _Record) -> list[int]:
    firsts = record.fields("first")
    return [i for i in firsts if _variants(record, i)]


def _nickname(record: _Record, i: int, rng: np.random.Generator) -> None:
    record.values[i] = _pick(_variants(record, i), rng)


def _middle(record: _Record, i: int, rng: np.random.Generator) -> None:
    value = record.values[i]
    record.values[i] = _pick(["", value[0]] if len(value) > 1 else [""], rng)


def _swap_options(record: _Record) -> list[tuple[int, int]]:
    return [
        (a, b)
        for a in record.fields("first")
        for b in record.fields("last") + record.fields("middle")
        if record.values[a] != record.values[b]
    ]


def _swap(record: _Record, pair: tuple[int, int], rng: np.random.Generator) -> None:
    a, b = pair
    record.values[a], record.values[b] = record.values[b], record.values[a]


def _missing_options(record: _Record) -> list[int]:
    filled = [i for i, v in enumerate(record.values) if v]
    return filled if len(filled) >= 2 else []


def _blank(record: _Record, i: int, rng: np.random.Generator) -> None:
    record.values[i] = ""


@cache
def surname_pool() -> tuple[str, ...]:
    """The most frequent US Census 1990 surnames, for hyphenated and changed surnames."""
    text = resources.files("names").joinpath("dist.all.last").read_text()
    return tuple(line.split()[0] for line in text.splitlines()[:_SURNAME_POOL] if line.strip())


def _surname(record: _Record, i: int, rng: np.random.Generator) -> None:
    value = record.values[i]
    others = [s for s in surname_pool() if s != value and s not in record.avoid]
    other = _pick(others, rng)
    record.values[i] = _pick([f"{value}-{other}", f"{other}-{value}", other], rng)


def _mover_options(record: _Record) -> list[tuple[int, ...]]:
    """The address fields, when the record has one and the donor's address differs."""
    fields = tuple(i for i, role in enumerate(record.roles) if role == ADDRESS)
    donor = record.donor
    if donor is None or not any(record.values[i] for i in fields):
        return []
    return [fields] if any(donor[i] != record.values[i] for i in fields) else []


def _move(record: _Record, fields: tuple[int, ...], rng: np.random.Generator) -> None:
    for i in fields:
        record.values[i] = record.donor[i] if record.donor is not None else ""


# -- dates and numbers -----------------------------------------------------------------------


# Each error draw lists every date one error away and checks each: remembering the answers
# makes corrupting dates about ten times cheaper (a register holds a few thousand dates).
@lru_cache(maxsize=1 << 18)
def _valid_date(value: str) -> bool:
    if len(value) != 8 or not value.isascii() or not value.isdigit():
        return False
    try:  # the constructor checks the calendar as strptime("%Y%m%d") does, ten times faster
        datetime(int(value[:4]), int(value[4:6]), int(value[6:]))
    except ValueError:
        return False
    return True


def date_errors(value: str) -> dict[str, list[str]]:
    """Every valid date one error away from ``value`` (YYYYMMDD), by kind of error."""
    return {kind: list(values) for kind, values in _date_errors(value)}


@lru_cache(maxsize=1 << 16)
def _date_errors(value: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """date_errors, remembered (every error drawn on a record lists them again)."""
    if not _valid_date(value):
        return ()
    swapped = swap_day_month(value)
    year = int(value[:4])
    slipped = [f"{y:04d}{value[4:]}" for y in (year - 1, year + 1) if 1 <= y <= 9999]
    typed = [
        value[:i] + d + value[i + 1 :] for i in range(8) for d in string.digits if d != value[i]
    ]
    errors = {
        "day-month": [swapped] if swapped != value else [],
        "year": slipped,
        "digit": typed,
    }
    valid = {k: tuple(sorted(v for v in vs if _valid_date(v))) for k, vs in errors.items()}
    return tuple((k, vs) for k, vs in valid.items() if vs)


def digit_errors(value: str) -> dict[str, list[str]]:
    """Every string one digit error away from ``value`` (a digit string), by kind of error."""
    if not value.isascii() or not value.isdigit():
        return {}
    errors = {
        "substitute": [
            value[:i] + d + value[i + 1 :]
            for i in range(len(value))
            for d in string.digits
            if d != value[i]
        ],
        "transpose": [
            value[:i] + b + a + value[i + 2 :] for i, (a, b) in enumerate(pairwise(value)) if a != b
        ],
        "drop": [value[:i] + value[i + 1 :] for i in range(len(value))] if len(value) >= 2 else [],
    }
    return {k: v for k, v in errors.items() if v}


def quantity_errors(value: str) -> dict[str, list[str]]:
    """Every quantity one digit error away from ``value`` (a canonical quantity), by kind of
    error, each in canonical form (175.5 with its last digit made 0 is 175)."""
    try:
        if canonical_quantity(value) != value:
            return {}
    except BadValue:
        return {}
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    errors = {
        "substitute": [
            value[:i] + d + value[i + 1 :] for i in digits for d in string.digits if d != value[i]
        ],
        "transpose": [
            value[:i] + value[i + 1] + value[i] + value[i + 2 :]
            for i in digits
            if i + 1 in digits and value[i] != value[i + 1]
        ],
    }
    return {k: sorted({canonical_quantity(v) for v in vs}) for k, vs in errors.items() if vs}


def point_decimals(scale: float) -> int:
    """The decimals of a degree a point moved within `scale` metres is written to: half a unit
    in the last place of both latitude and longitude moves it by less than a thousandth of the
    scale (7 decimals, about a centimetre, at 50 m), within 5 to 12."""
    wanted = math.ceil(math.log10(_METRES_PER_DEGREE / (scale * _ROUNDING_SHARE)))
    return min(_MAX_POINT_DECIMALS, max(_MIN_POINT_DECIMALS, wanted))


def moved_point(value: str, bearing: float, metres: float, decimals: int) -> str:
    """The canonical point `metres` from `value` (a canonical "lat,lon") along the great
    circle leaving it at `bearing` degrees clockwise from north, on the sphere of the
    haversine distance, written to `decimals` decimals; the longitude wraps into -180..180."""
    latitude, longitude = point_of(value)
    phi, theta = math.radians(latitude), math.radians(bearing)
    delta = metres / EARTH_RADIUS_METRES
    sine = math.sin(phi) * math.cos(delta) + math.cos(phi) * math.sin(delta) * math.cos(theta)
    phi_to = math.asin(min(1.0, max(-1.0, sine)))
    turn = math.atan2(
        math.sin(theta) * math.sin(delta) * math.cos(phi),
        math.cos(delta) - math.sin(phi) * math.sin(phi_to),
    )
    to_longitude = (longitude + math.degrees(turn) + 180.0) % 360.0 - 180.0
    return canonical_coordinates(f"{math.degrees(phi_to):.{decimals}f},{to_longitude:.{decimals}f}")


def displaced(value: str, scale: float, rng: np.random.Generator) -> str:
    """`value` moved within the tolerance `scale` (metres) in a random direction: a point
    uniform in the disc of that radius around it (less the thousandth its writing may add)."""
    reach = scale * (1 - _ROUNDING_SHARE) * math.sqrt(rng.random())
    return moved_point(value, rng.uniform(0.0, 360.0), reach, point_decimals(scale))


def coordinate_errors(value: str, scale: float | None = None) -> dict[str, list[str]]:
    """Every point one error away from ``value`` (a canonical "lat,lon"), by kind of error,
    each canonical and on the globe: "displace", the eight compass points one `scale` (in
    metres, the stated tolerance; less the thousandth their writing may add) away, when the
    scale is known (the error model moves a point in any direction, `displaced`); "digit",
    one digit error of the latitude or the longitude as quantity_errors makes them; "swap",
    latitude and longitude exchanged, when the longitude is a latitude too."""
    if not _on_globe(value):
        return {}
    errors = {kind: _point_errors(kind, value, scale) for kind in _point_error_kinds(value, scale)}
    found = {k: sorted(set(vs) - {value}) for k, vs in errors.items()}
    return {k: vs for k, vs in found.items() if vs}


def _point_error_kinds(value: str, scale: float | None) -> list[str]:
    """The kinds of error a canonical point has, without listing them: a digit error always
    (changing a digit changes the number, and lowering a digit, or raising the 0 of a zero
    part, keeps it in range), a displacement with a scale, an exchange when the longitude is
    a latitude too."""
    latitude, _, longitude = value.partition(",")
    kinds = ["digit"]
    if scale is not None:
        kinds.append("displace")
    if -90 <= float(longitude) <= 90 and longitude != latitude:
        kinds.append("swap")
    return sorted(kinds)


def _point_errors(kind: str, value: str, scale: float | None) -> list[str]:
    latitude, _, longitude = value.partition(",")
    if kind == "swap":
        return [f"{longitude},{latitude}"]
    if kind == "displace" and scale is not None:
        decimals = point_decimals(scale)
        reach = scale * (1 - _ROUNDING_SHARE)
        return [moved_point(value, bearing, reach, decimals) for bearing in COMPASS]
    # Parts from quantity_errors are canonical quantities: only their range is checked.
    typed = [
        f"{v},{longitude}"
        for vs in quantity_errors(latitude).values()
        for v in vs
        if -90 <= float(v) <= 90
    ]
    typed += [
        f"{latitude},{v}"
        for vs in quantity_errors(longitude).values()
        for v in vs
        if -180 <= float(v) <= 180
    ]
    return typed


def _on_globe(point: str) -> bool:
    try:
        return canonical_coordinates(point) == point
    except BadValue:
        return False


def _coordinate_options(record: _Record) -> list[int]:
    return [
        i
        for i, v in enumerate(record.values)
        if v and record.kinds[i] == "coordinates" and _on_globe(v)
    ]


def _coordinate_error(record: _Record, i: int, rng: np.random.Generator) -> None:
    """A kind of error uniformly among those that apply, then one of its results uniformly;
    a displacement anywhere within the scale rather than at one of the compass points."""
    value, scale = record.values[i], record.scales[i]
    chosen = _pick(_point_error_kinds(value, scale), rng)
    if chosen == "displace" and scale is not None:
        record.values[i] = displaced(value, scale, rng)
    else:
        record.values[i] = _pick(_point_errors(chosen, value, scale), rng)


def _of_kind(kind: str, errors: Callable[[str], dict[str, list[str]]]) -> Options:
    """The values of the kind, or of a kind refining it (an identifier is a number)."""
    family = type(KINDS[kind])

    # Whether a value has any such error, asked for every field at every error drawn: the
    # errors themselves are built only for the one chosen (TRAIN's four simulated rates ask
    # it of each record's values again and again).
    @lru_cache(maxsize=1 << 16)
    def erring(value: str) -> bool:
        return any(errors(value).values())

    def options(record: _Record) -> list[int]:
        return [
            i
            for i, v in enumerate(record.values)
            if v and isinstance(KINDS[record.kinds[i]], family) and erring(v)
        ]

    return options


def _by_kind(errors: Callable[[str], dict[str, list[str]]]) -> Apply:
    """A kind of error uniformly among those that apply, then one of its results uniformly."""

    def apply(record: _Record, i: int, rng: np.random.Generator) -> None:
        found = {k: v for k, v in errors(record.values[i]).items() if v}
        record.values[i] = _pick(found[_pick(sorted(found), rng)], rng)

    return apply


@dataclass(frozen=True)
class _Phenomenon:
    options: Options
    apply: Apply


_PHENOMENA: dict[str, _Phenomenon] = {
    "typo": _Phenomenon(_textual, _typo),
    "ocr": _Phenomenon(_edit_options("ocr"), _edit("ocr")),
    "phonetic": _Phenomenon(_edit_options("phonetic"), _edit("phonetic")),
    "nickname": _Phenomenon(_nickname_options, _nickname),
    "middle": _Phenomenon(lambda record: record.fields("middle"), _middle),
    "swap": _Phenomenon(_swap_options, _swap),
    "missing": _Phenomenon(_missing_options, _blank),
    "surname": _Phenomenon(lambda record: record.fields("last"), _surname),
    "mover": _Phenomenon(_mover_options, _move),
    "date": _Phenomenon(_of_kind("date", date_errors), _by_kind(date_errors)),
    "digit": _Phenomenon(_of_kind("number", digit_errors), _by_kind(digit_errors)),
    "quantity": _Phenomenon(_of_kind("quantity", quantity_errors), _by_kind(quantity_errors)),
    "coordinates": _Phenomenon(_coordinate_options, _coordinate_error),
}
assert tuple(_PHENOMENA) == PHENOMENA


def roles_of(names: Sequence[str]) -> tuple[str | None, ...]:
    """The name part (first, middle, last) each column holds, or ADDRESS for a part of an
    address, by its name; None for others."""
    return tuple(_role(name.strip().lower()) for name in names)


def _role(name: str) -> str | None:
    return ADDRESS if name in ADDRESS_NAMES else ROLES.get(name)


def has_address(names: Sequence[str]) -> bool:
    """Whether some column is part of an address (a record can then move)."""
    return ADDRESS in roles_of(names)


@dataclass(frozen=True)
class ErrorModel:
    """A mixture of phenomena and a distribution of errors per record.

    ``weights`` and ``counts`` are (phenomenon, weight) and (errors, weight) pairs; weights
    need not sum to one. ``legacy`` models delegate to Corrupter with exactly one error, so
    "one-error" gives byte-identical results to the corruption the benchmarks always used.
    """

    name: str
    weights: tuple[tuple[str, float], ...] = ()
    counts: tuple[tuple[int, float], ...] = ((1, 1.0),)
    legacy: bool = False
    _cumulative: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.legacy:
            object.__setattr__(self, "_cumulative", np.ones(1))
            return
        unknown = [p for p, _ in self.weights if p not in PHENOMENA]
        if unknown or not self.weights:
            raise SettingError(f"weights must name phenomena among {PHENOMENA}, got {unknown}")
        if any(w < 0 for _, w in self.weights) or sum(w for _, w in self.weights) <= 0:
            raise SettingError("phenomenon weights must be >= 0 with a positive sum")
        if not self.counts or any(k < 1 or w < 0 for k, w in self.counts):
            raise SettingError("counts must be (errors >= 1, weight >= 0) pairs")
        total = sum(w for _, w in self.counts)
        if total <= 0:
            raise SettingError("count weights must have a positive sum")
        object.__setattr__(self, "_cumulative", np.cumsum([w / total for _, w in self.counts]))

    @classmethod
    def mixture(
        cls, name: str, weights: Mapping[str, float], counts: Mapping[int, float] | None = None
    ) -> ErrorModel:
        """A model from {phenomenon: weight} and {errors: weight} (default: one error)."""
        return cls(
            name,
            tuple(weights.items()),
            tuple((counts or {1: 1.0}).items()),
        )

    @property
    def moves(self) -> bool:
        """Whether a record may move (take another record's address)."""
        return any(name == "mover" and weight > 0 for name, weight in self.weights)

    @property
    def swaps(self) -> bool:
        """Whether a copy may swap two names between their fields: a model trained on such
        copies links swapped pairs, which keys read in either order then join (sealed
        linkage's names-only defaults, pprl.protocol.sealed.session)."""
        return any(name == "swap" and weight > 0 for name, weight in self.weights)

    def with_counts(self, counts: Mapping[int, float]) -> ErrorModel:
        """The same mixture with another distribution of errors per record; a legacy model
        makes exactly one error whatever it is given, so it stays as it is."""
        if self.legacy:
            return self
        return replace(self, counts=tuple(counts.items()))

    def count(self, rng: np.random.Generator) -> int:
        """How many errors one record gets."""
        index = int(np.searchsorted(self._cumulative, rng.random(), side="right"))
        return self.counts[min(index, len(self.counts) - 1)][0]

    def corrupt(
        self,
        values: Sequence[str],
        rng: np.random.Generator,
        *,
        names: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        avoid: Collection[str] = frozenset(),
        scales: Sequence[float | None] | None = None,
        donor: Sequence[str] | None = None,
    ) -> list[str]:
        """A corrupted copy of one record; it differs from ``values`` and keeps a value.

        ``names`` (column names) say which fields are first, middle and last names: without
        them no name-part phenomenon applies. ``kinds`` (pprl.protocol.data.kinds; default all
        "name") confine name errors to name fields and date or digit errors to dates and
        numbers. Nicknames and surnames never become a value in ``avoid``. A blanked field is
        "", the empty cell of a records file. ``scales`` gives each field's scale (None: none
        or not known); coordinates are moved within theirs, and without one take only digit
        and exchange errors. ``donor``, another record of the file, is the address a mover
        takes (every field whose column name says it is part of an address).
        """
        n = len(values)
        kinds = tuple(kinds) if kinds is not None else (DEFAULT_KIND,) * n
        roles = roles_of(names) if names is not None else (None,) * n
        field_scales = tuple(scales) if scales is not None else (None,) * n
        if len(kinds) != n or len(roles) != n or len(field_scales) != n:
            raise ValueError(f"{n} values need {n} names and kinds, and as many scales")
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            raise SettingError(f"unknown kinds {unknown}; expected some of {KINDS}")
        if self.legacy:
            return spread_edits(Corrupter(rng), values, kinds, n_errors=1, scales=field_scales)
        roles = tuple(
            r if r == ADDRESS or KINDS[k].names_people else None
            for r, k in zip(roles, kinds, strict=True)
        )
        original = list(values)
        for _ in range(_MAX_RECORD_ATTEMPTS):
            record = _Record(list(original), roles, kinds, avoid, field_scales, donor)
            for _ in range(self.count(rng)):
                if not any(record.values):  # blanked out: this draw is retried
                    break
                if not self._one_error(record, rng):
                    if record.values == original:
                        # Errors never made records of these values out of their files'
                        # own: no value is told, this message may travel.
                        raise ValueError(
                            f"no error of {self.name!r} applies to a record of kinds {kinds}"
                        )
                    break  # the earlier errors left nothing an error applies to: kept
            if record.values != original and any(record.values):
                return record.values
        raise ValueError(f"the errors of {self.name!r} keep cancelling out on a record")

    def _one_error(self, record: _Record, rng: np.random.Generator) -> bool:
        """One phenomenon by weight among those with options, one option uniformly; False when
        none applies (nor a typo). Drawn by weight among the phenomena left, one without
        options dropped and the draw repeated: each then has the chance it has among those with
        options, and most records are asked for one phenomenon's options, not all of them
        (TRAIN corrupts a copy of every own record at four rates)."""
        left = [(name, weight) for name, weight in self.weights if weight > 0]
        while left:
            drawn = rng.random() * sum(weight for _, weight in left)
            chosen = len(left) - 1
            for index, (_, weight) in enumerate(left):
                drawn -= weight
                if drawn < 0:
                    chosen = index
                    break
            name = left[chosen][0]
            options = _PHENOMENA[name].options(record)
            if options:
                _PHENOMENA[name].apply(record, _pick(options, rng), rng)
                return True
            del left[chosen]
        typo = _PHENOMENA["typo"].options(record)
        if typo:
            _PHENOMENA["typo"].apply(record, _pick(typo, rng), rng)
        return bool(typo)


def spread_edits(
    corrupter: Corrupter,
    values: Sequence[str],
    kinds: Sequence[str],
    n_errors: int,
    scales: Sequence[float | None] | None = None,
) -> list[str]:
    """The paper's edits (Corrupter.corrupt_record) on every field but quantities and
    coordinates, which an edit would leave no number or no point; a record of those alone
    takes their own errors instead (coordinates moved within `scales`, each field's scale).
    Without them, the very draws of corrupt_record."""
    editable = [j for j, kind in enumerate(kinds) if kind not in SCALED_KINDS]
    if not editable:
        # Each scaled kind's own phenomenon is named after it.
        weights = {kind: 1.0 for kind in SCALED_KINDS}
        model = ErrorModel.mixture("scaled", weights, {n_errors: 1.0})
        return model.corrupt(values, corrupter.rng, kinds=kinds, scales=scales)
    edited = corrupter.corrupt_record([values[j] for j in editable], n_errors)
    record = list(values)
    for j, value in zip(editable, edited, strict=True):
        record[j] = value
    return record


# The default register mixture: typing errors most often, then the name variants registers
# are known for. Weights are stated assumptions guided by FEBRL's given-name and surname
# settings (typos about 0.6, misspelling/variant look-ups 0.3, phonetic 0.3, OCR 0.01,
# missing 0.02, value swaps 0.02), renormalised over the phenomena here.
REGISTERS_WEIGHTS: Mapping[str, float] = {
    "typo": 0.35,
    "phonetic": 0.12,
    "ocr": 0.05,
    "nickname": 0.12,
    "middle": 0.10,
    "swap": 0.04,
    "missing": 0.08,
    "surname": 0.04,
    "date": 0.05,
    "digit": 0.05,
    # Last, and applying to quantities and coordinates only, so records without them draw as
    # they always did.
    "quantity": 0.05,
    "coordinates": 0.05,
}
DEFAULT_MODEL = "registers"

MODELS: dict[str, ErrorModel] = {
    ONE_ERROR: ErrorModel(ONE_ERROR, legacy=True),
    "registers": ErrorModel.mixture("registers", REGISTERS_WEIGHTS, DEFAULT_COUNTS),
    # The GeCo edits alone, 1-3 per record: what more errors cost without any name variant.
    "multi": ErrorModel.mixture(
        "multi", {"typo": 0.6, "phonetic": 0.25, "ocr": 0.15}, DEFAULT_COUNTS
    ),
    # Name variants and edits, 1-3 per record, without blanks, swaps or changed surnames:
    # the data of docs/research/results.md's register target (nicknames, middle names, 1-3 errors).
    "variants": ErrorModel.mixture(
        "variants",
        {p: REGISTERS_WEIGHTS[p] for p in ("typo", "phonetic", "ocr", "nickname", "middle")},
        DEFAULT_COUNTS,
    ),
    # The register mixture with people who moved (registers written years apart): not the
    # default, as it costs where nobody moved and under noise (docs/research/error-model.md).
    "registers-movers": ErrorModel.mixture(
        "registers-movers", {**REGISTERS_WEIGHTS, "mover": 0.03}, DEFAULT_COUNTS
    ),
    **{p: ErrorModel.mixture(p, {p: 1.0}) for p in PHENOMENA},
}
MODEL_NAMES: tuple[str, ...] = tuple(MODELS)


def error_model(name: str) -> ErrorModel:
    """The named model; raises ValueError naming the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise SettingError(
            f"unknown error model {name!r}; expected one of {', '.join(MODEL_NAMES)}"
        ) from None
