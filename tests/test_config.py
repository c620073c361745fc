"""A party's TOML file: paths resolved beside it, defaults filled in, every error located."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pprl.party.config import (
    DEFAULT_PEER_TIMEOUT,
    PartyConfig,
    PeerEndpoint,
    TlsFiles,
    _Section,
    attribute_scales,
    load_config,
    records_schema,
)
from pprl.party.local import Privacy, prepare
from pprl.protocol.data.kinds import Attribute
from pprl.protocol.data.reference import DEFAULT_MAPPING, REGISTER_MAPPING
from pprl.protocol.errors import InputError
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import RAW_JOINS

# The default recipes end with the first and last names' first letters and the two names one
# edit apart (docs/research/sealed.md).
NEIGHBOURS = (
    "first:prefix+last:prefix,first:neighbours+last:soundex,first:soundex+last:neighbours,"
    "middle:soundex+last:neighbours"
)

ROOT = Path(__file__).resolve().parent.parent


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(value)


def toml(data: dict[str, Any]) -> str:
    lines = [f"{k} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for name, table in data.items():
        if isinstance(table, dict):
            lines.append(f"[{name}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


# The reference release: the tests of its noise, gate and features name it, since a file that
# names no encoding gets sealed linkage.
REFERENCE = {"encoding": "reference"}


def minimal() -> dict[str, Any]:
    return {
        "identity": "alice",
        "listen": "0.0.0.0:50051",
        "state_dir": "state",
        "records": {"path": "data/alice.csv"},
        "reference": {"path": "data/reference.csv"},
        "tls": {"cert": "certs/alice.pem", "key": "certs/alice.key", "ca": "certs/ca.pem"},
        "peer": {"identity": "bob", "address": "bob.example:50052"},
        "coordinator": {"identity": "coordinator"},
    }


def write(directory: Path, data: dict[str, Any] | str, name: str = "alice.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(data if isinstance(data, str) else toml(data), encoding="utf-8")
    return path


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_config(path)
    return caught.value


def assert_located(error: InputError, path: Path, key: str | None) -> None:
    assert error.path == str(path)
    assert str(path) in str(error)
    if key is not None:
        assert error.field == key
        assert f"field {key!r}" in str(error)


# --- valid files ----------------------------------------------------------------------------


def test_full_config(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    data = minimal()
    data["records"] |= {"id_column": "voter_id", "attributes": ["given", "surname"]}
    data["reference"]["mapping"] = [["given", "first"], ["surname", "last"]]
    data["reference"]["path"] = "../shared/reference.csv"
    data["tls"]["ca"] = "/etc/pprl/ca.pem"
    data["method"] = {
        "classifier": "rbf",
        "c": 0.5,
        "training_records": 2000,
        "negatives_per_positive": 3,
        "noise_sigma": 0,
        **REFERENCE,
    }
    data["wire_log"] = {"path": "logs/alice.wire.log"}
    path = write(conf, data)
    config = load_config(path)
    base = conf.resolve()
    assert config == PartyConfig(
        identity="alice",
        listen="0.0.0.0:50051",
        state_dir=base / "state",
        records_path=base / "data" / "alice.csv",
        id_column="voter_id",
        attributes=("given", "surname"),
        reference_path=tmp_path.resolve() / "shared" / "reference.csv",
        mapping=(("given", "first"), ("surname", "last")),
        tls=TlsFiles(
            cert=base / "certs" / "alice.pem",
            key=base / "certs" / "alice.key",
            ca=Path("/etc/pprl/ca.pem"),
        ),
        peers=(PeerEndpoint("bob", "bob.example:50052"),),
        coordinator_identity="coordinator",
        # Its own attributes: a register's records, so the register error model's defaults.
        method=method_params(
            classifier="rbf",
            c=0.5,
            training_records=2000,
            negatives_per_positive=3,
            error_model="registers",
            **REFERENCE,
        ),
        registers_by_default=True,
        wire_log=base / "logs" / "alice.wire.log",
        schema=(Attribute("given"), Attribute("surname")),
        source=str(path),
    )


def test_relative_paths_are_resolved_against_the_config_directory_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "etc" / "pprl", minimal())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(path)
    base = (tmp_path / "etc" / "pprl").resolve()
    assert config.state_dir == base / "state"
    assert config.records_path == base / "data" / "alice.csv"
    assert config.tls.ca == base / "certs" / "ca.pem"
    assert all(p.is_absolute() for p in (config.state_dir, config.reference_path, config.tls.key))


def test_defaults_when_optional_keys_are_omitted(tmp_path: Path) -> None:
    """With the built-in data's error model named (one edit a copy), the rest left out."""
    config = load_config(write(tmp_path, minimal() | {"method": {"error_model": "one-error"}}))
    assert config.id_column == "id"
    assert config.attributes == ("first", "middle", "last")
    assert config.mapping == DEFAULT_MAPPING
    # Sealed linkage: no noise, the projected vectors it scores under encryption, the hidden
    # join (names alone), and the Soundex codes of every two names as blocking keys.
    # Blanks agree in the first and last names' codes.
    marked = "first:soundex+middle:soundex,=first:soundex+last:soundex,middle:soundex+last:soundex"
    assert config.method == MethodParams(
        feature=RAW_JOINS,
        release="projected",
        encoding="sealed",
        sealed_keys=marked + "," + NEIGHBOURS,
        sealed_join="hidden",
    )
    assert not config.auto_noise
    assert config.method.classifier == "linear"
    assert config.method.c == 100.0
    assert config.method.training_records == 5000
    assert config.method.negatives_per_positive == 4
    assert config.method.class_weight == "balanced"
    assert config.method.top_k == 10
    assert config.wire_log is None


