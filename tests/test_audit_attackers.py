"""The gate's attackers: every name equally likely, or names weighted by how common they
are; the gate reports whichever re-identifies more."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_rows, value_counts
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy import audit
from pprl.protocol.privacy.audit import (
    Dictionary,
    audit_tensor,
    census_dictionary,
    prior_penalty,
)

ATTRIBUTES = ("first", "middle", "last")


def test_a_name_listed_more_often_or_weighted_more_is_more_probable() -> None:
    reference = {"first": ["ANN", "BOB"], "last": ["KING", "LEE"]}
    listed = Dictionary(["ADA", "ADA", "BOB", ""], reference)
    assert listed.names == ["ADA", "BOB"]
    assert np.allclose(np.exp(listed.log_prior), [2 / 3, 1 / 3])
    weighted = Dictionary(["ADA", "BOB"], reference, weights=[0.25, 0.75])
    assert np.allclose(np.exp(weighted.log_prior), [0.25, 0.75])
    census = census_dictionary(reference)
    prior = dict(zip(census.names, census.log_prior, strict=True))
    first = synthetic.census_names().first.names
    assert prior[first[0]] > prior[first[-1]]  # the commonest first name against the rarest
    # The census list also weighs its names as first names only, and as surnames only.
    assert list(census.priors) == [audit.ANY_NAME, audit.FIRST_NAMES, audit.SURNAMES]
    as_first = dict(zip(census.names, census.priors[audit.FIRST_NAMES], strict=True))
    as_last = dict(zip(census.names, census.priors[audit.SURNAMES], strict=True))
    surname = synthetic.census_names().last.names[0]
    assert as_first[first[0]] > as_last[first[0]] and as_last[surname] > as_first[surname]


def test_the_prior_weighs_against_the_noise_and_breaks_ties_without_it() -> None:
    dictionary = Dictionary(["ADA", "BOB", "BOB"], {"first": ["ANN", "BOB"]})
    assert prior_penalty(dictionary, 2.0, "uniform") is None
    penalty = prior_penalty(dictionary, 2.0, "prior")
    assert penalty is not None and penalty[0] > penalty[1] > 0
    assert np.allclose(penalty, -8.0 * dictionary.log_prior)
    exact = prior_penalty(dictionary, 0.0, "prior")
    assert exact is not None and np.allclose(exact, -0.5 * dictionary.log_prior)
    with pytest.raises(ValueError, match="unknown attacker"):
        prior_penalty(dictionary, 2.0, "oracle")


# The distance release is attacked a record at a time against all 94,000 census names: 120
# records of seed 4 take half the time of 250 and keep the margins (prior over uniform 0.22,
# first names 0.20 more, against 0.18 and 0.18 on 250). The projected release is quick; on
# 120 records its first-name margin would be 0.108, so it keeps 250.
@pytest.mark.parametrize(
    ("release", "records"),
    [
        pytest.param("distances", 120, id="distances"),
        pytest.param("projected", 250, id="projected"),
    ],
)
def test_on_census_like_records_weighted_attackers_recover_more(release, records) -> None:
    reference = synthetic.default_reference(300)
    people = synthetic.generate(records, 4).alice
    columns = {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}
    params = method_params(noise_sigma=1.0, release=release)
    agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, params)
    tensor = agreement.smash(columns, np.random.default_rng(1))
    dictionary = census_dictionary(reference)
    identity = np.arange(len(people))
    released = Released(identity, tensor)
    gate = audit_rows(agreement, released, identity, columns, dictionary)
    rates = gate.by_attack
    assert set(rates) == set(audit.ATTACKS)
    assert rates["prior"] > rates["uniform"] + 0.05
    assert gate.record_reidentified == max(rates.values())
    assert gate.attack == max(rates, key=rates.__getitem__) != "uniform"
    # Each attribute is attacked with the list that fits it, as a careful peer would, and
    # recovers more of it than the uniform attacker, whose figure audit_tensor gives alone.
    chosen = {a.attribute: a.prior for a in gate.attributes}
    assert chosen["first"] == audit.FIRST_NAMES and chosen["last"] == audit.SURNAMES
    uniform = audit_tensor(tensor, columns, agreement.entries(), dictionary)
    assert uniform.record_reidentified == pytest.approx(rates["uniform"])
    assert gate.attributes[0].recovered > uniform.attributes[0].recovered + 0.1


def test_the_counts_of_a_sample_can_come_from_the_values_of_all_records() -> None:
    columns = {"first": ["ADA", "BOB", "ADA", "ADA"], "middle": ["", "", "", ""]}
    columns["last"] = ["KING", "KING", "LEE", "KING"]
    counts = value_counts(columns, DEFAULT_MAPPING, np.array([0, 1, 2]))
    assert counts["first"].tolist() == [3, 1, 3]
    assert counts["last"].tolist() == [3, 3, 1]


def test_without_noise_the_prior_picks_the_common_name_among_equally_near_ones() -> None:
    """A typo can leave a value as near to two listed names; read exactly, the uniform
    attacker calls that a tie and fails, the weighted ones take the commoner name."""
    dictionary = Dictionary(["JOHN", "JOAN"], {"first": ["X"]}, weights=[0.9, 0.1])
    assert dictionary.names == ["JOAN", "JOHN"]
    vectors = np.array([[0.0, 0.0], [2.0, 0.0]])
    released, truth = np.array([[1.0, 0.0]]), ["JOHN"]
    uniform = audit.audit_entry(released, truth, dictionary.names, vectors, 0, lookup=False)
    assert not uniform.nearest.any()
    penalty = prior_penalty(dictionary, 0.0, "prior")
    prior = audit.audit_entry(
        released, truth, dictionary.names, vectors, 0, lookup=False, penalty=penalty
    )
    assert prior.nearest.all()


def test_without_noise_the_uniform_and_the_prior_attackers_run() -> None:
    reference = synthetic.default_reference(100)
    people = synthetic.generate(40, 2).bob  # one error per record: not every value is listed
    columns = {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}
    agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params())
    identity = np.arange(len(people))
    released = Released(identity, agreement.smash(columns, None))
    gate = audit_rows(agreement, released, identity, columns, census_dictionary(reference))
    assert set(gate.by_attack) == set(audit.EXACT_ATTACKS) == {"uniform", "prior"}
    assert gate.record_reidentified == max(gate.by_attack.values())
    assert gate.by_attack["prior"] >= gate.by_attack["uniform"]


def test_one_pass_with_a_penalty_per_group_finds_what_a_pass_per_group_finds() -> None:
    """The counts attacker adds a different penalty per vector count; one pass over the
    dictionary serves every group (a pass per group read the whole dictionary each time)."""
    rng = np.random.default_rng(3)
    vectors = rng.integers(0, 6, size=(500, 8)).astype(np.float64)
    vectors[7] = vectors[3]  # a tie: two names with one vector
    values = vectors[rng.integers(0, 500, 40)] + rng.normal(0, 0.8, (40, 8))
    values[0] = vectors[3]
    penalties = rng.uniform(0, 4, (3, 500))
    penalties[:, [3, 7]] = 0.0  # row 0 is at distance 0 of both, and of no other name
    groups = rng.integers(0, 3, 40)
    together = audit._nearest(values, vectors, penalties, None, groups)
    for group in range(3):
        rows = groups == group
        alone = audit._nearest(values[rows], vectors, penalties[group])
        assert np.array_equal(together[0][rows], alone[0])
        assert np.array_equal(together[1][rows], alone[1])
    assert not together[1][0]  # the tie is found: not a vacuous comparison
    with pytest.raises(ValueError, match="group of every row"):
        audit._nearest(values, vectors, penalties)
