"""A reference set for any schema, from the census name lists and seeded random values.

Both parties must smash against the very same reference values, and most schemas have no
public list of dates, postcodes or street names. So each party builds the set itself from a
spec and a seed they agree on: the same (spec, rows, seed) gives the same CSV text, byte for
byte, on any machine, and so the same agreement digest.

Every column draws from its own numpy stream, keyed by the seed and a SHA-256 of the column's
name (never Python's salted ``hash``): adding, removing or reordering a column leaves every
other column's values unchanged, so operators can extend a schema without re-checking the
rest. No files, no network: ``pprl reference`` writes the text this module returns.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from pprl.protocol.data.canonical import BadValue, canonical_coordinates, canonical_quantity
from pprl.protocol.data.kinds import REFERENCE_DATE_FORMAT, normalise_value
from pprl.protocol.data.synthetic import census_names
from pprl.protocol.errors import InputError

MIN_ROWS = 2
# A bound on what a typo can ask for: smashing costs records x entries x rows bytes.
MAX_ROWS = 1_000_000
MAX_LENGTH = 32
DEFAULT_YEARS = (1920, 2010)
# strftime and strptime agree on four-digit years only.
_YEAR_BOUNDS = (1000, 9999)
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
# LOW-HIGH with decimal, possibly negative bounds: -90-90, -40--10, 140.5-210.
_BOUNDS = re.compile(r"([+-]?[0-9.]+)-([+-]?[0-9.]+)")
# Quantities are drawn on a grid of 1,000 to 9,999 steps across their range.
_GRID_DIGITS = 3
# Points are drawn on a grid of 0.00001 degree (about a metre) in both latitude and longitude.
POINT_DECIMALS = 5
_POINT_STEP = Decimal(1).scaleb(-POINT_DECIMALS)
_COLUMN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Domain separation, so a column stream never equals a stream drawn elsewhere from the seed.
_STREAM_LABEL = b"pprl reference column\0"

# Street types as they appear in address registers (long forms; registers that abbreviate
# them can map ST -> STREET before linkage).
STREET_TYPES = (
    "STREET", "ROAD", "AVENUE", "DRIVE", "LANE", "COURT", "PLACE", "CRESCENT", "CLOSE",
    "PARADE", "TERRACE", "WAY", "GROVE", "BOULEVARD", "HIGHWAY", "CIRCUIT", "PARKWAY", "SQUARE",
)  # fmt: skip
# Suburb names: a surname with a place-name ending (HARRISTON), or a place word before or
# after it (MOUNT HARRIS, HARRIS HEIGHTS).
SUBURB_ENDINGS = (
    "TON", "VILLE", "FIELD", "WOOD", "DALE", "HILL", "VALE", "BURY", "FORD", "LEY", "MEAD",
    "BROOK", "HAM", "WORTH",
)  # fmt: skip
SUBURB_PREFIXES = ("NORTH", "SOUTH", "EAST", "WEST", "MOUNT", "PORT", "GLEN", "LAKE", "UPPER")
SUBURB_SUFFIXES = ("HEIGHTS", "PARK", "BEACH", "CREEK", "VALLEY", "GARDENS", "RIDGE", "POINT")
_LETTERS_AND_DIGITS = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
_DIGITS = np.array(list("0123456789"))


@dataclass(frozen=True)
class ColumnSpec:
    """One column: its name, its generator, and the generator's parameter (a length or year
    range, the category values, a quantity's bounds, or a box's south, west, north and east
    edges, kept as canonical text so that no binary fraction touches them)."""

    name: str
    generator: str
    low: int = 0
    high: int = 0
    values: tuple[str, ...] = ()
    bounds: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """The attribute kind whose normalisation the column's values satisfy."""
        return GENERATORS[self.generator].kind

    def describe(self) -> str:
        """The spec as the command line writes it, with defaults filled in."""
        if self.generator == "category":
            return f"{self.name}=category:{','.join(self.values)}"
        if self.generator == "quantity":
            return f"{self.name}=quantity:{self.bounds[0]}-{self.bounds[1]}"
        if self.generator == "coordinates":
            south, west, north, east = self.bounds
            return f"{self.name}=coordinates:{south},{west}:{north},{east}"
        if GENERATORS[self.generator].parameter is None:
            return f"{self.name}={self.generator}"
        span = str(self.low) if self.low == self.high else f"{self.low}-{self.high}"
        return f"{self.name}={self.generator}:{span}"


@dataclass(frozen=True)
class Generator:
    """How one generator draws `rows` values; `parameter` names what follows its colon."""

    kind: str
    parameter: str | None
    help: str
    draw: Callable[[ColumnSpec, np.random.Generator, int], list[str]]


