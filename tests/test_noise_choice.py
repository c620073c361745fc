"""Noise chosen for the user: the smallest sigma that passes the party's own gate, found by
bisection on a grid, measured as the gate measures."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows, calibrate_noise, gate_sample
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import (
    ATTACKS,
    AuditReport,
    Dictionary,
    audit_tensor,
    census_dictionary,
    vector_counts,
)
from pprl.protocol.privacy.noise import CalibrationError
from pprl.protocol.privacy.noise_choice import SIGMA_STEPS, choose_sigma
from pprl.protocol.vectors.randomness import Randomness


@pytest.fixture(scope="module")
def reference() -> dict[str, list[str]]:
    return synthetic.default_reference(300)


@pytest.fixture(scope="module")
def dictionary(reference: dict[str, list[str]]) -> Dictionary:
    """The census lists against the reference set, cut to their 6,000 commonest names and
    every name the module's records hold, one for the module's tests: what costs is each
    name's distances, computed once when an attack first needs them."""
    held = {
        getattr(p, a)
        for size, seed in ((400, 3), (300, 4), (300, 8))
        for p in synthetic.generate(size, seed).alice
        for a in ("first", "middle", "last")
    }
    return census_dictionary(reference, kept=6000, held=held)


def test_the_smallest_passing_step_is_found_with_few_measurements() -> None:
    asked: list[float] = []

    def rate(sigma: float) -> float:
        asked.append(sigma)
        return max(0.0, 1.0 - sigma / 2.0)  # 10% is reached at sigma 1.8

    choice = choose_sigma(rate, 0.10)
    assert choice.sigma == 1.875  # the first eighth step at or past 1.8
    assert len(asked) <= 8 < len(SIGMA_STEPS)
    assert choice.rates[1.875] <= 0.10 < choice.rates[1.75]
    assert (
        choice.words() == "sigma 1.875 re-identified 6.2% (sigma 1.75: at least 12.5%); limit 10.0%"
    )


def test_no_noise_is_chosen_when_the_release_passes_without_it() -> None:
    assert choose_sigma(lambda sigma: 0.0, 0.10).sigma == 0.0


def test_a_gate_no_noise_on_the_grid_can_pass_is_refused() -> None:
    with pytest.raises(CalibrationError, match=r"even sigma 8 re-identifies 50.0%.*10.0%"):
        choose_sigma(lambda sigma: 0.5, 0.10)
    with pytest.raises(ValueError, match="increasing"):
        choose_sigma(lambda sigma: 0.0, 0.1, steps=[1.0, 0.5])


def test_the_chosen_noise_passes_the_gate_on_the_sampled_records_and_a_step_less_does_not(
    reference: dict[str, list[str]], dictionary: Dictionary
) -> None:
    agreement = Agreement(
        ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=1.0)
    )
    people = synthetic.generate(400, 3).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}
    randomness = Randomness(5, "alice")
    records = gate_sample(len(people), 150, randomness)
    choice = calibrate_noise(
        agreement, columns, records, dictionary, randomness, 0.10, "every-name"
    )
    assert 0 < choice.sigma < 8
    # Measured again the way SMASH's gate measures it: the whole release, the same records.
    chosen = agreement.with_noise(choice.sigma)
    released = pipeline.release(chosen, columns, randomness)
    position = np.empty(len(released.order), dtype=np.int64)
    position[released.order] = np.arange(len(released.order))
    rows = np.sort(position[records])
    report = audit_rows(chosen, released, rows, columns, dictionary)
    assert report.record_reidentified == choice.rates[choice.sigma] <= 0.10
    below = choice.sigma - 0.125
    assert choice.rates[below] > 0.10


@pytest.mark.parametrize("hint", [1.875, 1.75, 2.0, 0.5, 6.0, 1.8, None])
def test_a_hint_changes_how_many_steps_are_measured_not_the_choice(hint) -> None:
    asked: list[float] = []

    def rate(sigma: float) -> float:
        asked.append(sigma)
        return max(0.0, 1.0 - sigma / 2.0)

    choice = choose_sigma(rate, 0.10, hint=hint)
    assert choice.sigma == 1.875
    assert choice.rates[1.875] <= 0.10 < choice.rates[1.75]
    if hint in (1.875, 1.75):  # the previous run's choice, or a step below it
        # ... then the step above the choice, its margin for the peer's proposal
        assert asked == [hint, 1.875 if hint == 1.75 else 1.75, 2.0]
    if hint == 1.8:  # off the grid: ignored
        assert asked[0] == 8.0
    assert len(asked) <= 10


