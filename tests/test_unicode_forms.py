"""How an accent was typed never counts: values in NFC, NFD or with invisible formatting
characters smash to the same vectors (registers exported by different systems differ so)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

from pprl.files.records import load_records
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.kinds import normalise_value
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.method import method_params

NAMES = ["José", "Müller", "Łukasz", "Françoise", "Ørsted", "Ana-María"]


@pytest.mark.parametrize("kind", ["name", "text"])
def test_composed_decomposed_and_invisible_characters_read_alike(kind: str) -> None:
    for name in NAMES:
        composed = normalise_value(kind, unicodedata.normalize("NFC", name))
        assert normalise_value(kind, unicodedata.normalize("NFD", name)) == composed
        assert normalise_value(kind, name[:2] + "\u200b" + name[2:]) == composed
        assert normalise_value(kind, "\ufeff" + name) == composed


def test_a_register_in_nfd_smashes_as_one_in_nfc(tmp_path) -> None:
    header = "id,first,middle,last\n"
    rows = [f"{i},{n},,{m}" for i, (n, m) in enumerate(zip(NAMES, reversed(NAMES), strict=True))]
    for form in ("NFC", "NFD"):
        text = unicodedata.normalize(form, header + "\n".join(rows) + "\n")
        (tmp_path / f"{form}.csv").write_text(text, encoding="utf-8")
    nfc = load_records(tmp_path / "NFC.csv")
    nfd = load_records(tmp_path / "NFD.csv")
    assert nfc.attributes == nfd.attributes
    reference = ReferenceSet("built-in", synthetic.default_reference(200))
    agreement = Agreement(reference, DEFAULT_MAPPING, method_params())
    rng = np.random.default_rng(0)
    assert np.array_equal(
        agreement.smash(nfc.attributes, rng), agreement.smash(nfd.attributes, rng)
    )


def test_a_name_column_of_the_reference_set_is_folded_as_the_records_are() -> None:
    """MÜLLER in the reference set is MULLER, as in the records: otherwise a register's Müller
    would sit one edit from the very reference value it equals."""
    columns = synthetic.default_reference(200)
    columns = {name: ["MÜLLER-SCHMIDT", *values[1:]] for name, values in columns.items()}
    agreement = Agreement(ReferenceSet("listed", columns), DEFAULT_MAPPING, method_params())
    assert agreement.reference.columns["first"][0] == "MULLER SCHMIDT"
    assert agreement.reference.columns["last"][0] == "MULLER SCHMIDT"
