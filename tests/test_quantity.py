"""Quantities end to end: agreed with their scales, smashed, trained on and linked."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.kinds import normalise_value
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.data.reference_builder import build_reference, parse_column
from pprl.protocol.data.synthetic import census_names
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.vectors.randomness import Randomness

PEOPLE = 40  # name pairs; each is held by two namesakes
KINDS = {"height": "quantity"}
SCALES = {"height": 0.5}
MAPPING = [("first", "first"), ("last", "last"), ("height", "height")]


def _reference(rows: int = 150) -> ReferenceSet:
    spec = ["first=first-name", "last=surname", "height=quantity:140-210"]
    return ReferenceSet("reference", build_reference([parse_column(t) for t in spec], rows, 7))


def _height(value: float) -> str:
    return normalise_value("quantity", f"{value:.1f}") or ""


def _records(seed: int = 5) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Alice's and Bob's records of the same 2 x PEOPLE people, row i with row i: every name
    is held by two namesakes 12 to 30 cm apart, so only the height tells them apart. Bob
    misspells half the names and measures every height again, within a centimetre."""
    rng = np.random.default_rng(seed)
    census = census_names()
    firsts = census.first.names[rng.choice(len(census.first), PEOPLE, replace=False)].tolist()
    lasts = census.last.names[rng.choice(len(census.last), PEOPLE, replace=False)].tolist()
    low = rng.uniform(150, 175, size=PEOPLE)
    heights = np.concatenate([low, low + rng.uniform(12, 30, size=PEOPLE)])
    alice = {
        "first": firsts * 2,
        "last": lasts * 2,
        "height": [_height(h) for h in heights],
    }
    corrupter = Corrupter(rng)
    bob = {
        "first": [corrupter.corrupt_value(f) if i % 2 else f for i, f in enumerate(alice["first"])],
        "last": list(alice["last"]),
        "height": [_height(h + rng.uniform(-1, 1)) for h in heights],
    }
    return alice, bob


def _link(
    mapping: list[tuple[str, str]], method: MethodParams, scales: dict[str, float] | None = None
) -> set[tuple[int, int]]:
    """Both parties' agreed pairs, (Alice's row, Bob's row)."""
    alice, bob = _records()
    kinds = KINDS if scales else None
    agreement = Agreement(_reference(), mapping, method, kinds, scales)
    seeds = (Randomness(3, "alice"), Randomness(3, "bob"))
    return pipeline.link_in_process(agreement, alice, bob, seeds).agreed


def test_a_quantity_tells_namesakes_apart_that_names_cannot() -> None:
    truth = {(i, i) for i in range(2 * PEOPLE)}
    with_height = _link(MAPPING, method_params(training_records=2 * PEOPLE), SCALES)
    names_only = _link(MAPPING[:2], method_params(training_records=2 * PEOPLE))
    assert len(with_height & truth) >= 0.95 * len(truth)
    assert len(with_height - truth) <= 2
    assert len(names_only & truth) <= 0.8 * len(truth)  # a namesake is a coin toss


def test_under_noise_a_scale_that_spans_tens_of_units_keeps_the_linkage() -> None:
    """The noise is one scale for every coordinate, sigma times the spread of all mapped
    columns' reference distances: a fine scale spreads heights over hundreds of units and
    drowns the names in noise, a scale that spans tens of units across the reference range
    (5 cm over 70) does not."""
    noisy = method_params(training_records=2 * PEOPLE, noise_sigma=0.5)
    names = Agreement(_reference(), MAPPING[:2], noisy)
    fine = Agreement(_reference(), MAPPING, noisy, KINDS, SCALES)
    coarse = Agreement(_reference(), MAPPING, noisy, KINDS, {"height": 5.0})
    assert fine.sigma0 > 10 * names.sigma0 and coarse.sigma0 < 2 * names.sigma0
    truth = {(i, i) for i in range(2 * PEOPLE)}
    agreed = _link(MAPPING, noisy, {"height": 5.0})
    assert len(agreed & truth) >= 0.95 * len(truth) and len(agreed - truth) <= 2


def test_an_agreement_needs_a_scale_for_each_quantity_and_for_nothing_else() -> None:
    method = method_params()
    with pytest.raises(ValueError, match="'height' is a quantity and needs a scale"):
        Agreement(_reference(), MAPPING, method, KINDS)
    with pytest.raises(ValueError, match="'first' has a scale but is a name"):
        Agreement(_reference(), MAPPING, method, KINDS, {**SCALES, "first": 1.0})
    with pytest.raises(ValueError, match="finite number > 0"):
        Agreement(_reference(), MAPPING, method, KINDS, {"height": 0.0})


def test_the_stored_description_gives_back_the_agreement_and_its_scales() -> None:
    """A daemon rebuilds its agreement from the description stored at AGREE."""
    agreement = Agreement(_reference(), MAPPING, method_params(), KINDS, SCALES)
    described = agreement.description()
    again = Agreement(
        _reference(),
        [tuple(entry) for entry in described["mapping"]],
        MethodParams(**described["params"]),
        described["kinds"],
        described.get("scales"),
    )
    assert again.digest() == agreement.digest()
    other = Agreement(_reference(), MAPPING, method_params(), KINDS, {"height": 1.0})
    assert other.digest() != agreement.digest()


def test_the_agreement_smashes_a_quantity_by_its_scale() -> None:
    agreement = Agreement(_reference(20), MAPPING, method_params(), KINDS, SCALES)
    records = {"first": ["ANN", "BO"], "last": ["LEE", "MAY"], "height": ["175.5", ""]}
    tensor = agreement.smash(records, rng=None)
    assert tensor.shape == (2, 3, 20)
    reference = np.array([float(v) for v in agreement.reference.columns["height"]])
    expected = np.minimum(np.rint(np.abs(175.5 - reference) / 0.5), 254)
    assert tensor[0, 2].tolist() == expected.tolist()
    assert tensor[1, 2].tolist() == [MISSING_CODE] * 20
