"""Inputs that once passed AGREE and failed later (or linked nothing and exited 0) are now
refused at AGREE, naming the file, row and field; configuration typos are refused too."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from pprl.party.config import attribute_kinds, attribute_scales, load_config
from pprl.party.local import generated_deployment
from pprl.party.storage.inputs import load_inputs
from pprl.protocol.agreement import Agreement
from pprl.protocol.errors import InputError
from pprl.protocol.model.training import MIN_TRAINING_RECORDS


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    return generated_deployment(tmp_path_factory.mktemp("degenerate"), 40, 3, reference_rows=60)


@pytest.fixture
def config(deployment):
    return load_config(deployment.parties["alice"].config)


def _agree_inputs(config) -> Agreement:
    """What AGREE reads and checks before anything is smashed."""
    inputs = load_inputs(config)
    return Agreement(
        inputs.reference,
        config.mapping,
        config.method,
        attribute_kinds(config),
        attribute_scales(config),
    )


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_the_fixture_agrees(config) -> None:
    _agree_inputs(config)


@pytest.mark.parametrize("rows", [1, 2, MIN_TRAINING_RECORDS - 1])
def test_too_few_records_to_train_are_refused_at_agree(config, tmp_path, rows) -> None:
    records = [[f"A{i}", f"ANNA{i}", "", f"SMITH{i}"] for i in range(rows)]
    path = _write(tmp_path / "few.csv", ["id", "first", "middle", "last"], records)
    with pytest.raises(InputError, match=f"holds {rows} record") as caught:
        _agree_inputs(dataclasses.replace(config, records_path=path))
    assert caught.value.path == str(path)


def test_the_fewest_records_allowed_are_enough_to_train(config, tmp_path) -> None:
    from pprl.protocol import pipeline
    from pprl.protocol.vectors.randomness import Randomness

    records = [[f"A{i}", n, "", s] for i, (n, s) in enumerate(_NAMES[:MIN_TRAINING_RECORDS])]
    path = _write(tmp_path / "least.csv", ["id", "first", "middle", "last"], records)
    small = dataclasses.replace(config, records_path=path)
    agreement = _agree_inputs(small)
    inputs = load_inputs(small)
    model, pairs = pipeline.train(agreement, inputs.records.attributes, Randomness(1, "alice"))
    assert pairs == MIN_TRAINING_RECORDS * (1 + config.method.negatives_per_positive)
    assert model.kind == "linear"


_NAMES = [
    ("ANNA", "SMITH"),
    ("JOHN", "BROWN"),
    ("MARY", "JONES"),
    ("PETER", "MILLER"),
    ("SUSAN", "DAVIS"),
    ("KAREN", "WILSON"),
    ("DAVID", "MOORE"),
    ("LINDA", "TAYLOR"),
    ("JAMES", "THOMAS"),
    ("NANCY", "WHITE"),
    ("PAUL", "HARRIS"),
]


@pytest.mark.parametrize("rows", [["ANNA", "SMITH"]], ids=["one row"])
def test_a_one_row_reference_set_is_refused_naming_the_column(config, tmp_path, rows) -> None:
    path = _write(tmp_path / "ref.csv", ["first", "last"], [rows])
    with pytest.raises(InputError, match="1 distinct value") as caught:
        _agree_inputs(dataclasses.replace(config, reference_path=path))
    assert caught.value.path == str(path) and caught.value.field in {"first", "last"}


def test_a_reference_set_of_identical_rows_is_refused(config, tmp_path) -> None:
    path = _write(tmp_path / "same.csv", ["first", "last"], [["ANNA", "SMITH"]] * 1000)
    with pytest.raises(InputError, match="needs at least 10 to tell records apart"):
        _agree_inputs(dataclasses.replace(config, reference_path=path))


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b"])
def test_control_characters_in_a_name_are_refused_with_row_and_field(config, tmp_path, char):
    records = [[f"A{i}", n, "", s] for i, (n, s) in enumerate(_NAMES)]
    records[3][3] = f"MIL{char}LER"
    path = _write(tmp_path / "nul.csv", ["id", "first", "middle", "last"], records)
    with pytest.raises(InputError, match=f"control character U\\+{ord(char):04X}") as caught:
        load_inputs(dataclasses.replace(config, records_path=path))
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), 5, "last")


def test_tabs_inside_a_value_are_spacing_not_damage(config, tmp_path) -> None:
    records = [[f"A{i}", n, "", s] for i, (n, s) in enumerate(_NAMES)]
    records[0][1] = "ANNA\tMARIE"
    path = _write(tmp_path / "tab.csv", ["id", "first", "middle", "last"], records)
    inputs = load_inputs(dataclasses.replace(config, records_path=path))
    assert inputs.records.attributes["first"][0] == "ANNA MARIE"


@pytest.mark.parametrize(
    ("table", "typo", "meant"),
    [
        ("privacy", "max_reidentifcation = 0.01", "max_reidentification"),
        ("method", 'clasifier = "rbf"', "classifier"),
    ],
)
def test_misspelt_keys_are_refused_not_ignored(deployment, tmp_path, table, typo, meant):
    text = deployment.parties["alice"].config.read_text()
    text = (
        text.replace(f"[{table}]\n", f"[{table}]\n{typo}\n")
        if f"[{table}]\n" in text
        else (text + f"\n[{table}]\n{typo}\n")
    )
    path = tmp_path / "typo.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=f"did you mean '{meant}'") as caught:
        load_config(path)
    assert caught.value.path == str(path)


def test_a_configuration_with_a_byte_order_mark_loads(deployment, tmp_path) -> None:
    text = deployment.parties["alice"].config.read_text()
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_config(path).identity == "alice"
