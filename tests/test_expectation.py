"""The linkage a party expects before sending: its own classifier on held-out synthetic pairs
of its own records, linked as MATCH links them."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.expectation import ExpectedQuality, expected_quality, poor_linkage_words
from pprl.protocol.method import method_params
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ("first", "middle", "last")


def _columns(people: list) -> dict[str, list[str]]:
    return {a: [getattr(p, a) for p in people] for a in ATTRIBUTES}


@pytest.mark.parametrize(("sigma", "low", "high"), [(0.0, 0.95, 1.0), (6.0, 0.0, 0.5)])
def test_the_estimate_follows_the_true_linkage(sigma: float, low: float, high: float) -> None:
    """Without noise the demo-like data links almost perfectly and the estimate says so;
    at noise that ruins the linkage, so does the estimate. Each within 0.1 of the truth."""
    data = synthetic.generate(300, 3)
    reference = ReferenceSet("built-in", synthetic.default_reference(200))
    agreement = Agreement(reference, DEFAULT_MAPPING, method_params(noise_sigma=sigma))
    alice, bob = _columns(data.alice), _columns(data.bob)
    randomness = (Randomness(1, "alice"), Randomness(2, "bob"))
    linkage = pipeline.link_in_process(agreement, alice, bob, randomness)
    rows_a = {p.id: i for i, p in enumerate(data.alice)}
    rows_b = {p.id: i for i, p in enumerate(data.bob)}
    truth = {(rows_a[a], rows_b[b]) for a, b in data.truth}
    f1 = 2 * len(linkage.agreed & truth) / (len(linkage.agreed) + len(truth))
    estimate = expected_quality(agreement, alice, linkage.alice.model, randomness[0])
    assert estimate.pairs == 300
    assert low <= estimate.f1 <= high and low <= f1 <= high
    assert abs(estimate.f1 - f1) <= 0.1


def test_the_estimate_is_the_harmonic_mean_and_its_words_name_what_helps() -> None:
    quality = ExpectedQuality(precision=0.5, recall=0.25, pairs=100)
    assert quality.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert ExpectedQuality(0.0, 0.0, 10).f1 == 0.0
    words = poor_linkage_words(quality, 0.9)
    assert "expected F1 about 0.33 (precision 0.50, recall 0.25" in words
    assert "below the minimum of 0.90; nothing was sent" in words
    for remedy in ("max_reidentification", "reference set", "encoding", "min_expected_f1"):
        assert remedy in words
    assert quality.as_dict()["f1"] == pytest.approx(quality.f1)
    assert np.isclose(quality.as_dict()["pairs"], 100)