def test_rbf_defaults_to_a_small_c(tmp_path: Path) -> None:
    data = minimal() | {"method": {**REFERENCE, "classifier": "rbf"}}
    method = load_config(write(tmp_path, data)).method
    assert method.classifier == "rbf"
    assert method.c == 0.01
    assert method.training_records == 5000


def test_explicit_c_and_integer_c(tmp_path: Path) -> None:
    data = minimal() | {"method": {"classifier": "linear", "c": 10}}
    method = load_config(write(tmp_path, data)).method
    assert method.c == 10.0
    assert isinstance(method.c, float)


def test_an_empty_wire_log_table_means_no_wire_log(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, minimal() | {"wire_log": {}}))
    assert config.wire_log is None


def test_the_old_audit_table_says_the_wire_log_is_now_its_own_table(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"audit": {"wire_log": "logs/alice.wire.log"}})
    error = load_error(path)
    assert_located(error, path, "audit")
    expected = (
        '[audit] wire_log is now [wire_log] path: write [wire_log] path = "logs/alice.wire.log"'
    )
    assert error.message == expected
    path = write(tmp_path, minimal() | {"audit": {}})
    assert load_error(path).message.endswith('write [wire_log] path = "wire.log"')


@pytest.mark.parametrize("listen", ["127.0.0.1:1", "[::1]:65535", "party-a.internal:50051"])
def test_valid_listen_addresses(tmp_path: Path, listen: str) -> None:
    assert load_config(write(tmp_path, minimal() | {"listen": listen})).listen == listen


# --- errors ---------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    error = load_error(path)
    assert_located(error, path, None)
    assert "not found" in str(error)


def test_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path, 'identity = "alice"\nlisten = \n')
    error = load_error(path)
    assert_located(error, path, None)
    assert "not a valid TOML file" in str(error)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('identity = "alïce"\n'.encode("latin-1"))
    assert_located(load_error(path), path, None)


@pytest.mark.parametrize("table", ["records", "reference", "tls", "peer", "coordinator"])
def test_missing_table(tmp_path: Path, table: str) -> None:
    data = minimal()
    del data[table]
    path = write(tmp_path, data)
    error = load_error(path)
    assert_located(error, path, table)
    assert "missing table" in str(error)


def test_a_table_that_is_not_a_table(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"method": "rbf"})
    error = load_error(path)
    assert_located(error, path, "method")
    assert "must be a table" in str(error)


@pytest.mark.parametrize(
    "key",
    [
        "identity",
        "listen",
        "state_dir",
        "records.path",
        "reference.path",
        "tls.cert",
        "tls.key",
        "tls.ca",
        "peer.identity",
        "peer.address",
        "coordinator.identity",
    ],
)
def test_missing_key(tmp_path: Path, key: str) -> None:
    data = minimal()
    *table, name = key.split(".")
    del (data[table[0]] if table else data)[name]
    path = write(tmp_path, data)
    error = load_error(path)
    assert_located(error, path, key)
    assert "missing key" in str(error)


@pytest.mark.parametrize("value", ["", "   ", 42, ["alice"]])
def test_a_key_that_is_not_a_non_empty_string(tmp_path: Path, value: Any) -> None:
    path = write(tmp_path, minimal() | {"identity": value})
    error = load_error(path)
    assert_located(error, path, "identity")
    assert "non-empty string" in str(error)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "localhost",
        ":50051",
        "127.0.0.1:",
        "127.0.0.1:0",
        "127.0.0.1:70000",
        "127.0.0.1:65536",
        "127.0.0.1:-1",
        "127.0.0.1:http",
    ],
)
def test_bad_listen_address(tmp_path: Path, address: str) -> None:
    path = write(tmp_path, minimal() | {"listen": address})
    error = load_error(path)
    assert_located(error, path, "listen")
    assert repr(address) in str(error)


@pytest.mark.parametrize("address", ["bob.example", "bob.example:0", "bob.example:70000"])
def test_bad_peer_address(tmp_path: Path, address: str) -> None:
    data = minimal()
    data["peer"]["address"] = address
    path = write(tmp_path, data)
    assert_located(load_error(path), path, "peer.address")


@pytest.mark.parametrize("classifier", ["svm", "Linear", "RBF", ""])
def test_invalid_classifier(tmp_path: Path, classifier: str) -> None:
    path = write(tmp_path, minimal() | {"method": {"classifier": classifier}})
    assert_located(load_error(path), path, "method.classifier")


@pytest.mark.parametrize(
    "mapping",
    [
        [],
        "first",
        [["first"]],
        [["first", "first", "last"]],
        [["first", 1]],
        ["first", "last"],
        [["first", "first"], ["last"]],
    ],
    ids=["empty", "string", "single", "triple", "number", "flat", "one-bad-entry"],
)
def test_mapping_of_wrong_shape(tmp_path: Path, mapping: Any) -> None:
    data = minimal()
    data["reference"]["mapping"] = mapping
    path = write(tmp_path, data)
    error = load_error(path)
    assert_located(error, path, "reference.mapping")
    assert "pairs" in str(error)


