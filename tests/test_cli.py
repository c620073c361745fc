"""The `pprl` command as an operator runs it: a separate process, its exit code and its files.

Every command runs once, all of them side by side in one module fixture, because each process
pays for importing scikit-learn; the tests then look at the results.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import metadata, version
from pathlib import Path

import pytest
from cryptography import x509

from pprl.cli import COMMANDS, build_parser
from pprl.party.credentials.certs import identity_of
from pprl.party.local import DEFAULT_REFERENCE_ROWS, read_truth

HELP = {
    "pprl": [],
    "certs": ["certs"],
    "generate": ["generate"],
    "reference": ["reference"],
    "party": ["party"],
    "party-serve": ["party", "serve"],
    "coordinate": ["coordinate"],
    "demo": ["demo"],
}

# A party configuration whose only fault is a misspelt key, which must stop the daemon.
TYPO_CONFIG = """
identity = "alice"
listen = "127.0.0.1:1"
state_dir = "state"
[records]
path = "alice.csv"
[reference]
path = "reference.csv"
[method]
classifer = "rbf"
[tls]
cert = "alice.pem"
key = "alice.key"
ca = "ca.pem"
[peer]
identity = "bob"
address = "127.0.0.1:2"
[coordinator]
identity = "coordinator"
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def runs(work: Path) -> dict[str, subprocess.CompletedProcess]:
    temp = work / "tmp"
    temp.mkdir()
    (work / "nocol.csv").write_text("id,first,last\nA1,ADA,KING\n", encoding="utf-8")
    (work / "ok.csv").write_text("id,first,middle,last\nB1,ADA,,KING\n", encoding="utf-8")
    (work / "typo.toml").write_text(TYPO_CONFIG, encoding="utf-8")
    commands = {
        # The slow ones (they import the whole daemon) first.
        "generate-all": ["generate", "--out", work / "all", "--size", "50", "--seed", "3"],
        "generate-alice": [
            *("generate", "--out", work / "alice", "--size", "50", "--seed", "3"),
            *("--side", "alice"),
        ],
        "serve-missing": ["party", "serve", "--config", work / "missing.toml"],
        "serve-typo": ["party", "serve", "--config", work / "typo.toml"],
        "demo-half": ["demo", "--records-a", work / "X.csv"],
        "demo-missing": [
            *("demo", "--records-a", work / "missing.csv"),
            *("--records-b", work / "missing2.csv"),
        ],
        "demo-bad-column": [
            *("demo", "--records-a", work / "nocol.csv", "--records-b", work / "ok.csv"),
        ],
        # Sealed linkage is the default: the reference release's noise is refused, not ignored.
        "demo-sealed-noise": ["demo", "--noise-sigma", "2"],
        "certs": ["certs", "--out", work / "certs", "alice", "bob"],
        "certs-invalid": ["certs", "--out", work / "bad-certs", "alice", "Bad_Name"],
        "certs-days": ["certs", "--out", work / "short-certs", "--days", "30", "alice"],
        "certs-no-days": ["certs", "--out", work / "no-certs", "--days", "0", "alice"],
        "no-command": [],
        "version": ["--version"],
        **{f"help-{name}": [*args, "--help"] for name, args in HELP.items()},
    }
    # Keep any temporary directory inside the test's own, to see that none is left behind.
    env = {**os.environ, "TMPDIR": str(temp)}

    def run(args: list) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "pprl", *map(str, args)]
        return subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=120
        )

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {name: pool.submit(run, args) for name, args in commands.items()}
        return {name: future.result() for name, future in futures.items()}


def data_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr


# --- certs --------------------------------------------------------------------------------


def test_certs_writes_a_ca_and_a_key_pair_per_identity(runs, work: Path) -> None:
    result = runs["certs"]
    assert result.returncode == 0, result.stderr
    out = work / "certs"
    names = sorted(p.name for p in out.iterdir())
    assert names == ["alice.key", "alice.pem", "bob.key", "bob.pem", "ca.key", "ca.pem"]
    for key in ("alice.key", "bob.key", "ca.key"):
        assert stat.S_IMODE((out / key).stat().st_mode) == 0o600, key
    for pem in ("alice.pem", "bob.pem", "ca.pem"):
        assert stat.S_IMODE((out / pem).stat().st_mode) == 0o644, pem
    ca = x509.load_pem_x509_certificate((out / "ca.pem").read_bytes())
    for name in ("alice", "bob"):
        pem = (out / f"{name}.pem").read_bytes()
        assert identity_of(pem) == name
        assert x509.load_pem_x509_certificate(pem).issuer == ca.subject
        assert b"-----BEGIN PRIVATE KEY-----" in (out / f"{name}.key").read_bytes()
    assert result.stdout.splitlines() == [
        f"alice: {out / 'alice.pem'} {out / 'alice.key'}",
        f"bob: {out / 'bob.pem'} {out / 'bob.key'}",
    ]


