"""`pprl demo --date-format-b`: Bob's file writes its dates its own way, as two registers do;
his configuration reads them so, and Alice's keeps the schema's format."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("faker")

from pprl.bench import european_registers as eu
from pprl.party.config import load_config
from pprl.party.local import check_inputs, load_schema, prepare
from pprl.party.storage.inputs import load_inputs
from pprl.protocol.errors import PprlError

SCHEMA = Path(__file__).resolve().parents[1] / "benchmarks" / "european" / "schema.toml"


def _deploy(tmp_path: Path, date_formats: dict[str, dict[str, str]] | None):
    data = tmp_path / "data"
    eu.write(eu.generate(300, 0.8, seed=2), data)
    reference = eu.write_reference(data, rows=200)
    records = {"alice": data / "records_a.csv", "bob": data / "records_b.csv"}
    return prepare(
        tmp_path / "work", records, reference, schema=load_schema(SCHEMA), date_formats=date_formats
    )


def test_bob_reads_his_dates_in_his_own_format(tmp_path: Path) -> None:
    deployment = _deploy(tmp_path, {"bob": {"date_of_birth": eu.DATE_FORMATS["b"]}})
    check_inputs(deployment)  # what AGREE would refuse, found before any daemon starts
    unreadable = {}
    for name, setup in deployment.parties.items():
        config = load_config(setup.config)
        unreadable[name] = load_inputs(config).records.unreadable.get("date_of_birth", 0)
    assert unreadable == {"alice": 0, "bob": 0}
    alice_toml = deployment.parties["alice"].config.read_text()
    assert eu.DATE_FORMATS["b"] not in alice_toml


def test_without_it_every_date_of_bobs_is_unreadable_and_counted(tmp_path: Path) -> None:
    deployment = _deploy(tmp_path, None)
    config = load_config(deployment.parties["bob"].config)
    records = load_inputs(config).records
    written = sum(1 for row in eu.generate(300, 0.8, seed=2).bob if row["date_of_birth"])
    assert records.unreadable["date_of_birth"] == written  # each one, counted as missing


def test_a_date_format_without_its_attribute_is_a_usage_error(capsys) -> None:
    from pprl.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["demo", "--date-format-b", "%d.%m.%Y"])
    assert exited.value.code == 2
    assert "expected ATTRIBUTE=FORMAT" in capsys.readouterr().err


def test_a_format_that_loses_the_day_is_refused_naming_bobs_file(tmp_path: Path) -> None:
    deployment = _deploy(tmp_path, {"bob": {"date_of_birth": "%m.%Y"}})
    with pytest.raises(PprlError) as refused:
        check_inputs(deployment)
    assert "bob.toml" in str(refused.value)
    assert "date_formats.date_of_birth" in str(refused.value)
    assert "must give day, month and year" in str(refused.value)