@pytest.mark.parametrize("attributes", [[], "first", ["first", 2]])
def test_attributes_must_be_a_non_empty_list_of_strings(tmp_path: Path, attributes: Any) -> None:
    data = minimal()
    data["records"]["attributes"] = attributes
    path = write(tmp_path, data)
    assert_located(load_error(path), path, "records.attributes")


@pytest.mark.parametrize("value", [0, -5, -0.5, True, "5000"])
def test_non_positive_training_records(tmp_path: Path, value: Any) -> None:
    path = write(tmp_path, minimal() | {"method": {"training_records": value}})
    error = load_error(path)
    assert_located(error, path, "method.training_records")
    assert "positive whole number" in str(error)


@pytest.mark.parametrize("value", [0, -2, True, "2", float("inf")])
def test_a_peer_records_ratio_must_be_a_positive_number(tmp_path: Path, value: Any) -> None:
    path = write(tmp_path, minimal() | {"limits": {"peer_records_ratio": value}})
    error = load_error(path)
    assert_located(error, path, "limits.peer_records_ratio")
    assert "positive number" in str(error)


def test_the_peers_accepted_records_follow_the_ratio_within_the_memory_limit(
    tmp_path: Path,
) -> None:
    config = load_config(write(tmp_path, minimal() | {"limits": {"max_peer_records": 500}}))
    assert config.accepted_peer_records(100) == 200  # twice by default
    assert config.accepted_peer_records(400) == 500  # the memory limit caps it
    assert config.accepted_peer_records(0) == 1


def test_training_and_selection_keys(tmp_path: Path) -> None:
    method = {"negatives_per_positive": 6, "hard_negatives": 0, "class_weight": "none", "top_k": 3}
    config = load_config(write(tmp_path, minimal() | {"method": method}))
    assert (config.method.negatives_per_positive, config.method.hard_negatives) == (6, 0)
    assert (config.method.class_weight, config.method.top_k) == ("none", 3)
    assert config.method.soft_top_k == 0  # soft linkage only when asked for
    asked = load_config(write(tmp_path, minimal() | {"method": {**REFERENCE, "soft_top_k": 5}}))
    assert asked.method.soft_top_k == 5
    movers = {"error_model": "registers", "mover_odds": 4}
    assert load_config(write(tmp_path, minimal() | {"method": movers})).method.mover_odds == 4.0
    fewer = minimal() | {"method": {"projected_components": 20}}
    assert load_config(write(tmp_path, fewer)).method.projected_components == 20
    assert load_config(write(tmp_path, minimal())).method.projected_components == 0


def test_hard_negatives_default_never_exceeds_the_negatives(tmp_path: Path) -> None:
    method = {"negatives_per_positive": 1, "noise_sigma": 0}
    config = load_config(write(tmp_path, minimal() | {"method": method}))
    assert config.method.hard_negatives == 1


def test_error_model_is_read_and_checked(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).method.error_model == "registers"
    config = load_config(write(tmp_path, minimal() | {"method": {"error_model": "one-error"}}))
    assert config.method.error_model == "one-error"
    path = write(tmp_path, minimal() | {"method": {"error_model": "sloppy"}})
    error = load_error(path)
    assert_located(error, path, "method.error_model")
    assert "registers" in str(error)


def test_register_training_defaults_to_logistic_and_keeps_a_chosen_classifier(
    tmp_path: Path,
) -> None:
    registers = {"error_model": "registers"}
    assert load_config(write(tmp_path, minimal() | {"method": registers})).method.classifier == (
        "logistic"
    )
    chosen = registers | {"classifier": "linear"}
    assert load_config(write(tmp_path, minimal() | {"method": chosen})).method.classifier == (
        "linear"
    )
    path = write(tmp_path, minimal() | {"method": {"classifier": "logit"}})
    error = load_error(path)
    assert_located(error, path, "method.classifier")
    assert "logistic" in str(error)


def test_the_assignment_follows_the_error_model_and_the_noise_unless_chosen(tmp_path: Path) -> None:
    def assignment(method: dict, limit: float = 1.0) -> str:
        data = minimal() | {
            "method": {**REFERENCE, **method},
            "privacy": {"max_reidentification": limit},
        }
        return load_config(write(tmp_path, data)).method.assignment

    paper = {"error_model": "one-error"}
    assert assignment(paper) == "greedy-one-to-one"  # the paper's setting: one error, no noise
    assert assignment(paper, limit=0.1) == "optimal-one-to-one"  # the gate's automatic noise
    assert assignment({}) == "optimal-one-to-one"  # a register's records
    assert assignment({"noise_sigma": 1.5}) == "optimal-one-to-one"
    assert assignment({"error_model": "registers"}) == "optimal-one-to-one"
    chosen = {"error_model": "registers", "assignment": "greedy-one-to-one"}
    assert assignment(chosen) == "greedy-one-to-one"
    path = write(tmp_path, minimal() | {"method": {"assignment": "hungarian"}})
    error = load_error(path)
    assert_located(error, path, "method.assignment")
    assert "optimal-one-to-one" in str(error)


