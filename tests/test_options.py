"""The option table is the configuration's one reference: the loader's keys come from it, its
defaults are what load_config gives, and docs/configuration.md and docs/party.example.toml
are what it renders."""

from __future__ import annotations

import csv
import re
import shutil
from dataclasses import replace
from pathlib import Path

from pprl.cli import main as pprl
from pprl.party.config import KNOWN_KEYS, load_config
from pprl.party.config_reference import (
    RENDERED,
    default_problems,
    load_text,
    markdown,
    same_config,
    stale_docs,
)
from pprl.party.options import OPTIONS, TABLES, option
from pprl.protocol.encodings.registry import DEFAULT_ENCODING

ROOT = Path(__file__).resolve().parent.parent
STALE = "stale docs: run `make docs` to regenerate them from pprl/party/options.py"


def test_the_docs_are_what_the_table_renders() -> None:
    assert stale_docs(ROOT / "docs") == [], STALE


def test_the_reference_stays_short() -> None:
    assert len(markdown()) < 30_000


def test_a_doctored_copy_of_the_docs_is_told_apart(tmp_path: Path) -> None:
    for name in RENDERED:
        shutil.copy(ROOT / "docs" / name, tmp_path / name)
    assert stale_docs(tmp_path) == []
    doctored = (tmp_path / "configuration.md").read_text(encoding="utf-8")
    doctored = doctored.replace("| `5000` |", "| `4000` |")
    (tmp_path / "configuration.md").write_text(doctored, encoding="utf-8")
    assert stale_docs(tmp_path) == ["configuration.md"]


def test_the_loader_knows_exactly_the_table_s_keys() -> None:
    by_table = {table: [o.key for o in OPTIONS if o.table == table] for table in TABLES}
    assert {t: list(keys) for t, keys in KNOWN_KEYS.items()} == by_table
    assert len({(o.table, o.key) for o in OPTIONS}) == len(OPTIONS)


def test_every_key_has_a_default_a_rule_or_is_required() -> None:
    for row in OPTIONS:
        assert row.required or row.default is not None or row.default_text, row.dotted
        assert not (row.required and row.default is not None), row.dotted
        assert row.example is not None or not (row.required or row.yours), row.dotted


def test_every_literal_default_is_what_load_config_gives(tmp_path: Path) -> None:
    """Read from the loaded PartyConfig without the key, and loaded again with the key set
    to it: the same party either way."""
    assert default_problems(OPTIONS, tmp_path) == []


def test_a_wrong_default_is_caught(tmp_path: Path) -> None:
    doctored = replace(option("method", "training_records"), default=4000)
    (problem,) = default_problems([doctored], tmp_path)
    assert "method.training_records" in problem and "4000" in problem and "5000" in problem


def test_a_default_that_writing_changes_is_caught(tmp_path: Path) -> None:
    """Writing out the mapping the built-in data's error model gets changes a register's
    (its default mapping follows the error model): a literal default is refused."""
    doctored = replace(option("reference", "mapping"), default=[["first", "first"]])
    (problem,) = default_problems([doctored], tmp_path)
    assert "reference.mapping" in problem


def _commented_lines(text: str) -> dict[tuple[str, str], tuple[int, int]]:
    """Each commented-out key of the example: (table, key) -> its lines [start, end)."""
    lines = text.splitlines()
    found: dict[tuple[str, str], tuple[int, int]] = {}
    table = ""
    for index, line in enumerate(lines):
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            table = header.group(1)
        match = re.match(r"# (\w+) = ", line)
        if match:
            end = index + 1
            if line.endswith("["):
                while lines[end - 1] != "# ]":
                    end += 1
            found[(table, match.group(1))] = (index, end)
    return found


def _uncommented(text: str, span: tuple[int, int]) -> str:
    lines = text.splitlines()
    start, end = span
    lines[start:end] = [line.removeprefix("# ").removeprefix("#") for line in lines[start:end]]
    return "\n".join(lines) + "\n"


def test_every_key_the_example_leaves_out_is_shown_at_its_true_value(tmp_path: Path) -> None:
    """Uncommenting any commented key (not a marked example) configures the same party, so
    the values shown are the file's true defaults, dependent ones included; the keys of
    other encodings show the table's default, checked above on such an encoding."""
    text = (ROOT / "docs" / "party.example.toml").read_text(encoding="utf-8")
    base = load_text(tmp_path, text)
    commented = _commented_lines(text)
    checked = 0
    for row in OPTIONS:
        if row.required or row.yours or row.table == "peers":
            continue
        span = commented[(row.table, row.key)]
        if text.splitlines()[span[1] - 1].endswith("# example"):
            continue
        if row.encodings and DEFAULT_ENCODING not in row.encodings:
            assert row.default is not None, row.dotted
            continue
        changed = load_text(tmp_path, _uncommented(text, span))
        assert same_config(changed, base), f"{row.dotted}: the example's value is not its default"
        checked += 1
    assert checked > 25


def test_the_example_loads_once_its_files_exist(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "party.example.toml").read_text(encoding="utf-8")
    assert pprl(["certs", "--out", str(tmp_path), "alice", "bob", "coordinator"]) == 0
    for name in ("alice.csv", "reference.csv"):
        with (tmp_path / name).open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["id", "first", "middle", "last"])
            writer.writerow(["1", "ADA", "", "LOVELACE"])
    path = tmp_path / "party.toml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    assert config.identity == "alice"
    assert config.tls.cert == tmp_path.resolve() / "alice.pem"
    files = (config.records_path, config.reference_path, config.tls.key, config.tls.ca)
    assert all(path.exists() for path in files)
    assert config.method.encoding == DEFAULT_ENCODING
