"""The joint attacker: a combined entry of names read together with the names' own entries.

Held to the brute-force Bayes decision over every pair of a small dictionary
(lab.bayes_decoder), and to beating the per-attribute attackers it joins the gate
beside, on the same release."""

from __future__ import annotations

import numpy as np
import pytest

from lab.bayes_decoder import bayes_joint_reidentified
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.gate import audit_rows, combined_names, unaudited_attributes
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import Dictionary, census_dictionary

MAPPING = [("first", "first"), ("last", "last"), ("first+last", "first+last")]


def _release(sigma: float, size: int, release: str = "projected"):
    reference = ReferenceSet("built-in", synthetic.default_reference(300))
    agreement = Agreement(reference, MAPPING, method_params(noise_sigma=sigma, release=release))
    people = synthetic.generate(size, 5).alice
    columns = {a: [getattr(p, a) for p in people] for a in ("first", "last")}
    tensor = agreement.smash(columns, np.random.default_rng(17))
    return agreement, columns, tensor


def _dictionary(columns: dict[str, list[str]], reference: dict, common: int) -> Dictionary:
    """The `common` commonest census first names and surnames and the records' own, with
    the census priors (the gate's default list, cut)."""
    own = {v for values in columns.values() for v in values} - {""}
    return census_dictionary(reference, kept=common, held=own)


def test_the_joint_attack_finds_what_the_bayes_decision_over_every_pair_does() -> None:
    agreement, columns, tensor = _release(2.0, 120)
    dictionary = _dictionary(columns, agreement.reference.columns, 60)
    rows = np.arange(len(tensor))
    gate = audit_rows(agreement, Released(rows, tensor), rows, columns, dictionary)
    census = synthetic.census_names()
    spare = [n for n in census.last.names[1000:2500] if n not in set(dictionary.names)]
    oracle = bayes_joint_reidentified(
        agreement,
        tensor,
        columns,
        "first",
        "last",
        "first+last",
        dictionary.names,
        dictionary.priors,
        spare,
        np.random.default_rng(3),
    )
    assert 0.05 < oracle < 0.95, "the noise must leave something to decide"
    assert gate.attack == "joint"
    assert gate.by_attack["joint"] >= oracle - 0.02
    # Reading the names together is worth more than reading them alone.
    assert gate.by_attack["joint"] > max(gate.by_attack["prior"], gate.by_attack["counts"]) + 0.05


def test_the_gate_stops_at_the_joint_attacker_when_it_exceeds_the_limit() -> None:
    agreement, columns, tensor = _release(1.0, 150)
    dictionary = _dictionary(columns, agreement.reference.columns, 300)
    rows = np.arange(len(tensor))
    released = Released(rows, tensor)
    whole = audit_rows(agreement, released, rows, columns, dictionary)
    limit = whole.by_attack["prior"]  # the per-attribute attackers stay within it
    assert whole.by_attack["joint"] > limit
    stopped = audit_rows(agreement, released, rows, columns, dictionary, stop_above=limit)
    assert list(stopped.by_attack) == ["joint"]
    assert stopped.record_reidentified == pytest.approx(whole.by_attack["joint"])


def test_only_a_combined_entry_the_joint_attacker_cannot_read_is_warned_of_or_unaudited() -> None:
    read, _, _ = _release(2.0, 10)
    assert combined_names(read) == []
    assert unaudited_attributes(read) == []
    raw, _, _ = _release(2.0, 10, release="distances")
    assert combined_names(raw) == ["first+last"]
    assert unaudited_attributes(raw) == ["first+last (text)"]
    exact, _, _ = _release(0.0, 10, release="distances")
    assert combined_names(exact) == []