def test_register_training_without_a_mapping_gets_the_combined_and_initial_entries(
    tmp_path: Path,
) -> None:
    config = load_config(write(tmp_path, minimal() | {"method": {"error_model": "registers"}}))
    assert config.mapping == REGISTER_MAPPING
    assert ("first+middle+last", "first+last") in config.mapping
    assert ("middle:initial", "first") in config.mapping
    assert ("middle", "last") not in config.mapping
    given = [["first", "first"], ["last", "last"]]
    data = minimal() | {"method": {"error_model": "registers"}}
    data["reference"] = data["reference"] | {"mapping": given}
    assert load_config(write(tmp_path, data)).mapping == (("first", "first"), ("last", "last"))


@pytest.mark.parametrize(
    ("method", "key", "words"),
    [
        ({"negatives_per_positive": 2, "hard_negatives": 3}, "hard_negatives", "must not exceed"),
        # Checked once, by the method itself, and named at the file's key.
        ({"feature": "cosine", "release": "projected"}, "release", '-raw-joins" use'),
        ({"hard_negatives": -1}, "hard_negatives", "whole number >= 0"),
        ({"mover_odds": -1}, "mover_odds", "number >= 0"),
        ({"mover_odds": "high"}, "mover_odds", "number >= 0"),
        ({"class_weight": "heavy"}, "class_weight", "none, balanced"),
        ({"top_k": 0}, "top_k", "positive whole number"),
        ({"soft_top_k": 0}, "soft_top_k", "positive whole number"),
        ({"soft_top_k": -2}, "soft_top_k", "positive whole number"),
        ({"projected_components": 0}, "projected_components", "positive whole number"),
        ({"projected_components": "few"}, "projected_components", "positive whole number"),
        ({"feature": "cosine", "projected_components": 20}, "projected_components", "cosine"),
    ],
)
def test_bad_training_and_selection_keys(
    tmp_path: Path, method: dict, key: str, words: str
) -> None:
    path = write(tmp_path, minimal() | {"method": {**REFERENCE, **method}})
    error = load_error(path)
    assert_located(error, path, f"method.{key}")
    assert words in str(error)


@pytest.mark.parametrize(("key", "value"), [("c", 0), ("c", -1.0), ("negatives_per_positive", 0)])
def test_other_non_positive_numbers(tmp_path: Path, key: str, value: Any) -> None:
    path = write(tmp_path, minimal() | {"method": {key: value}})
    assert_located(load_error(path), path, f"method.{key}")


@pytest.mark.parametrize("value", [0.5, math.nan, math.inf])
def test_training_records_must_be_a_positive_integer(tmp_path: Path, value: float) -> None:
    path = write(tmp_path, minimal() | {"method": {"training_records": value}})
    assert_located(load_error(path), path, "method.training_records")


def test_c_must_not_be_nan(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"method": {"c": math.nan}})
    assert_located(load_error(path), path, "method.c")


def test_matching_scheduler_is_optional_and_checked(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).scheduler is None
    data = minimal() | {"method": REFERENCE, "matching": {"scheduler": "tcp://10.0.0.5:8786"}}
    assert load_config(write(tmp_path, data)).scheduler == "tcp://10.0.0.5:8786"
    # Sealed linkage blinds its keys there.
    path = write(tmp_path, minimal() | {"matching": {"scheduler": "tcp://10.0.0.5:8786"}})
    assert load_config(path).scheduler == "tcp://10.0.0.5:8786"
    for bad in ("10.0.0.5:8786", "http://h:1", "tcp://h:port", "tcp://:8786"):
        path = write(tmp_path, minimal() | {"method": REFERENCE, "matching": {"scheduler": bad}})
        error = load_error(path)
        assert_located(error, path, "matching.scheduler")
        assert "tcp://HOST:PORT" in str(error)


def test_local_workers_default_to_one_a_core_and_are_a_whole_number(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).workers == 0
    path = write(tmp_path, minimal() | {"matching": {"workers": 3}})
    assert load_config(path).workers == 3
    for bad in (-1, 1.5, "two", True):
        path = write(tmp_path, minimal() | {"matching": {"workers": bad}})
        assert_located(load_error(path), path, "matching.workers")


def test_the_development_seed_is_optional_and_a_whole_number(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).development_seed is None
    assert load_config(write(tmp_path, minimal() | {"development": {}})).development_seed is None
    for seed in (0, 42, 2**63 - 1):
        data = minimal() | {"development": {"seed": seed}}
        assert load_config(write(tmp_path, data)).development_seed == seed


@pytest.mark.parametrize("seed", [-1, True, "42", 4.0, [1]])
def test_a_bad_development_seed_names_its_key(tmp_path: Path, seed: Any) -> None:
    path = write(tmp_path, minimal() | {"development": {"seed": seed}})
    error = load_error(path)
    assert_located(error, path, "development.seed")
    assert error.message == "must be a whole number >= 0"


# --- noise and the privacy gate ---------------------------------------------------------------


def test_privacy_defaults_gate_at_ten_percent_with_automatic_noise(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, minimal() | {"method": REFERENCE}))
    assert config.privacy.max_reidentification == 0.10
    assert config.privacy.audit_records == 200
    assert config.privacy.dictionary is None
    assert config.auto_noise
    assert config.method.noise_sigma == 0.0  # until AGREE chooses it
    assert config.method.feature == "projected-cosine"
    assert config.method.release == "projected"
    assert config.method.hard_negatives == 0
    assert config.attack_success is None


