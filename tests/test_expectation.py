"""The linkage a party expects: before sending, its own classifier on held-out synthetic pairs
of its own records, linked as MATCH links them; after linking, those simulations fitted to
the pairs it accepted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pprl.protocol import expectation, pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.expectation import (
    TYPICAL_ERROR_RATE,
    UNMATCHED_SHARE,
    ExpectedQuality,
    Simulation,
    after_linking,
    before_sending,
    poor_linkage_words,
    simulate,
)
from pprl.protocol.method import method_params
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ("first", "middle", "last")


def _columns(people: list) -> dict[str, list[str]]:
    return {a: [getattr(p, a) for p in people] for a in ATTRIBUTES}


def _linked(sigma: float, size: int = 300, **generated: Any):
    data = synthetic.generate(size, 3, **generated)
    reference = ReferenceSet("built-in", synthetic.default_reference(200))
    method = method_params(noise_sigma=sigma, error_model=generated.get("errors") or "registers")
    agreement = Agreement(reference, DEFAULT_MAPPING, method)
    alice, bob = _columns(data.alice), _columns(data.bob)
    randomness = (Randomness(1, "alice"), Randomness(2, "bob"))
    linkage = pipeline.link_in_process(agreement, alice, bob, randomness)
    rows_a = {p.id: i for i, p in enumerate(data.alice)}
    rows_b = {p.id: i for i, p in enumerate(data.bob)}
    truth = {(rows_a[a], rows_b[b]) for a, b in data.truth}
    f1 = 2 * len(linkage.agreed & truth) / (len(linkage.agreed) + len(truth))
    return agreement, alice, randomness[0], linkage, f1


@pytest.mark.parametrize(("sigma", "low", "high"), [(0.0, 0.9, 1.0), (6.0, 0.0, 0.5)])
def test_the_estimate_follows_the_true_linkage(sigma: float, low: float, high: float) -> None:
    """Without noise the demo-like data links almost perfectly and the estimate says so
    (a little lower: it counts the links of records without a partner, which this data's
    truth has few of); at noise that ruins the linkage, so does the estimate. Each within 0.1
    of the truth."""
    agreement, alice, randomness, linkage, f1 = _linked(sigma)
    estimate = before_sending(
        simulate(agreement, alice, linkage.alice.model, randomness, rates=(TYPICAL_ERROR_RATE,))
    )
    assert estimate.pairs == 300 - 2 * 60  # a fifth of each simulated side has no partner
    assert low <= estimate.f1 <= high and low <= f1 <= high
    assert abs(estimate.f1 - f1) <= 0.1


def test_fitted_to_the_links_it_sees_records_without_a_partner() -> None:
    """70% of Bob's records Alice's people, with register errors and namesakes (the
    benchmark's generated set, smaller): the estimate before sending (a fifth of records
    assumed unpartnered, strangers that are nobody's namesakes) is too high by about 0.06;
    fitted to Alice's accepted pairs it comes closer, within 0.06 of the true F1, and counts
    the partnered records within 10%."""
    agreement, alice, randomness, linkage, f1 = _linked(
        0.0, size=500, overlap=0.7, namesakes=0.3, errors="registers"
    )
    simulations = simulate(agreement, alice, linkage.alice.model, randomness)
    assert [s.error_rate for s in simulations] == [0.15, 0.3, 0.45, 0.6]
    before = before_sending(simulations)
    matches = linkage.alice.matched.matches
    fitted = after_linking(simulations, len(matches), float(matches.scores.mean()), 500, 500)
    assert before.f1 - f1 > 0.04
    assert abs(fitted.quality.f1 - f1) < before.f1 - f1
    assert abs(fitted.quality.f1 - f1) <= 0.06
    assert fitted.fitted and abs(fitted.partnered - 350) <= 35


def _simulation(rate: float, linked: float, mislinked: float, stray: float, score: float):
    return Simulation(rate, 600, linked, mislinked, stray, score, score - 2, score - 4)


def test_the_fit_solves_the_partnered_count_and_the_rate_from_count_and_mean_score() -> None:
    """Links made exactly as the 0.45 simulation predicts for 700 partnered records of 1,000
    are read back as 0.45 and 700, with precision 700 x linked / accepted."""
    sims = [
        _simulation(0.15, 0.98, 0.01, 0.25, 9.0),
        _simulation(0.3, 0.95, 0.015, 0.22, 8.0),
        _simulation(0.45, 0.9, 0.02, 0.2, 7.0),
        _simulation(0.6, 0.85, 0.03, 0.18, 6.0),
    ]
    partnered, records = 700, 1000
    s = sims[2]
    kinds = [partnered * s.linked, partnered * s.mislinked, (records - partnered) * s.stray]
    accepted = sum(kinds)
    mean = (kinds[0] * 7.0 + kinds[1] * 5.0 + kinds[2] * 3.0) / accepted
    fitted = after_linking(sims, round(accepted), mean, records, 1200)
    assert fitted.error_rate == pytest.approx(0.45, abs=0.01)
    assert fitted.partnered == pytest.approx(700, abs=3)
    assert fitted.quality.precision == pytest.approx(700 * 0.9 / round(accepted), abs=0.01)
    assert fitted.quality.recall == pytest.approx(0.9, abs=0.01)
    words = fitted.words(round(accepted), records)
    assert "fitted to the 704 pairs accepted" in words and "about 700 of the 1,000" in words


def test_the_fit_falls_back_where_the_count_cannot_tell_and_outside_the_simulated_rates() -> None:
    """Strays linked as often as partnered records (heavy noise): every record is assumed
    partnered, up to the peer's count. A mean score beyond every simulation's takes the
    nearest rate."""
    flat = [_simulation(r, 0.3, 0.6, 0.88, 3.0 - r) for r in (0.15, 0.3, 0.45, 0.6)]
    fitted = after_linking(flat, 850, -5.0, 1000, 800)
    assert not fitted.fitted and fitted.partnered == 800
    assert fitted.error_rate == 0.6
    assert fitted.quality.precision == pytest.approx(800 * 0.3 / 850)
    assert "cannot tell how many have a partner" in fitted.words(850, 1000)
    assert after_linking(flat, 850, 99.0, 1000, 800).error_rate == 0.15
    assert before_sending(flat).precision == pytest.approx(0.8 * 0.3 / (0.8 * 0.9 + 0.2 * 0.88))


def test_records_without_a_partner_lower_the_expected_precision_by_their_links() -> None:
    """With a share u of own records unpartnered, their links (stray) are wrong links beside
    the partnered records' mislinks; recall is the partnered records' alone."""
    s = _simulation(0.3, 0.8, 0.1, 0.5, 5.0)
    assert s.quality().precision == pytest.approx(0.8 / 0.9)
    with_strays = s.quality(0.2)
    assert with_strays.precision == pytest.approx(0.8 * 0.8 / (0.8 * 0.9 + 0.2 * 0.5))
    assert with_strays.recall == s.quality().recall == 0.8
    assert before_sending([s]) == s.quality(UNMATCHED_SHARE) == with_strays
    # Strays that link nothing cost no precision.
    assert _simulation(0.3, 0.8, 0.1, 0.0, 5.0).quality(0.2).precision == pytest.approx(0.8 / 0.9)


def test_the_estimate_is_the_mean_over_the_simulated_rates_with_its_spread() -> None:
    """No party knows before linking how much the peer's records differ: each simulated rate
    is as likely, so the expected right and accepted links are pooled over them (not the F1s
    averaged, nor one prior rate's). The F1 at the least and the most changed pairs goes with
    it, in its words, its dict and read back from that dict."""
    sims = [
        _simulation(0.6, 0.6, 0.05, 0.1, 5.0),
        _simulation(0.15, 0.95, 0.01, 0.1, 5.0),
        _simulation(0.3, 0.9, 0.02, 0.1, 5.0),
    ]
    quality = before_sending(sims)  # a fifth of own records without a partner
    right = 0.8 * (0.6 + 0.95 + 0.9)
    accepted = 0.8 * (0.65 + 0.96 + 0.92) + 3 * 0.2 * 0.1
    assert quality.precision == pytest.approx(right / accepted)
    assert quality.recall == pytest.approx((0.6 + 0.95 + 0.9) / 3)
    assert quality.pairs == 3 * 600  # every simulation's partnered records
    # Below the typical rate's own estimate, which the most changed pairs pull down.
    assert quality.f1 < sims[2].quality(0.2).f1
    assert quality.spread is not None
    assert quality.spread.most_changed == (0.6, pytest.approx(sims[0].quality(0.2).f1))
    assert quality.spread.least_changed == (0.15, pytest.approx(sims[1].quality(0.2).f1))
    words = quality.words()
    low, high = sims[0].quality(0.2).f1, sims[1].quality(0.2).f1
    assert f"from {low:.2f} if the pairs differ in 60% of their compared values" in words
    assert f"to {high:.2f} if in 15%" in words
    assert "the mean over 15% to 60% of compared values changed, each as likely" in words
    written = quality.as_dict()
    assert expectation.spread_words(written) == quality.spread.words()
    # One simulation: no spread to tell.
    assert before_sending(sims[2:]).spread is None
    assert expectation.spread_words(before_sending(sims[2:]).as_dict()) == ""


def test_a_simulation_survives_its_json_form() -> None:
    s = _simulation(0.3, 0.9, 0.05, 0.2, 5.0)
    assert Simulation.from_dict(s.as_dict()) == s


def test_the_estimate_is_the_harmonic_mean_and_its_words_name_what_helps() -> None:
    quality = ExpectedQuality(precision=0.5, recall=0.25, pairs=100)
    assert quality.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert ExpectedQuality(0.0, 0.0, 10).f1 == 0.0
    words = poor_linkage_words(quality, 0.9)
    assert "expected F1 about 0.33 (precision 0.50, recall 0.25" in words
    assert "below the minimum of 0.90; nothing was sent" in words
    for remedy in ("max_reidentification", "reference set", '"sealed"', "min_expected_f1"):
        assert remedy in words
    # A release without noise (sealed linkage) has no noise to lower: neither remedy is named.
    quiet = poor_linkage_words(quality, 0.9, noisy=False)
    assert "max_reidentification" not in quiet and '"sealed"' not in quiet
    assert "reference set" in quiet and "min_expected_f1" in quiet
    # Sealed linkage says how many synthetic true pairs its keys join, and which keys join more.
    keyed = poor_linkage_words(quality, 0.9, noisy=False, keys_join=0.657)
    assert "these join 65.7% of synthetic ones; looser keys give more away" in keyed
    wider = poor_linkage_words(quality, 0.9, False, 0.657, ("a:soundex+b:soundex", "a:prefix"))
    # As the configuration writes it: a TOML list of strings.
    assert 'sealed_keys = ["a:soundex+b:soundex", "a:prefix"] adds' in wider
    assert "sealed_keys" not in quiet
    assert quality.as_dict()["f1"] == pytest.approx(quality.f1)
    assert np.isclose(quality.as_dict()["pairs"], 100)


def test_simulated_releases_are_keyed_as_the_real_ones_are() -> None:
    """A keyed release gives the simulation two throwaway keys, one a side, neither the
    party's own; a release with fresh noise gives it none."""
    keyed = Randomness(seed=3, party="alice")
    rng = np.random.default_rng(0)
    own_key, peer_key = expectation._stand_in_keys(keyed, rng)
    assert own_key is not None and peer_key is not None
    secrets = {own_key.secret(), peer_key.secret()}
    assert len(secrets) == 2
    assert keyed.noise_key is not None and keyed.noise_key.secret() not in secrets
    assert expectation._stand_in_keys(Randomness(), rng) == (None, None)
