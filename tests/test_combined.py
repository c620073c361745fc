"""Combined entries ("first+middle+last"): the sorted words of several attributes, so names
written in each other's field still agree on one entry."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.combined import base_names, combined_kinds, combined_values, with_combined
from pprl.protocol.data.reference import ReferenceSet, reference_overlap, validate_mapping
from pprl.protocol.errors import InputError
from pprl.protocol.gate import audit_rows, unaudited_attributes
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.own_training import training_sample
from pprl.protocol.privacy.audit import Dictionary
from pprl.protocol.release_attacks import attacked_entries

MAPPING = [("first", "first"), ("last", "last"), ("first+middle+last", "first+last")]


def test_combined_values_ignore_field_order_and_blanks() -> None:
    columns = {
        "first": ["ANNA", "SMITH", "", ""],
        "middle": ["", "MAY", "", "JO"],
        "last": ["SMITH", "ANNA", "", ""],
    }
    assert combined_values(columns, "first+middle+last") == [
        "ANNA SMITH",
        "ANNA MAY SMITH",
        "",
        "JO",
    ]
    assert combined_values(columns, "last+first") == ["ANNA SMITH", "ANNA SMITH", "", ""]
    assert set(with_combined(columns, ["first", "first+last"])) == {
        "first",
        "middle",
        "last",
        "first+last",
    }
    assert base_names(["first", "first+middle+last", "last"]) == ["first", "middle", "last"]


def test_only_words_can_be_combined() -> None:
    kinds = combined_kinds(MAPPING, {"first": "name", "last": "text"})
    assert kinds == {"first": "name", "last": "text", "first+middle+last": "text"}
    with pytest.raises(InputError, match="'dob' of kind 'date'"):
        combined_kinds([("first+dob", "first+dob")], {"dob": "date"})


def _reference() -> ReferenceSet:
    columns = {
        "first": [
            "ERIK",
            "CONNIE",
            "FRANCES",
            "JOHN",
            "MARY",
            "PAUL",
            "OLGA",
            "IVAN",
            "RUTH",
            "HUGO",
        ],
        "last": [
            "ROSEN",
            "GARDNER",
            "BOYD",
            "SMITH",
            "JONES",
            "ANNA",
            "PIKE",
            "HALE",
            "MOSS",
            "REED",
        ],
    }
    return ReferenceSet("ref.csv", columns)


def test_mapping_checks_every_part() -> None:
    attributes = ["first", "middle", "last"]
    validate_mapping(MAPPING, attributes, _reference())
    with pytest.raises(InputError, match="not configured"):
        validate_mapping([("first+suffix", "first+last")], attributes, _reference())
    with pytest.raises(InputError, match="lacks"):
        validate_mapping([("first+last", "first+town")], attributes, _reference())
    # The combined entry's overlap counts combined values the combined column holds.
    records = {"first": ["PAUL", "JOHN"], "middle": ["", ""], "last": ["ANNA", "DOE"]}
    overlap = reference_overlap(records, _reference(), MAPPING)
    assert overlap == {"first->first": 2, "last->last": 1, "first+middle+last->first+last": 1}


def test_swapped_fields_agree_exactly_on_the_combined_entry() -> None:
    agreement = Agreement(_reference(), MAPPING, method_params(), None)
    assert agreement.reference.columns["first+last"][5] == "ANNA PAUL"
    records = {
        "first": ["ANNA", "SMITH", "ANNA", ""],
        "middle": ["", "", "", ""],
        "last": ["SMITH", "ANNA", "SMYTH", ""],
    }
    tensor = agreement.smash(records, None)
    assert tensor.shape == (4, 3, 10)
    combined = tensor[:, 2, :]
    np.testing.assert_array_equal(combined[0], combined[1])  # swapped: the same vector
    assert not np.array_equal(tensor[0, 0], tensor[1, 0])  # ...while first differs
    assert not np.array_equal(combined[0], combined[2])  # a typo still shows
    assert (tensor[3] == MISSING_CODE).all()  # nothing at all: missing everywhere
    # Training corrupts the plain attributes, then derives the combined value again.
    sample = training_sample(agreement, records, np.random.default_rng(0), size=3)
    assert set(sample.corrupted) == {"first", "middle", "last"}
    assert sample.corrupted_tensor.shape[1] == 3


INITIAL_MAPPING = [("first", "first"), ("middle", "first"), ("middle:initial", "first")]


def test_an_initial_entry_holds_the_first_letter_and_keeps_its_kind() -> None:
    columns = {"middle": ["JOHN", "J", "", "MARY"]}
    assert combined_values(columns, "middle:initial") == ["J", "J", "", "M"]
    assert base_names(["first", "middle:initial"]) == ["first", "middle"]
    kinds = combined_kinds(INITIAL_MAPPING, {"middle": "text"})
    assert kinds["middle:initial"] == "text"
    with pytest.raises(InputError, match="takes the initial of 'dob' of kind 'date'"):
        combined_kinds([("dob:initial", "dob")], {"dob": "date"})
    with pytest.raises(InputError, match="not configured"):
        validate_mapping([("suffix:initial", "first")], ["first", "middle"], _reference())


def test_the_initial_tells_a_cut_middle_name_from_another_one() -> None:
    """JOHN against J is one person's middle name cut to its initial; against MARY it is a
    namesake. The full middle names' vectors differ in both cases, the initials' only in the
    second; a missing middle name is missing on the initial entry too."""
    agreement = Agreement(_reference(), INITIAL_MAPPING, method_params(), None)
    records = {"first": ["ANNA"] * 4, "middle": ["JOHN", "J", "MARY", ""]}
    tensor = agreement.smash(records, None)
    assert tensor.shape == (4, 3, 10)
    assert not np.array_equal(tensor[0, 1], tensor[1, 1])
    np.testing.assert_array_equal(tensor[0, 2], tensor[1, 2])
    assert not np.array_equal(tensor[0, 2], tensor[2, 2])
    assert (tensor[3, 1:] == MISSING_CODE).all()
    # Training corrupts the middle name, then takes the initial of what it became.
    sample = training_sample(agreement, records, np.random.default_rng(0), size=4)
    assert set(sample.corrupted) == {"first", "middle"}
    assert sample.corrupted_tensor.shape[1] == 3


def test_the_gate_does_not_attack_an_initial_and_says_so() -> None:
    agreement = Agreement(_reference(), INITIAL_MAPPING, method_params(), None)
    assert attacked_entries(agreement) == [0, 1]
    assert unaudited_attributes(agreement) == ["middle:initial (initial, readable)"]


PART_MAPPING = [("first", "first"), ("last", "last"), ("last:first-part", "last")]


def test_a_first_part_entry_keeps_a_compound_surnames_first_part() -> None:
    columns = {"last": ["GARCIA LOPEZ", "MULLER SCHMIDT", "VAN DER BERG KOOL", "SMITH", ""]}
    parts_kept = combined_values(columns, "last:first-part")
    assert parts_kept == ["GARCIA", "MULLER", "VAN DER BERG", "SMITH", ""]
    assert base_names(["first", "last:first-part"]) == ["first", "last"]
    assert combined_kinds(PART_MAPPING, {})["last:first-part"] == "name"
    with pytest.raises(InputError, match="takes the first part of 'dob' of kind 'date'"):
        combined_kinds([("dob:first-part", "dob")], {"dob": "date"})
    validate_mapping(PART_MAPPING, ["first", "last"], _reference())
    with pytest.raises(InputError, match="not configured"):
        validate_mapping([("surname:first-part", "last")], ["first", "last"], _reference())


def test_a_surname_cut_to_its_first_part_agrees_on_that_entry_and_the_gate_attacks_it() -> None:
    agreement = Agreement(_reference(), PART_MAPPING, method_params(), None)
    records = {"first": ["ANNA"] * 3, "last": ["SMITH PAUL", "SMITH", "PAUL"]}
    tensor = agreement.smash(records, None)
    assert not np.array_equal(tensor[0, 1], tensor[1, 1])  # the whole surnames differ
    np.testing.assert_array_equal(tensor[0, 2], tensor[1, 2])  # their first parts agree
    assert not np.array_equal(tensor[0, 2], tensor[2, 2])
    # A surname's part is a surname: the name-dictionary attack judges it.
    assert attacked_entries(agreement) == [0, 1, 2]
    assert unaudited_attributes(agreement) == []


def test_the_gate_counts_a_first_part_as_a_second_look_at_the_surname() -> None:
    """For a surname of one part the first-part entry repeats the surname's distances with
    noise of its own: the attacker who reads both recovers more surnames than from the
    surname alone, and the gate, which groups the entries by the attribute they show, says
    so instead of judging the part as an attribute of its own."""
    reference = ReferenceSet("built-in", synthetic.default_reference(300))
    people = synthetic.generate(120, 3).alice
    columns = {name: [getattr(p, name) for p in people] for name in ("first", "last")}
    census = synthetic.census_names()
    names = [*census.first.names[:1500], *census.last.names[:3000], *columns["first"]]
    dictionary = Dictionary([*names, *columns["last"]], reference.columns)
    recovered = {}
    for mapping in (PART_MAPPING[:2], PART_MAPPING):
        agreement = Agreement(reference, mapping, method_params(noise_sigma=2.0), None)
        tensor = agreement.smash(columns, np.random.default_rng(1))
        rows = np.arange(len(people))
        report = audit_rows(agreement, Released(rows, tensor), rows, columns, dictionary)
        assert [a.attribute for a in report.attributes] == ["first", "last"]
        recovered[len(mapping)] = report.attributes[1].recovered
    assert recovered[3] > recovered[2] + 0.1


def test_a_combined_entry_the_joint_attacker_cannot_read_is_named_in_a_warning() -> None:
    """The gate's joint attacker reads a combined entry of names in the projected release
    (tests/test_joint_attack.py); released as raw distances with noise it does not, and the
    gate's words say its figure understates (docs/research/privacy.md)."""
    from pprl.party.phases.words import gate_words
    from pprl.protocol.gate import combined_names
    from pprl.protocol.privacy.audit import AuditReport

    raw = method_params(noise_sigma=1.0, release="distances")
    agreement = Agreement(_reference(), MAPPING, raw, None)
    assert combined_names(agreement) == ["first+middle+last"]
    plain = Agreement(_reference(), MAPPING[:2], raw, None)
    assert combined_names(plain) == []
    # Read when every part has entries of its own, projected; a part it shows alone
    # (middle, here) leaves it unread.
    projected = method_params(noise_sigma=1.0)
    assert combined_names(Agreement(_reference(), MAPPING, projected, None)) == [MAPPING[2][0]]
    every_part = [*MAPPING, ("middle", "first")]
    assert combined_names(Agreement(_reference(), every_part, projected, None)) == []
    report = AuditReport(10, [], 0.0, 0.05, 0.1)
    warned = gate_words(report, "every-name", 10, [], combined_names(agreement))
    assert "WARNING: first+middle+last is a further noisy look at names" in warned
    assert "leave combined entries out of [reference] mapping" in warned
    assert "WARNING" not in gate_words(report, "every-name", 10, [], combined_names(plain))