def test_noise_is_automatic_only_when_asked_or_gated_and_unset(tmp_path: Path) -> None:
    def auto(method: dict, privacy: dict | None = None) -> bool:
        data = minimal() | {"method": {**REFERENCE, **method}}
        data |= {"privacy": privacy} if privacy else {}
        return load_config(write(tmp_path, data)).auto_noise

    assert auto({"noise_sigma": "auto"})
    assert auto({"noise_sigma": "auto"}, {"max_reidentification": 1.0})
    assert not auto({}, {"max_reidentification": 1.0})  # no gate: no noise unless asked
    assert not auto({"noise_sigma": 0})
    assert not auto({"noise_sigma": 1.5})
    assert not auto({"attack_success": 0.3})


@pytest.mark.parametrize(
    ("method", "field"),
    [
        ({"noise_sigma": "automatic"}, "method.noise_sigma"),
        ({"noise_sigma": "auto", "attack_success": 0.3}, "method.attack_success"),
    ],
)
def test_bad_automatic_noise_settings_are_refused(tmp_path: Path, method: dict, field) -> None:
    path = write(tmp_path, minimal() | {"method": {**REFERENCE, **method}})
    error = load_error(path)
    assert_located(error, path, field)


def test_noise_feature_and_gate_settings_are_read(tmp_path: Path) -> None:
    data = minimal() | {
        "method": {**REFERENCE, "noise_sigma": 2, "feature": "centred-cosine"},
        "privacy": {"max_reidentification": 0.25, "audit_records": 50, "dictionary": "n.csv"},
    }
    config = load_config(write(tmp_path, data))
    assert config.method.noise_sigma == 2.0
    assert config.method.feature == "centred-cosine"
    assert config.privacy.max_reidentification == 0.25
    assert config.privacy.audit_records == 50
    assert config.privacy.dictionary == tmp_path / "n.csv"
    tau = load_config(write(tmp_path, minimal() | {"method": {**REFERENCE, "attack_success": 0.3}}))
    assert tau.attack_success == 0.3


@pytest.mark.parametrize(
    ("table", "key", "value"),
    [
        ("method", "noise_sigma", -1),
        ("method", "noise_sigma", "2"),
        ("method", "noise_sigma", math.inf),
        ("method", "feature", "euclid"),
        ("method", "attack_success", 1.0),
        ("method", "attack_success", 0),
        ("privacy", "max_reidentification", 1.5),
        ("privacy", "max_reidentification", True),
        ("privacy", "audit_records", 0),
        ("privacy", "min_expected_f1", 1.2),
        ("privacy", "min_expected_f1", -0.1),
        ("privacy", "min_expected_f1", "high"),
        ("privacy", "min_expected_f1", True),
    ],
)
def test_bad_noise_and_gate_settings_name_their_key(
    tmp_path: Path, table: str, key: str, value: Any
) -> None:
    data = minimal() | {"method": REFERENCE}
    data[table] = {**data.get(table, {}), key: value}
    path = write(tmp_path, data)
    assert_located(load_error(path), path, f"{table}.{key}")


def test_noise_sigma_and_attack_success_together_are_refused(tmp_path: Path) -> None:
    method = {**REFERENCE, "noise_sigma": 1, "attack_success": 0.5}
    path = write(tmp_path, minimal() | {"method": method})
    error = load_error(path)
    assert_located(error, path, "method.attack_success")
    assert "not both" in str(error)


def test_noise_turns_off_mined_hard_negatives_unless_asked_for(tmp_path: Path) -> None:
    noisy = load_config(write(tmp_path, minimal() | {"method": {**REFERENCE, "noise_sigma": 1}}))
    assert noisy.method.hard_negatives == 0
    assert noisy.method.feature == "projected-cosine"
    data = minimal() | {"method": {**REFERENCE, "noise_sigma": 1, "feature": "cosine"}}
    assert load_config(write(tmp_path, data)).method.feature == "cosine"
    tau = load_config(write(tmp_path, minimal() | {"method": {**REFERENCE, "attack_success": 0.5}}))
    assert tau.method.hard_negatives == 0
    data = minimal() | {"method": {**REFERENCE, "noise_sigma": 1, "hard_negatives": 1}}
    assert load_config(write(tmp_path, data)).method.hard_negatives == 1


def test_the_gate_measure_is_every_name_by_default_and_may_be_any_name(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).privacy.measure == "every-name"
    data = minimal() | {"privacy": {"measure": "any-name"}}
    assert load_config(write(tmp_path, data)).privacy.measure == "any-name"
    path = write(tmp_path, minimal() | {"privacy": {"measure": "surname"}})
    assert_located(load_error(path), path, "privacy.measure")


