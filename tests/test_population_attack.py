"""The attacker who combines a record's attributes with a list of people: it re-identifies
what attribute-by-attribute attacks cannot, is fooled by people it cannot tell apart, and
names what its list lacks."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.privacy.population_attack import Population, attack_population

ATTRIBUTES = ("first", "middle", "last")


def _released(sigma: float, release: str = "distances", size: int = 300):
    reference = synthetic.default_reference(300)
    people = synthetic.generate(size, 4).alice
    columns = {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}
    feature = "projected-cosine" if release == "projected" else None
    params = method_params(noise_sigma=sigma, release=release, feature=feature)
    agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, params)
    tensor = agreement.smash(columns, np.random.default_rng(1))
    released = Released(np.arange(size), tensor)
    return agreement, released, columns


def _attack(agreement, released, columns, people: dict[str, list[str]]):
    return attack_population(
        released.tensor,
        columns,
        agreement.entries(),
        agreement.reference.columns,
        Population(people),
    )


@pytest.mark.parametrize("release", ["distances", "projected"])
def test_without_noise_a_list_holding_the_people_names_every_record(release: str) -> None:
    agreement, released, columns = _released(0.0, release)
    others = synthetic.generate(300, 9).alice
    listed = {a: [*columns[a], *(getattr(p, a) for p in others)] for a in ATTRIBUTES}
    report = _attack(agreement, released, columns, listed)
    assert report.attack == "population" and report.records == 300
    assert report.record_reidentified == 1.0
    assert {a.attribute for a in report.attributes} == set(ATTRIBUTES)
    middle = next(a for a in report.attributes if a.attribute == "middle")
    assert middle.audited == sum(1 for v in columns["middle"] if v)  # blanks are not judged


def test_under_noise_it_re_identifies_far_more_than_the_dictionary_attackers() -> None:
    agreement, released, columns = _released(2.0, "projected")
    others = synthetic.generate(300, 9).alice
    listed = {a: [*columns[a], *(getattr(p, a) for p in others)] for a in ATTRIBUTES}
    combined = _attack(agreement, released, columns, listed)
    rows = np.arange(300)
    dictionary = census_dictionary(agreement.reference.columns)
    alone = audit_rows(agreement, released, rows, columns, dictionary)
    assert alone.attack != "population"
    assert combined.record_reidentified > alone.record_reidentified + 0.2
    # Through the gate's entry point it runs beside them, and wins.
    both = audit_rows(agreement, released, rows, columns, dictionary, population=Population(listed))
    assert both.attack == "population"
    assert both.by_attack["population"] == pytest.approx(combined.record_reidentified)
    assert set(both.by_attack) == {"population", "uniform", "prior", "counts"}


def test_people_it_cannot_tell_apart_are_not_re_identified() -> None:
    agreement, released, columns = _released(0.0)
    twice = {a: [*columns[a], *columns[a]] for a in ATTRIBUTES}  # every person listed twice
    report = _attack(agreement, released, columns, twice)
    assert report.record_reidentified == 0.0 and report.record_exposed == 0.0


def test_a_list_without_a_column_or_without_people_is_refused() -> None:
    agreement, released, columns = _released(0.0, size=40)
    with pytest.raises(ValueError, match="no column middle"):
        _attack(agreement, released, columns, {"first": ["ANN"], "last": ["LEE"]})
    with pytest.raises(ValueError, match="non-zero number"):
        Population({"first": [], "last": []})
    with pytest.raises(ValueError, match="same"):
        Population({"first": ["ANN"], "last": ["LEE", "KING"]})