def test_certs_days_sets_how_long_they_are_valid(runs, work: Path) -> None:
    assert runs["certs-days"].returncode == 0, runs["certs-days"].stderr
    for name in ("ca", "alice"):
        cert = x509.load_pem_x509_certificate((work / "short-certs" / f"{name}.pem").read_bytes())
        life = cert.not_valid_after_utc - cert.not_valid_before_utc
        assert life.days in (29, 30), name  # not_valid_before may sit a moment back
    refused = runs["certs-no-days"]
    assert refused.returncode == 2 and "days must be at least 1, got 0" in refused.stderr
    no_traceback(refused)


def test_certs_refuses_an_invalid_identity_and_writes_nothing(runs, work: Path) -> None:
    result = runs["certs-invalid"]
    assert result.returncode == 2
    assert "invalid identity 'Bad_Name'" in result.stderr
    no_traceback(result)
    assert not (work / "bad-certs").exists()


# --- generate -----------------------------------------------------------------------------


def test_generate_writes_all_four_files(runs, work: Path) -> None:
    result = runs["generate-all"]
    assert result.returncode == 0, result.stderr
    out = work / "all"
    files = ["reference.csv", "alice.csv", "bob.csv", "truth.csv"]
    assert result.stdout.splitlines() == [str(out / name) for name in files]
    assert sorted(p.name for p in out.iterdir()) == sorted(files)
    alice, bob = data_rows(out / "alice.csv"), data_rows(out / "bob.csv")
    truth = data_rows(out / "truth.csv")
    assert (len(alice), len(bob), len(truth)) == (50, 50, 50)
    assert len(data_rows(out / "reference.csv")) == DEFAULT_REFERENCE_ROWS
    assert list(alice[0]) == list(bob[0]) == ["id", "first", "middle", "last"]
    assert list(truth[0]) == ["alice_id", "bob_id"]


def test_generate_truth_ids_exist_in_both_files(runs, work: Path) -> None:
    assert runs["generate-all"].returncode == 0
    out = work / "all"
    alice_ids = {row["id"] for row in data_rows(out / "alice.csv")}
    bob_ids = {row["id"] for row in data_rows(out / "bob.csv")}
    assert len(alice_ids) == len(bob_ids) == 50  # ids are unique
    truth = read_truth(out / "truth.csv")
    assert len(truth) == 50  # overlap 1.0: every Alice record has its Bob record
    assert {a for a, _ in truth} == alice_ids
    assert {b for _, b in truth} == bob_ids


def test_generate_one_side_matches_the_full_run(runs, work: Path) -> None:
    result = runs["generate-alice"]
    assert result.returncode == 0, result.stderr
    out = work / "alice"
    assert result.stdout.splitlines() == [str(out / "reference.csv"), str(out / "alice.csv")]
    assert sorted(p.name for p in out.iterdir()) == ["alice.csv", "reference.csv"]
    for name in ("alice.csv", "reference.csv"):
        assert (out / name).read_bytes() == (work / "all" / name).read_bytes(), name


# --- party serve and demo: input errors -----------------------------------------------------


def test_serve_with_a_missing_config_names_the_file(runs, work: Path) -> None:
    result = runs["serve-missing"]
    assert result.returncode == 2
    assert f"pprl: error: {work / 'missing.toml'}: configuration file not found" in result.stderr
    no_traceback(result)


def test_serve_refuses_a_misspelt_key_naming_it_and_its_likely_meaning(runs, work: Path) -> None:
    result = runs["serve-typo"]
    assert result.returncode == 2
    expected = "field 'method.classifer': unknown key; did you mean 'classifier'?"
    assert result.stderr == f"pprl: error: {work / 'typo.toml'}, {expected}\n"
    assert not (work / "state").exists()