# --- unknown keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "key", "value", "hint"),
    [
        ("method", "classifer", "rbf", "did you mean 'classifier'?"),
        ("privacy", "max_reidentifcation", 0.01, "did you mean 'max_reidentification'?"),
        ("matching", "schedular", "tcp://h:1", "did you mean 'scheduler'?"),
        ("records", "id_col", "id", "did you mean 'id_column'?"),
    ],
)
def test_a_misspelt_key_is_refused_with_the_key_it_meant(
    tmp_path: Path, table: str, key: str, value: Any, hint: str
) -> None:
    data = minimal()
    data.setdefault(table, {})[key] = value
    path = write(tmp_path, data)
    error = load_error(path)
    assert_located(error, path, f"{table}.{key}")
    assert error.message == f"unknown key; {hint}"


def test_a_known_key_in_the_wrong_table_points_to_its_table(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"privacy": {"noise_sigma": 2}})
    error = load_error(path)
    assert_located(error, path, "privacy.noise_sigma")
    assert error.message == "unknown key; did you mean 'method.noise_sigma'?"
    data = minimal()
    data["records"]["identity"] = "alice"
    error = load_error(write(tmp_path, data))
    assert error.field == "records.identity"
    assert "did you mean 'identity' or 'peer.identity' or 'coordinator.identity'?" in str(error)


def test_an_unknown_key_with_nothing_close_lists_the_keys_of_its_table(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"method": {"kernel": "rbf"}})
    error = load_error(path)
    assert_located(error, path, "method.kernel")
    lead = "unknown key; the keys of [method] are "
    assert error.message.startswith(lead)
    listed = error.message.removeprefix(lead).split(", ")
    assert listed == sorted(listed)
    assert {"classifier", "c", "noise_sigma", "attack_success", "top_k"} <= set(listed)


def test_an_unknown_top_level_table_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"matchng": {"scheduler": "tcp://h:1"}})
    error = load_error(path)
    assert_located(error, path, "matchng")
    assert error.message == "unknown table; did you mean 'matching'?"
    path = write(tmp_path, minimal() | {"logging": {"level": "debug"}})
    error = load_error(path)
    assert_located(error, path, "logging")
    assert error.message.startswith("unknown table; the top-level keys are identity, listen")
    for table in ("records", "reference", "method", "privacy", "tls", "peer", "matching"):
        assert f"[{table}]" in error.message


def test_an_unknown_top_level_key_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, minimal() | {"identiy": "alice"})
    error = load_error(path)
    assert_located(error, path, "identiy")
    assert error.message == "unknown key; did you mean 'identity'?"


def test_an_unknown_sub_table_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, toml(minimal()) + "[method.extra]\nc = 1\n")
    error = load_error(path)
    assert_located(error, path, "method.extra")
    assert error.message.startswith("unknown table; the keys of [method] are ")


def test_unknown_keys_are_reported_before_any_value_is_checked(tmp_path: Path) -> None:
    data = minimal() | {"method": {"c": -1}, "privacy": {"max_reidentifcation": 0.01}}
    del data["tls"]
    path = write(tmp_path, data)
    assert_located(load_error(path), path, "privacy.max_reidentifcation")


def test_reading_a_key_missing_from_known_keys_is_a_bug_not_a_default(tmp_path: Path) -> None:
    section = _Section({}, tmp_path / "alice.toml", "method")
    with pytest.raises(KeyError, match=r"method\.kernel"):
        section.string("kernel", "linear")
    with pytest.raises(KeyError, match=r"method\.kernel"):
        section.has("kernel")
    assert section.string("classifier", "linear") == "linear"


# --- the configurations the project ships -----------------------------------------------------


def guide_config() -> str:
    """The user guide's minimal party configuration: its only TOML block."""
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 1
    return blocks[0]


def test_the_guide_example_loads(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, guide_config()))
    assert config.identity == "alice"
    assert not config.auto_noise
    # Sealed linkage, the default; beyond names the keys' graph, with the date's recipes
    # and the names' codes as a fallback.
    assert config.method.encoding == "sealed"
    assert config.method.sealed_join == "graph"
    recipes = config.method.sealed_keys.split(",")
    assert "dob+first|last:soundex" in recipes and "?first:soundex+last:soundex" in recipes
    assert config.scheduler is None
    assert config.development_seed is None


@pytest.mark.parametrize("name", ["alice", "bob", "three/alice", "three/bob", "three/carol"])
def test_the_deploy_configs_load(name: str) -> None:
    config = load_config(ROOT / "deploy" / f"{name}.toml")
    party = name.rpartition("/")[2]
    assert config.identity == party
    names = ("alice", "bob", "carol") if name.startswith("three/") else ("alice", "bob")
    assert config.peer_identities == tuple(n for n in names if n != party)
    # Sealed linkage, as `make demo` runs it: no noise to choose; the data's one error per
    # copy is the error model, not the register model own attributes would select.
    assert config.method.encoding == "sealed" and not config.auto_noise
    assert config.method.error_model == "one-error" and not config.registers_by_default


def test_a_three_party_deployment_lists_every_other_party_as_a_peer(tmp_path: Path) -> None:
    records = {name: tmp_path / f"{name}.csv" for name in ("alice", "bob", "carol")}
    deployment = prepare(tmp_path, records, tmp_path / "reference.csv")
    ports = {name: party.port for name, party in deployment.parties.items()}
    assert len(set(ports.values())) == 3
    for name, party in deployment.parties.items():
        config = load_config(party.config)
        others = [n for n in records if n != name]
        assert config.peer_identities == tuple(others)
        assert [p.address for p in config.peers] == [f"127.0.0.1:{ports[n]}" for n in others]
        assert config.tls.cert == tmp_path / "certs" / f"{name}.pem"