def test_the_choice_keeps_a_step_of_margin_where_rates_do_not_fall() -> None:
    """A sampled rate may rise a step above the smallest passing sigma: the choice moves
    past it, so that the peer proposing the next step up leaves this gate passing."""
    rates = {1.5: 0.22, 1.625: 0.10, 1.75: 0.125, 1.875: 0.08, 2.0: 0.09, 2.125: 0.05}

    def rate(sigma: float) -> float:
        return rates.get(sigma, 0.3 if sigma < 1.5 else 0.0)

    choice = choose_sigma(rate, 0.10)
    assert choice.sigma == 1.875
    assert choice.rates[1.75] > 0.10 and choice.rates[2.0] <= 0.10
    # Past a failing step to one that passes with its next, or to the last step.
    top = choose_sigma(lambda sigma: 0.05 if sigma in (7.75, 8.0) else 0.5, 0.10)
    assert top.sigma == 8.0
    # A hint that passes, with every step above it failing: refused, as the top fails.
    with pytest.raises(CalibrationError, match="even sigma 8"):
        choose_sigma(lambda sigma: 0.05 if sigma == 7.875 else 0.5, 0.10, hint=7.875)


def test_a_hint_at_a_failing_last_step_still_refuses() -> None:
    with pytest.raises(CalibrationError, match="even sigma 8"):
        choose_sigma(lambda sigma: 0.5, 0.10, hint=8.0)
    assert choose_sigma(lambda sigma: 0.0, 0.10, hint=8.0).sigma == 0.0


def test_an_attack_that_may_stop_early_fails_the_same_releases(
    reference: dict[str, list[str]], dictionary: Dictionary
) -> None:
    """The noise choice stops at the first attacker over the limit: the rate it records is
    a lower bound of the full gate's, over the limit exactly when the full gate's is."""
    people = synthetic.generate(300, 4).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}
    randomness = Randomness(6, "alice")
    for sigma in (1.0, 4.0):
        agreement = Agreement(
            ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=sigma)
        )
        released = pipeline.release(agreement, columns, randomness)
        rows = np.arange(120)
        full = audit_rows(agreement, released, rows, columns, dictionary)
        early = audit_rows(agreement, released, rows, columns, dictionary, stop_above=0.10)
        assert len(full.by_attack) == 3
        assert (early.record_reidentified > 0.10) == (full.record_reidentified > 0.10)
        assert early.record_reidentified <= full.record_reidentified
        if full.record_reidentified > 0.10:
            assert len(early.by_attack) < 3 or early.attack == "uniform"
        else:
            assert early.record_reidentified == full.record_reidentified


class FullAttacks(NamedTuple):
    """A release, what each attack is given, and each attacker's report on every value."""

    arguments: tuple
    keywords: dict[str, dict]
    reports: dict[str, AuditReport]


@pytest.fixture(scope="module")
def full_attacks(reference: dict[str, list[str]], dictionary: Dictionary) -> FullAttacks:
    """Every attacker on every value of one release: the same for either measure below, so
    attacked once for both."""
    people = synthetic.generate(300, 8).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}
    agreement = Agreement(
        ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=1.5)
    )
    released = pipeline.release(agreement, columns, Randomness(2, "alice"))
    truth = {name: [values[i] for i in released.order] for name, values in columns.items()}
    counts = vector_counts(released.tensor, agreement.mapping)
    arguments = (released.tensor, truth, agreement.entries(), dictionary)
    keywords = {a: {"attacker": a, "counts": counts, "records": len(people)} for a in ATTACKS}
    reports = {a: audit_tensor(*arguments, **keywords[a]) for a in ATTACKS}
    return FullAttacks(arguments, keywords, reports)


@pytest.mark.parametrize("measure", ["every-name", "any-name"])
def test_the_record_rate_alone_equals_the_full_attacks(
    full_attacks: FullAttacks, measure: str
) -> None:
    """Attacking later attributes only for records they can still change gives the same
    record figure as attacking every value, for either measure and every attacker."""
    rates = set()
    for attacker in ATTACKS:
        full = full_attacks.reports[attacker]
        alone = audit_tensor(
            *full_attacks.arguments, **full_attacks.keywords[attacker], only=measure
        )
        assert alone.rate(measure) == full.rate(measure)
        assert alone.attributes == [] and len(full.attributes) == 3
        rates.add(full.rate(measure))
    assert all(0 < rate < 1 for rate in rates)  # some records decided early, some not