def column_stream(seed: int, name: str) -> np.random.Generator:
    """The column's own generator: the seed and four words of SHA-256 of its name."""
    digest = hashlib.sha256(_STREAM_LABEL + name.encode("utf-8")).digest()
    words = np.frombuffer(digest[:16], dtype="<u4").tolist()
    return np.random.default_rng([seed, *words])


def _spread(rng: np.random.Generator, pool: int, rows: int) -> np.ndarray:
    """`rows` indices into a pool, distinct while rows <= pool, then every index equally
    often (whole permutations one after another)."""
    rounds = -(-rows // pool)
    return np.concatenate([rng.permutation(pool) for _ in range(rounds)])[:rows]


def _first_names(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Census first names drawn uniformly from the whole list, without repeats while it lasts.

    Uniform rather than by frequency: AGREE refuses a reference set that shares a value with
    either party's records, and the frequent names are exactly the ones a register holds, so
    drawing by frequency would all but guarantee JOHN or MARY in the set. Distinct values also
    keep every one of the R distance columns informative; a repeated value repeats a column.
    """
    names = census_names().first.names
    return names[_spread(rng, len(names), rows)].tolist()


def _surnames(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Census surnames, uniform over the whole list and distinct (see _first_names)."""
    names = census_names().last.names
    return names[_spread(rng, len(names), rows)].tolist()


def _dates(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Days uniform from 1 January of the first year to 31 December of the last."""
    start = date(spec.low, 1, 1).toordinal()
    end = date(spec.high, 12, 31).toordinal()
    days = rng.integers(start, end + 1, size=rows)
    return [date.fromordinal(day).strftime(REFERENCE_DATE_FORMAT) for day in days.tolist()]


def _characters(
    alphabet: np.ndarray, spec: ColumnSpec, rng: np.random.Generator, rows: int
) -> list[str]:
    """Strings of uniform characters, each with a length uniform in low..high."""
    lengths = rng.integers(spec.low, spec.high + 1, size=rows)
    chars = alphabet[rng.integers(0, len(alphabet), size=(rows, spec.high))]
    return ["".join(row[:length]) for row, length in zip(chars, lengths.tolist(), strict=True)]


def _numbers(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Digit strings, leading zeros kept (postcodes such as 0800 have them)."""
    return _characters(_DIGITS, spec, rng, rows)


def _codes(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Upper-case letters and digits, uniform (licence numbers, UK-like postcodes)."""
    return _characters(_LETTERS_AND_DIGITS, spec, rng, rows)


def _streets(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """A census surname and a street type (KINGSLEY ROAD); the house number, when a register
    has one, is a number column of its own."""
    names = census_names().last.names[_spread(rng, len(census_names().last), rows)]
    types = rng.integers(0, len(STREET_TYPES), size=rows)
    return [f"{name} {STREET_TYPES[t]}" for name, t in zip(names, types.tolist(), strict=True)]


def _suburbs(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """A census surname made a place name: half with an ending (HARRISTON), a quarter after a
    place word (MOUNT HARRIS), a quarter before one (HARRIS HEIGHTS)."""
    names = census_names().last.names[_spread(rng, len(census_names().last), rows)]
    forms = rng.integers(0, 4, size=rows)
    picks = rng.random(size=rows)
    values = []
    for name, form, pick in zip(names, forms.tolist(), picks.tolist(), strict=True):
        if form < 2:
            values.append(name + SUBURB_ENDINGS[int(pick * len(SUBURB_ENDINGS))])
        elif form == 2:
            values.append(f"{SUBURB_PREFIXES[int(pick * len(SUBURB_PREFIXES))]} {name}")
        else:
            values.append(f"{name} {SUBURB_SUFFIXES[int(pick * len(SUBURB_SUFFIXES))]}")
    return values


def _quantities(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Decimals uniform on a grid across the bounds: the grid step is the range's leading
    power of ten over 1,000 (140-210 gives two decimals, -90-90 one), fine enough for any
    reference set's rows, and exact decimal arithmetic writes the same text everywhere."""
    low, high = (Decimal(bound) for bound in spec.bounds)
    step = Decimal(1).scaleb((high - low).adjusted() - _GRID_DIGITS)
    first = (low / step).to_integral_value(ROUND_CEILING)
    last = (high / step).to_integral_value(ROUND_FLOOR)
    offsets = rng.integers(0, int(last - first) + 1, size=rows).tolist()
    return [canonical_quantity(format((first + k) * step, "f")) for k in offsets]


def _grid(low: str, high: str) -> tuple[int, int]:
    """The first and last grid steps (of _POINT_STEP) within low..high, both included."""
    first = (Decimal(low) / _POINT_STEP).to_integral_value(ROUND_CEILING)
    last = (Decimal(high) / _POINT_STEP).to_integral_value(ROUND_FLOOR)
    return int(first), int(last)


def _points(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """Points uniform in latitude and longitude across the box, on a grid of 0.00001 degree
    (5 decimals, about a metre), written canonically ("lat,lon") by exact decimal arithmetic.
    Uniform in degrees, not in area: over a city-sized box the two differ by well under 1%."""
    south, west, north, east = spec.bounds
    latitudes = rng.integers(*_offset(_grid(south, north)), size=rows).tolist()
    longitudes = rng.integers(*_offset(_grid(west, east)), size=rows).tolist()
    return [
        canonical_coordinates(f"{_degrees(lat)},{_degrees(lon)}")
        for lat, lon in zip(latitudes, longitudes, strict=True)
    ]


def _offset(grid: tuple[int, int]) -> tuple[int, int]:
    """numpy's integers(low, high) excludes high."""
    return grid[0], grid[1] + 1


def _degrees(step: int) -> str:
    return format(Decimal(step) * _POINT_STEP, "f")


def _categories(spec: ColumnSpec, rng: np.random.Generator, rows: int) -> list[str]:
    """The user's values, each row drawn uniformly."""
    return [spec.values[i] for i in rng.integers(0, len(spec.values), size=rows).tolist()]


GENERATORS: dict[str, Generator] = {
    "first-name": Generator("name", None, "census first names, uniform", _first_names),
    "surname": Generator("name", None, "census surnames, uniform", _surnames),
    "date": Generator("date", "years", "YYYY-MM-DD within --years or date:FROM-TO", _dates),
    "number": Generator("number", "length", "digits, number:4 or number:7-9", _numbers),
    "code": Generator("code", "length", "letters and digits, code:6 or code:5-8", _codes),
    "street": Generator("text", None, "surname + street type: KINGSLEY ROAD", _streets),
    "suburb": Generator("text", None, "surname-derived place name: HARRISTON", _suburbs),
    "category": Generator("category", "values", "category:F,M, drawn uniformly", _categories),
    "quantity": Generator(
        "quantity", "bounds", "decimals uniform in quantity:LOW-HIGH, e.g. -90-90", _quantities
    ),
    "coordinates": Generator(
        "coordinates",
        "box",
        "points uniform in coordinates:LAT1,LON1:LAT2,LON2 (a box), 5 decimals",
        _points,
    ),
}


def parse_range(text: str, what: str, *, field: str | None = None) -> tuple[int, int]:
    """A length or year range: "4" is (4, 4) and "7-9" is (7, 9), with low <= high."""
    match = _RANGE.fullmatch(text.strip())
    if match is None:
        raise InputError(f"{what} {text!r} is not N or N-M", field=field)
    low = int(match[1])
    high = low if match[2] is None else int(match[2])
    if low > high:
        raise InputError(f"{what} {text!r} needs low <= high", field=field)
    return low, high


def parse_bounds(text: str, *, field: str | None = None) -> tuple[str, str]:
    """A quantity range such as 140-210 or -90-90: two decimals, low < high, canonical."""
    match = _BOUNDS.fullmatch(text.strip())
    try:
        if match is None:
            raise BadValue(text, "is not LOW-HIGH")
        low, high = canonical_quantity(match[1]), canonical_quantity(match[2])
    except BadValue as error:
        message = f"quantity range: {error} (e.g. quantity:140-210 or quantity:-90-90)"
        raise InputError(message, field=field) from None
    if Decimal(low) >= Decimal(high):
        raise InputError(f"quantity range {text!r} needs low < high", field=field)
    return low, high


def parse_box(text: str, *, field: str | None = None) -> tuple[str, str, str, str]:
    """A box such as 48.80,2.25:48.90,2.42, two opposite corners LAT,LON: its south, west,
    north and east edges, canonical, with room for more than one point on the 0.00001 degree
    grid in latitude and in longitude (no box across the 180th meridian)."""
    example = "(e.g. coordinates:48.80,2.25:48.90,2.42, two opposite corners LAT,LON)"
    if not text.strip():
        raise InputError(f"generator 'coordinates' needs a box {example}", field=field)
    first, colon, second = text.partition(":")
    try:
        if not colon:
            raise BadValue(text, "is not LAT1,LON1:LAT2,LON2")
        corners = [canonical_coordinates(first), canonical_coordinates(second)]
    except BadValue as error:
        raise InputError(f"coordinates box: {error} {example}", field=field) from None
    (lat_a, lon_a), (lat_b, lon_b) = (corner.split(",") for corner in corners)
    south, north = sorted((lat_a, lat_b), key=Decimal)
    west, east = sorted((lon_a, lon_b), key=Decimal)
    for low, high, what in ((south, north, "latitude"), (west, east, "longitude")):
        start, stop = _grid(low, high)
        if stop <= start:
            message = (
                f"coordinates box {text!r} is empty: it holds fewer than two points of the "
                f"{_POINT_STEP} degree grid in {what} {example}"
            )
            raise InputError(message, field=field)
    return south, west, north, east


def parse_years(text: str, *, field: str | None = None) -> tuple[int, int]:
    """A year range such as 1920-2010, within the years ISO dates write with four digits."""
    low, high = parse_range(text, "year range", field=field)
    if low < _YEAR_BOUNDS[0] or high > _YEAR_BOUNDS[1]:
        message = f"year range {text!r} must lie within {_YEAR_BOUNDS[0]}-{_YEAR_BOUNDS[1]}"
        raise InputError(message, field=field)
    return low, high


def parse_column(text: str, years: tuple[int, int] = DEFAULT_YEARS) -> ColumnSpec:
    """NAME=GENERATOR[:PARAMETER], e.g. dob=date, postcode=number:4, sex=category:F,M."""
    name, equals, spec = text.partition("=")
    name = name.strip()
    if not equals or not name:
        raise InputError(f"column {text!r} is not NAME=GENERATOR (e.g. dob=date)")
    if not _COLUMN_NAME.fullmatch(name):
        message = "a column name is letters, digits, _ . - and starts with a letter or _"
        raise InputError(message, field=name)
    generator, colon, parameter = spec.strip().partition(":")
    if generator not in GENERATORS:
        message = f"unknown generator {generator!r}; expected one of {', '.join(GENERATORS)}"
        raise InputError(message, field=name)
    takes = GENERATORS[generator].parameter
    if takes is None:
        if colon:
            raise InputError(f"generator {generator!r} takes no parameter", field=name)
        return ColumnSpec(name, generator)
    if takes == "years":
        low, high = parse_years(parameter, field=name) if colon else years
        return ColumnSpec(name, generator, low, high)
    if takes == "length":
        if not parameter:
            message = f"generator {generator!r} needs a length, e.g. {generator}:4 or :7-9"
            raise InputError(message, field=name)
        low, high = parse_range(parameter, "length", field=name)
        if not 1 <= low <= high <= MAX_LENGTH:
            message = f"length {parameter!r} must lie within 1-{MAX_LENGTH}"
            raise InputError(message, field=name)
        return ColumnSpec(name, generator, low, high)
    if takes == "bounds":
        return ColumnSpec(name, generator, bounds=parse_bounds(parameter, field=name))
    if takes == "box":
        return ColumnSpec(name, generator, bounds=parse_box(parameter, field=name))
    return ColumnSpec(name, generator, values=_category_values(parameter, name))


def _category_values(text: str, name: str) -> tuple[str, ...]:
    """The values in their canonical (category) form, each once, at least one."""
    values = [normalise_value("category", raw) for raw in text.split(",")]
    if not text.strip() or any(value is None for value in values):
        message = "a category needs its values, comma-separated and none empty (category:F,M)"
        raise InputError(message, field=name)
    distinct = [value for value in values if value is not None]
    repeated = sorted({value for value in distinct if distinct.count(value) > 1})
    if repeated:
        raise InputError(f"category value {repeated[0]!r} is given twice", field=name)
    return tuple(distinct)


def build_reference(columns: Sequence[ColumnSpec], rows: int, seed: int) -> dict[str, list[str]]:
    """{column name: values}, in the given column order; deterministic in (columns, rows, seed)."""
    if not MIN_ROWS <= rows <= MAX_ROWS:
        raise InputError(f"rows must lie within {MIN_ROWS}-{MAX_ROWS}, got {rows}")
    if seed < 0:
        raise InputError(f"the seed must be >= 0, got {seed}")
    if not columns:
        raise InputError("no columns; give at least one NAME=GENERATOR")
    names = [spec.name for spec in columns]
    repeated = [name for name in names if names.count(name) > 1]
    if repeated:
        raise InputError("column name appears more than once", field=repeated[0])
    return {
        spec.name: GENERATORS[spec.generator].draw(spec, column_stream(seed, spec.name), rows)
        for spec in columns
    }


def reference_csv(columns: dict[str, list[str]]) -> str:
    """The CSV text: a header, then one line per row, "\\n"-terminated on every platform."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*columns.values(), strict=True))
    return buffer.getvalue()