@pytest.mark.parametrize("wire_log", [False, True])
def test_the_demo_configs_load(tmp_path: Path, wire_log: bool) -> None:
    records = {name: tmp_path / f"{name}.csv" for name in ("alice", "bob")}
    privacy = Privacy(2.0, "cosine", max_reidentification=0.5, encoding="reference")
    deployment = prepare(tmp_path, records, tmp_path / "reference.csv", "rbf", wire_log, privacy)
    for name, party in deployment.parties.items():
        config = load_config(party.config)
        assert config.identity == name
        assert config.records_path == records[name].resolve()
        assert (config.method.classifier, config.method.noise_sigma) == ("rbf", 2.0)
        assert config.method.feature == "cosine"
        assert config.privacy.max_reidentification == 0.5
        assert config.wire_log == (tmp_path / f"{name}.wire.log" if wire_log else None)


def test_kinds_and_date_formats_give_each_attribute_its_schema(tmp_path: Path) -> None:
    data = minimal()
    data["records"] |= {
        "attributes": ["first", "dob", "zip"],
        "kinds": {"dob": "date", "zip": "number"},
        "date_formats": {"dob": "%d/%m/%Y"},
        "on_bad_value": "missing",
    }
    config = load_config(write(tmp_path, data))
    assert config.schema == (
        Attribute("first"),
        Attribute("dob", "date", "%d/%m/%Y"),
        Attribute("zip", "number"),
    )
    assert config.on_bad_value == "missing"


def _assert_records_refused(tmp_path: Path, records: dict, field: str, words: str) -> None:
    """A [records] table over first and last with `records` added is refused at `field`."""
    data = minimal()
    data["records"] |= {"attributes": ["first", "last"], **records}
    with pytest.raises(InputError) as caught:
        load_config(write(tmp_path, data))
    assert caught.value.field == field
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("records", "field", "words"),
    [
        ({"kinds": {"first": "postcode"}}, "records.kinds.first", "must be one of name, text"),
        ({"kinds": {"dob": "date"}}, "records.kinds.dob", "names no configured attribute"),
        ({"date_formats": {"first": "%Y"}}, "records.date_formats.first", "not a date"),
        (
            {"kinds": {"first": "date"}, "date_formats": {"first": "%Y-%m"}},
            "records.date_formats.first",
            "day, month and year",
        ),
        ({"on_bad_value": "skip"}, "records.on_bad_value", "must be one of error, missing"),
    ],
)
def test_bad_kinds_and_formats_name_the_key(
    tmp_path: Path, records: dict, field: str, words: str
) -> None:
    _assert_records_refused(tmp_path, records, field, words)


def test_a_quantity_takes_its_scale_from_scales(tmp_path: Path) -> None:
    data = minimal()
    data["records"] |= {
        "attributes": ["first", "height", "lat"],
        "kinds": {"height": "quantity", "lat": "quantity"},
        "scales": {"height": 0.5, "lat": 1},
    }
    data["method"] = REFERENCE  # one name and quantities: no default blocking keys
    config = load_config(write(tmp_path, data))
    assert config.schema == (
        Attribute("first"),
        Attribute("height", "quantity", scale=0.5),
        Attribute("lat", "quantity", scale=1.0),
    )
    assert attribute_scales(config) == {"height": 0.5, "lat": 1.0}


def test_coordinates_take_their_scale_in_metres_from_scales(tmp_path: Path) -> None:
    data = minimal()
    data["records"] |= {
        "attributes": ["first", "home"],
        "kinds": {"home": "coordinates"},
        "scales": {"home": 50},
    }
    data["method"] = REFERENCE  # one name and coordinates: no default blocking keys
    config = load_config(write(tmp_path, data))
    assert config.schema == (Attribute("first"), Attribute("home", "coordinates", scale=50.0))
    assert attribute_scales(config) == {"home": 50.0}


@pytest.mark.parametrize(
    ("records", "field", "words"),
    [
        (
            {"kinds": {"first": "quantity"}},
            "records.scales.first",
            "quantity first needs its scale",
        ),
        (
            {"kinds": {"first": "coordinates"}},
            "records.scales.first",
            "missing: coordinates first need their scale, the metres that count as one unit of "
            "distance and the tolerance",
        ),
        (
            {"kinds": {"first": "coordinates"}, "scales": {"first": 0}},
            "records.scales.first",
            "must be a positive number",
        ),
        (
            {"kinds": {"last": "coordinates"}, "scales": {"first": 50}},
            "records.scales.first",
            "first is a name, not a quantity or coordinates",
        ),
        ({"scales": {"first": 0.5}}, "records.scales.first", "first is a name, not a quantity"),
        ({"scales": {"height": 0.5}}, "records.scales.height", "names no configured attribute"),
        (
            {"kinds": {"first": "quantity"}, "scales": {"first": 0}},
            "records.scales.first",
            "must be a positive number",
        ),
        (
            {"kinds": {"first": "quantity"}, "scales": {"first": -0.5}},
            "records.scales.first",
            "must be a positive number",
        ),
        (
            {"kinds": {"first": "quantity"}, "scales": {"first": "0.5"}},
            "records.scales.first",
            "must be a positive number",
        ),
        ({"scales": 0.5}, "records.scales", "must be a table of attribute = number"),
    ],
)
def test_bad_scales_name_the_key(tmp_path: Path, records: dict, field: str, words: str) -> None:
    _assert_records_refused(tmp_path, records, field, words)


