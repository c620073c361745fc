"""The attacker's dictionary as the custodian gives it: a first-name list and a surname list
with frequencies (`name,kind,weight`), as the census default is, or one flat list."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pprl.bench.european_registers import write_names
from pprl.party.storage.inputs import load_dictionary
from pprl.protocol.data.kinds import normalise_value
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.errors import InputError
from pprl.protocol.privacy.audit import ANY_NAME, FIRST_NAMES, SURNAMES

REFERENCE = ReferenceSet("reference.csv", {"first": ["ANNA", "JAN"], "last": ["NOWAK", "ROSSI"]})


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "names.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _prior(dictionary: object, prior: str, name: str) -> float:
    names = dictionary.names  # type: ignore[attr-defined]
    return float(np.exp(dictionary.priors[prior][names.index(name)]))  # type: ignore[attr-defined]


def test_two_lists_with_frequencies_give_each_its_own_prior(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "name,kind,weight\nAnna,first,3\nJan,first,1\nNowak,surname,1\nRossi,last,1\n"
        "Müller,surname,2\n",
    )
    dictionary = load_dictionary(path, REFERENCE)
    assert set(dictionary.priors) == {ANY_NAME, FIRST_NAMES, SURNAMES}
    # Within its list, names weigh as their weights; the other list gives them next to none.
    assert _prior(dictionary, FIRST_NAMES, "ANNA") == pytest.approx(
        3 * _prior(dictionary, FIRST_NAMES, "JAN")
    )
    assert _prior(dictionary, SURNAMES, "NOWAK") == pytest.approx(
        _prior(dictionary, SURNAMES, "ROSSI")
    )
    assert _prior(dictionary, SURNAMES, "ANNA") < _prior(dictionary, SURNAMES, "NOWAK") / 5
    # Read as the records are: the accent folded.
    assert _prior(dictionary, SURNAMES, "MULLER") == pytest.approx(
        2 * _prior(dictionary, SURNAMES, "NOWAK")
    )
    # Either list's names, half each, for an attribute that may hold either.
    assert _prior(dictionary, ANY_NAME, "ANNA") == pytest.approx(
        3 * _prior(dictionary, ANY_NAME, "NOWAK")
    )


def test_a_list_without_a_kind_column_is_one_list(tmp_path: Path) -> None:
    dictionary = load_dictionary(_write(tmp_path, "name\nAnna\nNowak\n"), REFERENCE)
    assert set(dictionary.priors) == {ANY_NAME}
    assert dictionary.names == ["ANNA", "NOWAK"]


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("name,kind\nAnna,first\nNowak,town\n", "kind", "first or surname"),
        ("name,kind,weight\nAnna,first,1\nNowak,surname,-1\n", "weight", ">= 0"),
        ("name,kind,weight\nNowak,surname,1\nAnna,first,often\n", "weight", ">= 0"),
    ],
)
def test_a_bad_row_is_named_by_row_and_field(
    tmp_path: Path, text: str, field: str, words: str
) -> None:
    with pytest.raises(InputError, match=words) as caught:
        load_dictionary(_write(tmp_path, text), REFERENCE)
    assert caught.value.row == 3 and caught.value.field == field


@pytest.mark.parametrize(
    "text", ["name,kind\nAnna,first\n", "name,kind,weight\nAnna,first,1\nNowak,surname,0\n"]
)
def test_both_lists_are_needed(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="first names and surnames"):
        load_dictionary(_write(tmp_path, text), REFERENCE)


def test_the_european_lists_are_written_in_that_form(tmp_path: Path) -> None:
    pytest.importorskip("faker")
    from faker import Faker

    dictionary = load_dictionary(write_names(tmp_path), REFERENCE)
    # Polish surnames come from faker's own draw (its lists' attributes do not hold them).
    polish = Faker("pl_PL")
    polish.seed_instance(5)
    surname = normalise_value("name", polish.last_name())
    assert surname in dictionary.names
    assert _prior(dictionary, SURNAMES, surname) > 10 * _prior(dictionary, FIRST_NAMES, surname)
    assert len(dictionary.names) > 10000


def test_the_dictionary_command_writes_a_list_the_gate_reads(tmp_path: Path, capsys) -> None:
    pytest.importorskip("faker")
    from pprl.cli import main

    out = tmp_path / "polish.csv"
    assert main(["dictionary", "--out", str(out), "--locales", "pl_PL"]) == 0
    dictionary = load_dictionary(out, REFERENCE)
    assert set(dictionary.priors) == {ANY_NAME, FIRST_NAMES, SURNAMES}
    assert "surnames:" in capsys.readouterr().out
    assert main(["dictionary", "--out", str(out), "--locales", "pl_PL,xx_XX"]) == 2
    assert "unknown locale(s) xx_XX" in capsys.readouterr().err
