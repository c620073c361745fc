"""The gate against the Bayes decision: on a release whose reference column repeats values,
the gate's rate on all rows is at least what a brute-force decoder re-identifies, one that
knows the release's noise covariance (estimated from the release itself, not assumed) and
the census frequencies of each attribute's list."""

from __future__ import annotations

import numpy as np
import pytest

from lab.bayes_decoder import bayes_reidentified
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import Dictionary

ATTRIBUTES = ["first", "middle", "last"]


def _small_dictionary(
    people: list, reference: dict[str, list[str]]
) -> tuple[Dictionary, list[str]]:
    """The records' own values and the 300 commonest census first names and surnames, with
    the census priors (first names, surnames, either); and other census names the oracle
    estimates the noise with."""
    census = synthetic.census_names()
    own = {getattr(p, a) for p in people for a in ATTRIBUTES} - {""}
    names = sorted(own | set(census.first.names[:300]) | set(census.last.names[:300]))
    first = dict(zip(census.first.names, census.first.weights, strict=True))
    last = dict(zip(census.last.names, census.last.weights, strict=True))
    priors = {
        "first names": [first.get(n, 0.0) for n in names],
        "surnames": [last.get(n, 0.0) for n in names],
    }
    weights = [(first.get(n, 0.0) + last.get(n, 0.0)) / 2 for n in names]
    dictionary = Dictionary(names, reference, weights=weights, priors=priors)
    spare = [n for n in census.last.names[1000:4000] if n not in own]
    return dictionary, spare


@pytest.mark.parametrize(("release", "sigma"), [("projected", 2.0), ("distances", 1.5)])
def test_the_gate_recovers_at_least_what_the_bayes_decision_does(release, sigma) -> None:
    reference = synthetic.default_reference(300)  # its first-name column repeats 150 values
    assert len(set(reference["first"])) < len(reference["first"])
    people = synthetic.generate(400, 7).alice
    columns = {a: [getattr(p, a) for p in people] for a in ATTRIBUTES}
    params = method_params(noise_sigma=sigma, release=release)
    agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, params)
    tensor = agreement.smash(columns, np.random.default_rng(11))
    # Noise of one scale leaves the byte grid's ends alone: nothing to censor.
    assert np.mean((tensor == 0) | (tensor == 254)) < 1e-3
    dictionary, spare = _small_dictionary(people, reference)
    identity = np.arange(len(people))
    gate = audit_rows(agreement, Released(identity, tensor), identity, columns, dictionary)
    oracle, per_attribute = bayes_reidentified(
        agreement,
        tensor,
        columns,
        ATTRIBUTES,
        dictionary.names,
        dictionary.priors,
        spare,
        np.random.default_rng(12),
    )
    assert 0.05 < oracle < 0.95, "the noise must leave something to decide"
    assert gate.record_reidentified >= oracle - 0.005
    gate_rates = {a.attribute: a.recovered for a in gate.attributes}
    for attribute, rate in per_attribute.items():
        assert gate_rates[attribute] >= rate - 0.01, attribute
