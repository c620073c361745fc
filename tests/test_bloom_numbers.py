"""The Bloom release's window encoding of numbers and places: Dice distance follows the
numeric (or great-circle) distance, every value sets as many bits, and linkage uses it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pprl.protocol.data.canonical import EARTH_RADIUS_METRES
from pprl.protocol.linkage.bloom_linkage import BloomAgreement, link_in_process
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.vectors.bloom import (
    WINDOW_UNITS,
    WINDOWS,
    BloomKey,
    BloomParams,
    encode,
    pair_features,
    unpack,
)

KEY = BloomKey(bytes(range(32)))
PARAMS = BloomParams()


def _distances(kind: str, a: list[str], b: list[str], scale: float, key: BloomKey = KEY):
    filters = [
        unpack(encode(key, PARAMS, {"x": values}, ["x"], {"x": kind}, {"x": scale}))
        for values in (a, b)
    ]
    return pair_features(filters[0], filters[1])[:, 0], filters[0].counts[:, 0]


@pytest.mark.parametrize("units", [1, 2, 4, 8])
def test_a_quantitys_dice_distance_grows_with_its_difference(units: int) -> None:
    values = np.random.default_rng(3).uniform(100, 200, 2000)
    near, counts = _distances(
        "quantity",
        [format(v, ".6f") for v in values],
        [format(v + units * 0.5, ".6f") for v in values],
        scale=0.5,
    )
    # a function's interval is shared with probability 1 - d / WINDOW_UNITS (less the odd
    # bit two intervals share by collision)
    assert abs(float(near.mean()) - units / WINDOW_UNITS) < 0.04
    assert counts.min() >= WINDOWS - 8 and counts.max() == WINDOWS


def test_values_further_apart_than_a_window_share_no_more_than_chance() -> None:
    values = np.random.default_rng(4).uniform(100, 200, 1000)
    far, _ = _distances(
        "quantity",
        [format(v, ".6f") for v in values],
        [format(v + 2 * WINDOW_UNITS * 0.5, ".6f") for v in values],
        scale=0.5,
    )
    assert float(far.mean()) > 0.9
    same, _ = _distances("quantity", ["175.5"], ["175.50"], scale=0.5)
    assert float(same[0]) == 0.0


def _moved(lat: np.ndarray, lon: np.ndarray, metres: float, rng: np.random.Generator):
    angle = rng.uniform(0, 2 * np.pi, len(lat))
    north = np.degrees(metres * np.sin(angle) / EARTH_RADIUS_METRES)
    east = np.degrees(metres * np.cos(angle) / EARTH_RADIUS_METRES / np.cos(np.radians(lat)))
    return lat + north, lon + east


@pytest.mark.parametrize("latitude", [0.0, 48.0, 75.0])
def test_places_compare_by_distance_at_any_latitude(latitude: float) -> None:
    rng = np.random.default_rng(5)
    lat = latitude + rng.uniform(-0.05, 0.05, 800)
    lon = 100 + rng.uniform(-0.05, 0.05, 800)
    here = [f"{a:.7f},{o:.7f}" for a, o in zip(lat, lon, strict=True)]
    means = []
    for metres in (0, 50, 200, 2000):
        there = [f"{a:.7f},{o:.7f}" for a, o in zip(*_moved(lat, lon, metres, rng), strict=True)]
        means.append(float(_distances("coordinates", here, there, scale=50.0)[0].mean()))
    assert means[0] == 0.0
    assert 0.05 < means[1] < 0.13 < 0.25 < means[2] < 0.4  # 1 and 4 units of 50 m
    assert means[3] > 0.9  # beyond the grid's cells: chance only


def test_another_key_gives_unrelated_filters_and_a_missing_value_none() -> None:
    values = [format(v, ".1f") for v in np.linspace(150, 190, 200)]
    ours, _ = _distances("quantity", values, values, scale=0.5, key=KEY)
    assert float(ours.max()) == 0.0
    filters = [
        unpack(encode(k, PARAMS, {"x": values}, ["x"], {"x": "quantity"}, {"x": 0.5}))
        for k in (KEY, BloomKey(bytes(range(1, 33))))
    ]
    assert float(pair_features(filters[0], filters[1])[:, 0].mean()) > 0.85
    blank = unpack(encode(KEY, PARAMS, {"x": ["", "170"]}, ["x"], {"x": "quantity"}, {"x": 1}))
    assert blank.counts[0, 0] == 0 and WINDOWS - 8 <= blank.counts[1, 0] <= WINDOWS


def test_a_number_needs_its_scale() -> None:
    with pytest.raises(ValueError, match="'x' is a quantity and needs a scale"):
        encode(KEY, PARAMS, {"x": ["1"]}, ["x"], {"x": "quantity"}, {})


def test_a_quantity_tells_apart_people_whose_names_are_the_same() -> None:
    """Names from a small pool repeat, so names alone cannot say who is who; a height read
    again within a unit can."""
    rng = np.random.default_rng(11)
    n = 300
    first = [f"NAME{k}" for k in rng.integers(0, 12, n)]
    last = [f"SURNAME{k}" for k in rng.integers(0, 12, n)]
    heights = rng.uniform(140, 210, n)
    alice = {"first": first, "last": last, "height": [format(h, ".1f") for h in heights]}
    again = [format(h + rng.uniform(-0.3, 0.3), ".1f") for h in heights]
    order = rng.permutation(n)  # Bob's row k is Alice's order[k]: ties cannot fall right
    bob = {name: [column[i] for i in order] for name, column in dict(alice, height=again).items()}
    truth = {(int(i), k) for k, i in enumerate(order)}
    method = dataclasses.replace(method_params(), training_records=n)
    scores = {}
    for attributes in (("first", "last"), ("first", "last", "height")):
        agreement = BloomAgreement(
            KEY, PARAMS, attributes, {"height": "quantity"}, method, {"height": 0.5}
        )
        rngs = (np.random.default_rng(1), np.random.default_rng(2))
        linked = link_in_process(agreement, alice, bob, rngs).agreed
        scores[attributes] = linkage_quality(linked, truth).f1
    assert scores[("first", "last")] < 0.7
    assert scores[("first", "last", "height")] >= 0.95