def test_demo_needs_both_record_files(runs) -> None:
    result = runs["demo-half"]
    assert result.returncode == 2
    assert "--records-a and --records-b go together" in result.stderr
    no_traceback(result)


def test_demo_refuses_noise_for_sealed_linkage_and_names_the_way_back(runs) -> None:
    result = runs["demo-sealed-noise"]
    assert result.returncode == 2
    assert "--noise-sigma applies to the reference release" in result.stderr
    assert "add --encoding reference" in result.stderr
    assert "started alice daemon" not in result.stdout  # refused before anything ran
    no_traceback(result)


def test_demo_with_missing_record_files_names_the_file(runs, work: Path) -> None:
    result = runs["demo-missing"]
    assert result.returncode == 2
    assert f"pprl: error: {work / 'missing.csv'}: file not found" in result.stderr
    no_traceback(result)


# --- help -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(HELP))
def test_help(runs, name: str) -> None:
    result = runs[f"help-{name}"]
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(" ".join(["usage: pprl", *HELP[name]]))
    assert result.stderr == ""


def test_help_lists_each_command_and_option(runs) -> None:
    top = runs["help-pprl"].stdout
    for command in ("certs", "generate", "reference", "party", "coordinate", "demo"):
        assert command in top
    assert "--config" in runs["help-party-serve"].stdout
    assert "--until" in runs["help-coordinate"].stdout
    assert "--records-b" in runs["help-demo"].stdout
    assert "{alice,bob,carol,all}" in runs["help-generate"].stdout
    assert "NAME=GENERATOR" in runs["help-reference"].stdout
    assert "exit codes:" in top and "2    bad input or usage" in top


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every (sub)command's parser, by its words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_option_of_every_command_says_what_it_does_and_json_takes_a_path() -> None:
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == "==SUPPRESS==":
                continue
            assert action.help, f"pprl {' '.join(path)} {action.option_strings or action.dest}"
            if "--json" in action.option_strings:
                assert action.metavar == "PATH", f"pprl {' '.join(path)} --json"


def test_no_command_is_a_usage_error(runs) -> None:
    result = runs["no-command"]
    assert result.returncode == 2
    assert result.stderr.startswith("usage: pprl")


def test_demo_input_error_leaves_no_run_directory(runs, work: Path) -> None:
    assert runs["demo-missing"].returncode == 2
    assert list((work / "tmp").iterdir()) == []
    assert not list(work.glob("demo-run/*"))  # where a demo without --workdir keeps its run
    assert "logs kept in" not in runs["demo-missing"].stderr


def test_demo_checks_its_input_files_before_starting_daemons(runs, work: Path) -> None:
    result = runs["demo-bad-column"]
    assert result.returncode == 2
    assert str(work / "nocol.csv") in result.stderr and "'middle'" in result.stderr
    assert "started alice daemon" not in result.stdout
    no_traceback(result)


# --- version and license ----------------------------------------------------------------------


def test_version_prints_the_installed_package_version(runs) -> None:
    result = runs["version"]
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pprl {version('pprl')}\n"
    assert re.fullmatch(r"pprl \d+\.\d+\.\d+\S*\n", result.stdout)


def test_the_package_is_apache_2_licensed() -> None:
    assert metadata("pprl")["License-Expression"] == "Apache-2.0"
    root = Path(__file__).resolve().parent.parent
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("Copyright 2026 The pprl authors\n")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_a_command_named_first_builds_only_its_own_parser_and_the_same_one() -> None:
    """`pprl coordinate ...` imports only the coordinator's module (a coordinator starts in a
    fifth of a second), and parses as the full parser does."""
    words = ["coordinate", "--alice", "a:1", "--bob", "b:2", "--until", "smash"]
    words += ["--cert", "c.pem", "--key", "k.pem", "--ca", "ca.pem"]
    assert vars(build_parser("coordinate").parse_args(words)) == vars(
        build_parser().parse_args(words)
    )
    for name in COMMANDS:
        assert f"{{{name}}}" in build_parser(name).format_usage(), name
    code = (
        "import sys; from pprl.cli import COMMANDS, build_parser; build_parser('coordinate'); "
        "print(sorted(m for m in sys.modules if m.startswith(('pprl.party.config', 'sklearn', "
        "'scipy', 'tenseal'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
