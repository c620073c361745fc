"""The privacy gate says when its dictionary misses many of the attacked values: its figure
then holds only for an attacker with that list (European names against the US census lists
re-identified 7.2% where the countries' own lists took 28.7%; docs/research/privacy.md)."""

from __future__ import annotations

from dataclasses import dataclass

from pprl.party.phases.words import MIN_DICTIONARY_COVERAGE, coverage_words


@dataclass(frozen=True)
class _Attacked:
    attribute: str
    audited: int
    in_dictionary: float


@dataclass(frozen=True)
class _Report:
    attributes: tuple[_Attacked, ...]


def test_a_thin_dictionary_is_named_with_its_coverage_and_the_fix() -> None:
    report = _Report((_Attacked("first_name", 200, 0.564), _Attacked("last_name", 200, 0.326)))
    said = coverage_words(report)  # type: ignore[arg-type]
    assert "first_name 56.4%, last_name 32.6%" in said
    assert "[privacy] dictionary" in said and "WARNING" in said


def test_a_dictionary_that_fits_says_nothing_more() -> None:
    fits = MIN_DICTIONARY_COVERAGE + 0.01
    report = _Report((_Attacked("first", 200, 1.0), _Attacked("last", 200, fits)))
    assert coverage_words(report) == ""  # type: ignore[arg-type]
    # an attribute with no value attacked (all blank) is no evidence either way
    assert coverage_words(_Report((_Attacked("middle", 0, 0.0),))) == ""  # type: ignore[arg-type]
