"""Coordinates end to end: read as points, compared by great-circle distance in units of a
stated tolerance, corrupted within it, drawn for a reference set, agreed and linked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import distances
from pprl.protocol.data.canonical import BadValue, point_of
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.distances import haversine_metres
from pprl.protocol.data.error_model import (
    COMPASS,
    coordinate_errors,
    displaced,
    error_model,
    moved_point,
    spread_edits,
)
from pprl.protocol.data.kinds import Attribute, kind_distances, normalise_value
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.data.reference_builder import build_reference, parse_column
from pprl.protocol.data.synthetic import census_names
from pprl.protocol.errors import InputError
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.model.training import corrupt_sample
from pprl.protocol.vectors.bloom import BloomKey
from pprl.protocol.vectors.randomness import Randomness

PARIS, LONDON = "48.8566,2.3522", "51.5074,-0.1278"
# A 10 by 10 km box over Paris: 0.09 degree of latitude, 0.14 of longitude at 48.8 N.
SOUTH, WEST, NORTH, EAST = 48.8, 2.25, 48.89, 2.39
BOX = f"{SOUTH},{WEST}:{NORTH},{EAST}"
TOLERANCE = 50.0  # metres: the scale
PEOPLE = 300  # 150 name pairs, each held by two namesakes who live apart
KINDS = {"pos": "coordinates"}
SCALES = {"pos": TOLERANCE}
NAMES = [("first", "first"), ("last", "last")]
POINT = [("pos", "pos")]


def metres(a: str, b: str) -> float:
    return float(haversine_metres(*point_of(a), *point_of(b)))


# -- canonical form --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("48.8566,2.3522", "48.8566,2.3522"),
        (" 48.85660 , +2.35220 ", "48.8566,2.3522"),
        ("48.8566 2.3522", "48.8566,2.3522"),
        ("48.8566  ;  2.3522", "48.8566,2.3522"),
        ("-33.8688,151.2093", "-33.8688,151.2093"),
        ("-0.0,-0", "0,0"),
        ("90,-180", "90,-180"),
        ("-90,180", "-90,180"),
        ("  ", None),
    ],
)
def test_a_point_is_written_one_way(raw: str, canonical: str | None) -> None:
    assert normalise_value("coordinates", raw) == canonical


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("48.8566", "is not a point"),
        ("48,8566 2,3522", "is not a point"),  # decimal commas
        ("48.8566,2.3522,35", "is not a point"),
        ("48.8566;;2.3522", "is not a point"),
        ("48°51'N,2°21'E", "is not a point"),
        ("1e1,2", "is not a point"),
        ("N48.8566,E2.3522", "is not a point"),
        ("90.0001,0", "latitude 90.0001, outside -90 to 90"),
        ("-91,0", "latitude -91, outside -90 to 90"),
        ("0,180.5", "longitude 180.5, outside -180 to 180"),
        ("0,-200", "longitude -200, outside -180 to 180"),
    ],
)
def test_anything_but_a_point_on_the_globe_is_refused_naming_it(raw: str, words: str) -> None:
    with pytest.raises(BadValue) as caught:
        normalise_value("coordinates", raw)
    message = str(caught.value)
    assert repr(raw) in message and words in message
    assert "LAT,LON in decimal degrees" in message  # what is expected


def test_coordinates_and_only_scaled_kinds_take_a_scale() -> None:
    assert Attribute("pos", "coordinates", scale=50).normalise("48.8566 2.3522") == PARIS
    with pytest.raises(ValueError, match="a quantity or coordinates, and no other kind"):
        Attribute("pos", "coordinates")


# -- distance --------------------------------------------------------------------------------


def test_the_haversine_distance_is_the_great_circle_in_metres() -> None:
    assert abs(metres("0,0", "1,0") - 111_195) <= 1  # one degree of latitude
    assert abs(metres("48,10", "49,10") - 111_195) <= 1
    assert abs(metres("0,0", "0,1") - 111_195) <= 1  # one of longitude at the equator
    assert abs(metres("60,0", "60,1") - 111_195 / 2) <= 50  # half as long at 60 degrees
    assert abs(metres(PARIS, LONDON) - 343_500) <= 1_000
    assert metres("0,179.5", "0,-179.5") == pytest.approx(111_195, abs=1)  # across 180
    assert metres("90,0", "90,123") == pytest.approx(0, abs=1e-6)  # the pole is one point
    assert metres("0,0", "0,180") == pytest.approx(math.pi * 6_371_008.8)


def test_the_distance_counts_scales_rounded_and_clamped() -> None:
    # 0.001 degree of latitude is 111.195 m: 2.22 units of 50 m, 22.2 of 5 m, 1.11 of 100 m
    near = ["48.001,2"]
    for scale, units in ((50, 2), (5, 22), (100, 1), (74, 2), (75, 1)):
        table = kind_distances(near, ["48,2"], "coordinates", scale=scale)
        assert table.tolist() == [[units]], scale
        assert table.dtype == np.uint8
    table = kind_distances([PARIS, "0,0"], [LONDON, "0,0.0009", PARIS], "coordinates", scale=50)
    assert table.tolist() == [[254, 254, 0], [254, 2, 254]]  # 100.08 m is 2 units
    # Paris to London: 171.8 units of 2 km, 343.6 of 1 km (clamped to 254)
    assert kind_distances([PARIS], [LONDON], "coordinates", scale=2000).tolist() == [[172]]
    assert kind_distances([PARIS], [LONDON], "coordinates", scale=1000).tolist() == [[254]]
    others = ["0.0005,0", "0.001,0", "0.01,0"]  # 5.6, 11.1 and 111.2 units of 10 m
    clamped = kind_distances(["0,0"], others, "coordinates", clamp=10, scale=10)
    assert clamped.tolist() == [[6, 10, 10]]
    with pytest.raises(ValueError, match="scale"):
        kind_distances([PARIS], [LONDON], "coordinates")


def test_a_large_table_is_computed_in_blocks_alike(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    points = [
        f"{a:.5f},{b:.5f}"
        for a, b in zip(rng.uniform(-60, 60, 37), rng.uniform(-179, 179, 37), strict=True)
    ]
    reference = points[:11]
    whole = kind_distances(points, reference, "coordinates", scale=100_000)
    monkeypatch.setattr(distances, "_COORDINATE_CELLS", 25)  # two rows of 11 at a time
    assert (kind_distances(points, reference, "coordinates", scale=100_000) == whole).all()
    direct = [[min(254, round(metres(a, b) / 100_000)) for b in reference] for a in points]
    assert whole.tolist() == direct


def test_a_point_within_the_tolerance_is_within_one_unit_of_every_reference_point() -> None:
    rng = np.random.default_rng(4)
    reference = build_reference([parse_column(f"pos=coordinates:{BOX}")], 300, 7)["pos"]
    points = build_reference([parse_column(f"p=coordinates:{BOX}")], 50, 8)["p"]
    moved = [displaced(p, TOLERANCE, rng) for p in points]
    a = kind_distances(points, reference, "coordinates", scale=TOLERANCE).astype(int)
    b = kind_distances(moved, reference, "coordinates", scale=TOLERANCE).astype(int)
    assert np.abs(a - b).max() == 1  # the triangle inequality, then rounding
    assert (a != b).mean() > 0.2


# -- errors ----------------------------------------------------------------------------------


def test_coordinate_errors_are_canonical_points_on_the_globe() -> None:
    for value in (PARIS, "-33.8688,151.2093", "89.99999,179.99999", "0,0", "-45.5,-170.25"):
        errors = coordinate_errors(value, TOLERANCE)
        assert set(errors) <= {"displace", "digit", "swap"}
        for kind, found in errors.items():
            assert found and value not in found, (value, kind)
            for point in found:
                assert normalise_value("coordinates", point) == point, point
    paris = coordinate_errors(PARIS, TOLERANCE)
    assert paris["swap"] == ["2.3522,48.8566"]
    assert "swap" not in coordinate_errors("-33.8688,151.2093")  # 151.2 is no latitude
    assert "58.8566,2.3522" in paris["digit"] and "48.8566,2.3552" in paris["digit"]
    assert "98.8566,2.3522" not in paris["digit"]  # off the globe
    assert "48.8566,2.3252" in paris["digit"]  # two digits transposed
    assert "displace" not in coordinate_errors(PARIS)  # no scale, no tolerance to move within
    assert coordinate_errors("48.85660,2.3522", TOLERANCE) == {}  # not canonical


def test_the_compass_points_lie_one_tolerance_away_in_eight_directions() -> None:
    compass = coordinate_errors(PARIS, TOLERANCE)["displace"]
    assert len(compass) == len(COMPASS) == 8
    for point in compass:
        assert TOLERANCE * 0.998 <= metres(PARIS, point) <= TOLERANCE
    north = moved_point(PARIS, 0, 1000, 7)
    east = moved_point(PARIS, 90, 1000, 7)
    assert point_of(north)[1] == point_of(PARIS)[1] and point_of(north)[0] > 48.8566
    assert abs(point_of(east)[0] - 48.8566) < 1e-4 and point_of(east)[1] > 2.3522
    assert metres(PARIS, north) == pytest.approx(1000, abs=0.02)
    assert metres(PARIS, east) == pytest.approx(1000, abs=0.02)
    # Across the 180th meridian and over the pole the point stays on the globe.
    assert point_of(moved_point("0,179.9999", 90, 1000, 7))[1] < -179.99
    assert normalise_value("coordinates", moved_point("89.9999,10", 0, 50, 7))


def test_a_displacement_stays_within_the_tolerance_and_spreads_over_it() -> None:
    rng = np.random.default_rng(5)
    moved = [displaced(PARIS, TOLERANCE, rng) for _ in range(2000)]
    reach = np.array([metres(PARIS, p) for p in moved])
    assert reach.max() <= TOLERANCE and reach.max() > 0.97 * TOLERANCE
    # Uniform in the disc: a quarter of the points within half the radius.
    assert 0.2 < (reach < TOLERANCE / 2).mean() < 0.3
    assert all(normalise_value("coordinates", p) == p for p in moved)
    assert max(len(p.split(",")[0].split(".")[1]) for p in moved) == 7  # about a centimetre
    bearings = np.degrees(
        np.arctan2(
            [point_of(p)[1] - 2.3522 for p in moved], [point_of(p)[0] - 48.8566 for p in moved]
        )
    )
    assert 0.2 < (bearings > 0).mean() < 0.8  # east as often as west
    tiny = [displaced("10,10", 0.5, rng) for _ in range(200)]
    assert max(metres("10,10", p) for p in tiny) <= 0.5


def test_the_coordinates_phenomenon_corrupts_points_and_nothing_else() -> None:
    rng = np.random.default_rng(6)
    model = error_model("coordinates")
    record, names, kinds = (
        ["ANN", "LEE", PARIS],
        ["first", "last", "pos"],
        ["name", "name", "coordinates"],
    )
    copies = [
        model.corrupt(record, rng, names=names, kinds=kinds, scales=[None, None, TOLERANCE])
        for _ in range(600)
    ]
    assert all(copy[:2] == record[:2] and copy[2] != PARIS for copy in copies)
    errors = coordinate_errors(PARIS, TOLERANCE)
    within = [c[2] for c in copies if metres(PARIS, c[2]) <= TOLERANCE]
    swapped = [c[2] for c in copies if c[2] in errors["swap"]]
    typed = [c[2] for c in copies if c[2] in errors["digit"]]
    assert len(within) + len(swapped) + len(typed) >= 600 - 5  # a digit may land within it
    for share in (len(swapped), len(typed)):
        assert 150 < share < 250  # a third each
    assert len({c for c in within}) > 150  # any direction and reach, not eight points
    # Without the scale a point takes digit and exchange errors only.
    blind = [model.corrupt(record, rng, names=names, kinds=kinds)[2] for _ in range(200)]
    assert all(p in errors["digit"] or p in errors["swap"] for p in blind)


def test_the_paper_edits_leave_points_alone_and_training_moves_them() -> None:
    """One-error edits letters into any field; a point edited so would be no point, so it
    keeps its value, and a record of points alone takes a coordinates error instead."""
    rng = np.random.default_rng(7)
    values, kinds = ["ANN", PARIS], ["name", "coordinates"]
    copies = [spread_edits(Corrupter(rng), values, kinds, 1, [None, TOLERANCE]) for _ in range(100)]
    assert all(copy[1] == PARIS and copy[0] != "ANN" for copy in copies)
    alone = [
        spread_edits(Corrupter(rng), [PARIS, ""], ["coordinates"] * 2, 1, [TOLERANCE] * 2)
        for _ in range(100)
    ]
    assert all(a[1] == "" and a[0] != PARIS for a in alone)
    assert all(normalise_value("coordinates", a[0]) == a[0] for a in alone)
    attributes = {
        "first": ["ANN", "BOB", "CY", "DI"] * 10,
        "pos": [PARIS, "", "0,0", "-33.8688,151.2093"] * 10,
    }
    own, corrupted = corrupt_sample(
        attributes,
        ["first", "pos"],
        size=40,
        rng=rng,
        corruption="coordinates",
        kinds=KINDS,
        scales=SCALES,
    )
    changed = [(o, c) for o, c in zip(own["pos"], corrupted["pos"], strict=True) if o != c]
    assert len(changed) == 30  # every point there is
    assert any(metres(o, c) <= TOLERANCE for o, c in changed)
    registers = corrupt_sample(
        attributes,
        ["first", "pos"],
        size=40,
        rng=rng,
        corruption="registers",
        kinds=KINDS,
        scales=SCALES,
    )[1]["pos"]
    assert all(p == "" or normalise_value("coordinates", p) == p for p in registers)


# -- reference builder -----------------------------------------------------------------------


def test_the_box_generator_draws_canonical_points_within_its_bounds() -> None:
    spec = parse_column(f"pos=coordinates:{NORTH},{EAST}:{SOUTH},{WEST}")  # any two corners
    assert spec.kind == "coordinates" and spec.describe() == f"pos=coordinates:{BOX}"
    values = build_reference([spec], 2000, 7)["pos"]
    points = np.array([point_of(v) for v in values])
    assert all(normalise_value("coordinates", v) == v for v in values)
    assert points[:, 0].min() >= SOUTH and points[:, 0].max() <= NORTH
    assert points[:, 1].min() >= WEST and points[:, 1].max() <= EAST
    assert max(len(part.partition(".")[2]) for v in values for part in v.split(",")) == 5
    assert len(set(values)) == 2000
    assert 900 < (points[:, 0] < (SOUTH + NORTH) / 2).sum() < 1100
    assert 900 < (points[:, 1] < (WEST + EAST) / 2).sum() < 1100
    assert values == build_reference([spec], 2000, 7)["pos"]  # the seed gives the same set
    tiny = build_reference([parse_column("p=coordinates:-0.00001,0:0,0.00001")], 50, 1)["p"]
    assert set(tiny) == {"-0.00001,0", "-0.00001,0.00001", "0,0", "0,0.00001"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pos=coordinates", "generator 'coordinates' needs a box"),
        ("pos=coordinates:48.8,2.25", "is not LAT1,LON1:LAT2,LON2"),
        ("pos=coordinates:48.8,2.25:48.9", "'48.9' is not a point"),
        ("pos=coordinates:48.8,2.25:91,2.4", "latitude 91, outside -90 to 90"),
        ("pos=coordinates:48.8,2.25:48.9,2.25", "is empty"),
        ("pos=coordinates:48.8,2.25:48.8,2.4", "fewer than two points"),
        ("pos=coordinates:48.800001,2.25:48.800009,2.4", "in latitude"),
        ("pos=coordinates:48,8;2,25:48,9;2,4", "is not a point"),
    ],
)
def test_a_malformed_or_empty_box_is_refused_naming_the_column(text: str, words: str) -> None:
    with pytest.raises(InputError, match=words) as caught:
        parse_column(text)
    assert caught.value.field == "pos"
    assert "coordinates:48.80,2.25:48.90,2.42" in str(caught.value)  # an example


# -- the agreement ---------------------------------------------------------------------------


def _reference(rows: int = 300) -> ReferenceSet:
    spec = ["first=first-name", "last=surname", f"pos=coordinates:{BOX}"]
    return ReferenceSet("reference", build_reference([parse_column(t) for t in spec], rows, 7))


def test_an_agreement_needs_a_scale_for_coordinates_and_covers_it() -> None:
    method = method_params()
    with pytest.raises(ValueError, match="'pos' is coordinates and needs a scale"):
        Agreement(_reference(20), POINT, method, KINDS)
    with pytest.raises(ValueError, match="'first' has a scale but is a name"):
        Agreement(_reference(20), NAMES + POINT, method, KINDS, {**SCALES, "first": 1})
    agreement = Agreement(_reference(20), NAMES + POINT, method, KINDS, SCALES)
    described = agreement.description()
    assert described["kinds"]["pos"] == "coordinates" and described["scales"] == SCALES
    again = Agreement(
        _reference(20),
        [tuple(entry) for entry in described["mapping"]],
        MethodParams(**described["params"]),
        described["kinds"],
        described.get("scales"),
    )
    assert again.digest() == agreement.digest()
    wider = Agreement(_reference(20), NAMES + POINT, method, KINDS, {"pos": 100.0})
    assert wider.digest() != agreement.digest()


def test_the_agreement_smashes_a_point_by_its_tolerance() -> None:
    agreement = Agreement(_reference(20), NAMES + POINT, method_params(), KINDS, SCALES)
    records = {"first": ["ANN", "BO"], "last": ["LEE", "MAY"], "pos": ["48.85,2.35", ""]}
    tensor = agreement.smash(records, rng=None)
    assert tensor.shape == (2, 3, 20)
    reference = agreement.reference.columns["pos"]
    expected = [min(254, round(metres("48.85,2.35", r) / TOLERANCE)) for r in reference]
    assert tensor[0, 2].tolist() == expected
    assert max(expected) > 100  # a 10 km box spans a couple of hundred units of 50 m
    assert tensor[1, 2].tolist() == [MISSING_CODE] * 20


# -- linkage ---------------------------------------------------------------------------------


def _registers(
    reach: float, typos: bool = True, seed: int = 5
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Alice's and Bob's records of the same PEOPLE people, row i with row i: every name is
    held by two namesakes living apart in the box, so only the place tells them apart. Bob
    misspells half the first names (with `typos`) and has every point again, `reach` metres
    from Alice's: within it (uniform in the disc) when it is the tolerance, exactly `reach`
    away otherwise."""
    rng = np.random.default_rng(seed)
    census = census_names()
    half = PEOPLE // 2
    firsts = census.first.names[rng.choice(len(census.first), half, replace=False)].tolist()
    lasts = census.last.names[rng.choice(len(census.last), half, replace=False)].tolist()
    latitudes = rng.uniform(SOUTH, NORTH, PEOPLE)
    longitudes = rng.uniform(WEST, EAST, PEOPLE)
    points = [f"{a:.5f},{b:.5f}" for a, b in zip(latitudes, longitudes, strict=True)]
    alice = {
        "first": firsts * 2,
        "last": lasts * 2,
        "pos": [normalise_value("coordinates", p) or "" for p in points],
    }
    if reach <= TOLERANCE:
        moved = [displaced(p, reach, rng) for p in alice["pos"]]
    else:
        moved = [moved_point(p, rng.uniform(0, 360), reach, 7) for p in alice["pos"]]
    corrupter = Corrupter(rng)
    bob = {
        "first": [
            corrupter.corrupt_value(f) if typos and i % 2 else f
            for i, f in enumerate(alice["first"])
        ],
        "last": list(alice["last"]),
        "pos": moved,
    }
    return alice, bob