def test_a_schema_file_records_table_reads_as_a_configuration_does(tmp_path: Path) -> None:
    records = {"attributes": ["first", "dob"], "kinds": {"dob": "date"}}
    data = minimal()
    data["records"] |= records
    assert records_schema(records, tmp_path / "s.toml") == load_config(write(tmp_path, data)).schema
    with pytest.raises(InputError, match="must be one of"):
        records_schema({**records, "kinds": {"dob": "dates"}}, tmp_path / "s.toml")


def test_noise_releases_projected_coordinates_unless_told_otherwise(tmp_path: Path) -> None:
    noisy = minimal() | {"method": {**REFERENCE, "noise_sigma": 1.0}}
    assert load_config(write(tmp_path, noisy)).method.release == "projected"
    told = minimal() | {"method": {**REFERENCE, "noise_sigma": 1.0, "release": "distances"}}
    assert load_config(write(tmp_path, told)).method.release == "distances"
    plain = minimal() | {"method": {**REFERENCE, "noise_sigma": 0}}
    assert load_config(write(tmp_path, plain)).method.release == "distances"


@pytest.mark.parametrize(
    "method",
    [
        {"release": "bloom"},
        {"noise_sigma": 0, "release": "projected"},  # the paper's cosine, without noise
        {"noise_sigma": 1.0, "feature": "centred-cosine", "release": "projected"},
    ],
)
def test_a_release_the_features_cannot_use_is_refused(tmp_path: Path, method: dict) -> None:
    path = write(tmp_path, minimal() | {"method": {**REFERENCE, **method}})
    assert_located(load_error(path), path, "method.release")


# --- several peers ---------------------------------------------------------------------------


def several_peers(*identities: str) -> dict[str, Any]:
    data = minimal()
    del data["peer"]
    data["peers"] = [
        {"identity": name, "address": f"{name}.example:5005{i}"}
        for i, name in enumerate(identities)
    ]
    return data


def test_several_peers_load_in_the_files_order(tmp_path: Path) -> None:
    data = several_peers("bob", "carol")
    data["peers"][1]["timeout_seconds"] = 7
    config = load_config(write(tmp_path, data))
    assert config.peer_identities == ("bob", "carol")
    assert config.peer("carol") == PeerEndpoint("carol", "carol.example:50051", 7.0)
    assert config.peer("bob").timeout == DEFAULT_PEER_TIMEOUT
    with pytest.raises(KeyError):
        config.peer("dave")


def test_a_peer_listed_twice_is_refused_at_its_second_entry(tmp_path: Path) -> None:
    path = write(tmp_path, several_peers("bob", "carol", "bob"))
    error = load_error(path)
    assert_located(error, path, "peers[2].identity")
    assert "'bob' is listed twice" in error.message


def test_peer_and_peers_together_are_refused(tmp_path: Path) -> None:
    data = several_peers("bob", "carol")
    data["peer"] = {"identity": "dave", "address": "dave.example:1"}
    path = write(tmp_path, data)
    assert_located(load_error(path), path, "peers")


@pytest.mark.parametrize(
    ("peers", "field", "words"),
    [
        ([], "peers", "one or more [[peers]] tables"),
        (["bob"], "peers", "one or more [[peers]] tables"),
        ([{"identity": "bob"}], "peers[0].address", "missing key"),
        ([{"identity": "bob", "address": "nohost"}], "peers[0].address", "HOST:PORT"),
        ([{"identity": "bob", "address": "b:1", "timeout": 3}], "peers[0].timeout", "unknown key"),
    ],
)
def test_bad_peers_tables_name_the_entry_and_key(
    tmp_path: Path, peers: list, field: str, words: str
) -> None:
    data = minimal()
    del data["peer"]
    data["peers"] = peers
    path = write(tmp_path, data)
    error = load_error(path)
    assert_located(error, path, field)
    assert words in error.message


def test_a_minimum_expected_f1_of_point_eight_by_default(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, minimal())).privacy.min_expected_f1 == 0.8
    data = minimal() | {"privacy": {"min_expected_f1": 0.5}}
    assert load_config(write(tmp_path, data)).privacy.min_expected_f1 == 0.5


def test_a_registers_records_train_on_register_errors_with_or_without_attributes(
    tmp_path: Path,
) -> None:
    """A custodian's records are a register's, whether [records] names its attributes or
    not: the register error model is the default, and the config says it chose it. Only the
    built-in demo data, made with one edit a copy, says "one-error" (`prepare(built_in=True)`)."""
    plain = load_config(write(tmp_path, minimal()))
    assert plain.method.error_model == "registers" and plain.registers_by_default
    data = minimal()
    data["records"] = data["records"] | {"attributes": ["first", "middle", "last"]}
    own = load_config(write(tmp_path, data))
    assert own.method.error_model == "registers" and own.registers_by_default
    data["method"] = {"error_model": "one-error"}
    chosen = load_config(write(tmp_path, data))
    assert chosen.method.error_model == "one-error" and not chosen.registers_by_default
