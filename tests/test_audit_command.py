"""`pprl audit` as an operator runs it: a report per attribute and per record, raw and
defended, its exit status saying whether the gate would pass what the configuration sends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pprl.files.reference import load_reference
from pprl.party.local import Privacy, write_demo_data
from pprl.protocol.data.reference import DEFAULT_MAPPING
from pprl.protocol.privacy.noise import attack_success, sigma_for_success
from pprl.protocol.vectors.release import reference_statistics


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("audit")
    write_demo_data(directory, 80, 5, reference_rows=300)
    return directory


def _config(directory: Path, method: str = "", privacy: str = "") -> Path:
    path = directory / "party.toml"
    path.write_text(
        "\n".join(
            [
                'identity = "alice"',
                'listen = "127.0.0.1:1"',
                'state_dir = "state"',
                "[records]",
                'path = "alice.csv"',
                "[reference]",
                'path = "reference.csv"',
                "[method]",
                # The release the gate attacks; a file naming none gets sealed linkage.
                "" if "encoding" in method else 'encoding = "reference"',
                # The built-in data's error model (one edit a copy) unless the test names one.
                "" if "error_model" in method else 'error_model = "one-error"',
                method,
                "[privacy]",
                privacy,
                "[tls]",
                'cert = "a.pem"',
                'key = "a.key"',
                'ca = "ca.pem"',
                "[peer]",
                'identity = "bob"',
                'address = "127.0.0.1:2"',
                "[coordinator]",
                'identity = "coordinator"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def _audit(data: Path, config: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pprl", "audit", "--records", str(data / "alice.csv")]
    return subprocess.run(
        [*command, "--config", str(config), *extra], capture_output=True, text=True, timeout=300
    )


def _audit_report(
    data: Path, config: Path, name: str, *extra: str
) -> tuple[subprocess.CompletedProcess, dict]:
    """`pprl audit --json`, and the report it wrote."""
    out = data / f"{name}.json"
    result = _audit(data, config, "--json", str(out), *extra)
    return result, json.loads(out.read_text())


def test_raw_release_of_census_names_falls_entirely_and_fails_the_gate(data: Path) -> None:
    result, report = _audit_report(data, _config(data, "noise_sigma = 0"), "raw", "--seed", "1")
    assert result.returncode == 1
    assert "the daemon's privacy gate would refuse it" in result.stderr
    (raw,) = report["results"]
    assert raw["release"] == "raw" and raw["records"] == 80
    # Generated people carry census names: every value is in the dictionary, and without
    # noise its distance vector names it alone.
    for attribute in raw["attributes"].values():
        assert attribute["in_dictionary"] == 1.0
        assert attribute["exact"] == attribute["nearest"] == 1.0
        assert attribute["median_candidates"] == 1.0
    assert raw["record_exact"] == raw["record_reidentified"] == 1.0
    assert "raw       records" in result.stdout


def test_noise_defeats_exact_lookup_and_is_reported_beside_the_raw_release(data: Path) -> None:
    config = _config(data, "noise_sigma = 3", "max_reidentification = 1.0")
    result, report = _audit_report(data, config, "noisy", "--seed", "2", "--sample", "50")
    assert result.returncode == 0, result.stderr
    raw, defended = report["results"]
    assert (raw["release"], defended["release"]) == ("raw", "defended")
    assert defended["records"] == 50
    assert report["noise_sigma"] == 3.0
    assert report["noise_edits"] > 3  # sigma0 of names is more than one edit
    for attribute in defended["attributes"].values():
        assert attribute["exact"] == 0.0 and attribute["median_candidates"] == 0.0
    assert defended["record_reidentified"] < raw["record_reidentified"]
    assert "Gaussian mechanism epsilon" in result.stdout


def test_register_mappings_are_audited_on_their_name_entries(data: Path) -> None:
    """Register training maps derived entries (the combined names, initials): the raw audit
    attacks the plain name entries as the gate does, instead of failing on the others."""
    config = _config(data, 'error_model = "registers"\nnoise_sigma = 0')
    result, report = _audit_report(data, config, "registers", "--seed", "1")
    assert result.returncode == 1, result.stderr  # raw census names: over the default limit
    assert "Traceback" not in result.stderr
    (raw,) = report["results"]
    assert set(raw["attributes"]) == {"first", "middle", "last"}
    assert raw["record_reidentified"] == 1.0


def test_bad_sample_size_is_refused_with_a_message(data: Path) -> None:
    result = _audit(data, _config(data), "--sample", "0")
    assert result.returncode == 2
    assert "--sample must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_target_attack_success_sets_sigma_by_the_calibration(
    data: Path, trial_privacy: Privacy
) -> None:
    config = _config(data, "attack_success = 0.4", "max_reidentification = 1.0")
    # The sigma is set before any attack: the trial list (conftest) is enough for the rest.
    trial = ("--dictionary", str(trial_privacy.dictionary))
    result, report = _audit_report(data, config, "tau", "--seed", "3", "--sample", "20", *trial)
    assert result.returncode == 0, result.stderr
    ref = load_reference(data / "reference.csv")
    sigma0 = reference_statistics(ref.columns, DEFAULT_MAPPING).sigma0
    assert report["noise_sigma"] == pytest.approx(sigma_for_success(0.4, sigma0))
    assert attack_success(report["noise_sigma"], sigma0) == pytest.approx(0.4)
    assert "per-coordinate attack success tau 0.4000" in result.stdout


def test_a_target_below_the_calibration_floor_is_refused(data: Path) -> None:
    result = _audit(data, _config(data, "attack_success = 0.01"))
    assert result.returncode == 2
    assert "attack_success" in result.stderr and "no noise brings" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_dictionary_file_is_named_in_the_error(data: Path) -> None:
    missing = data / "no-such-names.csv"
    result = _audit(data, _config(data), "--dictionary", str(missing))
    assert result.returncode == 2
    assert str(missing) in result.stderr
    assert "Traceback" not in result.stderr


def test_a_dictionary_without_names_is_named_in_the_error(data: Path) -> None:
    empty = data / "empty-names.csv"
    empty.write_text('name\n""\n" "\n', encoding="utf-8")
    result = _audit(data, _config(data), "--dictionary", str(empty))
    assert result.returncode == 2
    assert str(empty) in result.stderr and "holds no names" in result.stderr
    assert "Traceback" not in result.stderr


def test_automatic_noise_is_chosen_as_agree_would_and_its_release_passes(
    data: Path, trial_privacy: Privacy
) -> None:
    # With the trial list (conftest), as the other choosing tests: the census lists took 30 s.
    trial = ("--dictionary", str(trial_privacy.dictionary))
    result, report = _audit_report(
        data, _config(data), "auto", "--seed", "3", "--sample", "60", *trial
    )
    assert result.returncode == 0, result.stderr
    raw, defended = report["results"]
    assert raw["record_reidentified"] > 0.10 >= defended["record_reidentified"]
    assert report["noise_sigma"] > 0 and report["release"] == "projected"
    assert f"sigma {report['noise_sigma']:g} re-identified" in report["noise_choice"]
    assert "noise chosen automatically" in result.stdout


def test_a_list_of_people_adds_the_attacker_who_combines_attributes(
    data: Path, trial_privacy: Privacy
) -> None:
    config = _config(data, "noise_sigma = 2", "max_reidentification = 1.0")
    people = data / "alice.csv"  # the peer's list holds every one of the party's people
    # The name attackers beside it attack with the trial list (conftest): what is checked is
    # that the fourth attacker joins them, not their figures (on the census lists it took
    # ten times as long).
    trial = ("--dictionary", str(trial_privacy.dictionary))
    result, report = _audit_report(
        data, config, "population", "--seed", "4", "--sample", "60", "--population", str(people),
        *trial,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert report["population"] == str(people) and report["population_people"] == 80
    defended = report["results"][-1]
    assert set(defended["by_attack"]) == {"population", "uniform", "prior", "counts"}
    assert defended["record_reidentified"] == max(defended["by_attack"].values())
    assert "a fourth attacker (population)" in result.stdout
    _, without = _audit_report(
        data, config, "no-population", "--seed", "4", "--sample", "60", *trial
    )
    assert without["population"] == "" and "population" not in without["results"][-1]["by_attack"]


def test_a_list_of_people_without_a_name_column_is_named_in_the_error(data: Path) -> None:
    people = data / "people-without-middle.csv"
    people.write_text("first,last\nANN,LEE\n", encoding="utf-8")
    config = _config(data, "noise_sigma = 2")
    result = _audit(data, config, "--population", str(people))
    assert result.returncode == 2
    assert str(people) in result.stderr and "no column middle" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bloom_release_is_attacked_with_the_key_the_peer_holds(data: Path) -> None:
    key = data / "bloom.key"
    key.write_text("ab" * 32 + "\n", encoding="ascii")
    config = _config(data, 'encoding = "bloom"', f'bloom_key = "{key}"')
    result, report = _audit_report(data, config, "bloom", "--seed", "1")
    assert result.returncode == 1  # the default gate of 10% would refuse it
    (bloom,) = report["results"]
    assert bloom["release"] == "bloom" and bloom["attack"] == "bloom-dictionary"
    assert set(bloom["attributes"]) == {"first", "middle", "last"}
    for attribute in bloom["attributes"].values():
        assert attribute["exact"] == attribute["nearest"] == 1.0
    assert bloom["record_reidentified"] == 1.0
    assert "Bloom filters of 1024 bits" in result.stdout