def _link(
    mapping: list[tuple[str, str]],
    records: tuple[dict[str, list[str]], dict[str, list[str]]],
    encoding: str = "reference",
) -> tuple[float, float, float]:
    """Precision, recall and F1 of both parties' agreed pairs, under `encoding` (the Bloom
    release windows the point in its tolerance, pprl.protocol.vectors.bloom)."""
    with_point = any(attribute == "pos" for attribute, _ in mapping)
    agreement = Agreement(
        _reference(),
        mapping,
        method_params(training_records=PEOPLE, encoding=encoding),
        KINDS if with_point else None,
        SCALES if with_point else None,
        bloom_key=BloomKey(bytes(range(32))) if encoding == "bloom" else None,
    )
    seeds = (Randomness(3, "alice"), Randomness(3, "bob"))
    agreed = pipeline.link_in_process(agreement, *records, seeds).agreed
    found = len(agreed & {(i, i) for i in range(PEOPLE)})
    precision, recall = found / max(1, len(agreed)), found / PEOPLE
    return precision, recall, 2 * precision * recall / max(1e-9, precision + recall)


@pytest.mark.parametrize("encoding", ["reference", "bloom"])
def test_coordinates_within_the_tolerance_tell_namesakes_apart(encoding: str) -> None:
    records = _registers(TOLERANCE)
    assert (
        max(metres(a, b) for a, b in zip(records[0]["pos"], records[1]["pos"], strict=True))
        <= TOLERANCE
    )
    with_point = _link(NAMES + POINT, records, encoding)
    names_only = _link(NAMES, records, encoding)
    point_only = _link(POINT, records, encoding)
    assert with_point[2] >= 0.95
    assert names_only[2] <= 0.6  # a namesake is a coin toss
    assert point_only[2] >= 0.95


@pytest.mark.parametrize("encoding", ["reference", "bloom"])
def test_points_moved_far_beyond_the_tolerance_are_not_linked_by_them(encoding: str) -> None:
    """Bob's points 2 km (40 tolerances) from Alice's and his names identical to hers: the
    point alone links almost none of the pairs, and with the names (which cannot tell the
    namesakes apart) it loses the recall it had within the tolerance."""
    records = _registers(2000.0, typos=False)
    assert (
        min(metres(a, b) for a, b in zip(records[0]["pos"], records[1]["pos"], strict=True)) >= 1999
    )
    point_only = _link(POINT, records, encoding)
    with_point = _link(NAMES + POINT, records, encoding)
    assert point_only[1] <= 0.05
    assert with_point[1] <= 0.75
