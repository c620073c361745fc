"""benchmarks/phenomena.py on tiny data: a row per data set, ours and the peer's figures in
each; skipped without the optional extra `peer`."""

import importlib.util
import json
from pathlib import Path

import pytest

from pprl.protocol.data.reference import DEFAULT_MAPPING, REGISTER_MAPPING
from tests.scripts import benchmark_script

pytest.importorskip("anonlink")
if importlib.util.find_spec("clkhash") is None:
    pytest.skip("clkhash is not installed (optional extra peer)", allow_module_level=True)


def _table(text: str) -> list[list[str]]:
    """The markdown table's body rows as cells."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]


def test_a_row_per_data_set_with_ours_and_the_peers_figures(tmp_path: Path, capsys) -> None:
    out = tmp_path / "figures.json"
    arguments = ["--size", "200", "--phenomena", "nickname,overlap", "--json", str(out)]
    assert benchmark_script("phenomena").main([*arguments, "--out", str(tmp_path / "data")]) == 0
    captured = capsys.readouterr()
    rows = _table(captured.out)
    assert [row[0] for row in rows] == ["nickname", "registers, 70% overlap, 30% namesakes"]
    for row in rows:
        ours, peer = [float(x) for x in row[1:4]], [float(x) for x in row[4:7]]
        assert all(0.0 <= x <= 1.0 for x in ours + peer)
        assert 0.5 <= float(row[7]) <= 0.99 and row[8].endswith(" s")
    assert captured.err.count("peer F1") == 2  # one progress line per data set
    assert (tmp_path / "data" / "nickname" / "truth.csv").is_file()
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [row["data"] for row in document["rows"]] == ["nickname", "overlap"]
    for row in document["rows"]:
        assert {"precision", "recall", "f1"} <= set(row["ours"]) & set(row["peer"])


def test_each_variant_gets_its_own_rows(tmp_path: Path, capsys) -> None:
    arguments = ["--size", "200", "--phenomena", "swap", "--variant", "hard_negatives=0"]
    assert (
        benchmark_script("phenomena").main([*arguments, "--variant", "error_model=one-error"]) == 0
    )
    rows = _table(capsys.readouterr().out)
    assert [row[0] for row in rows] == ["swap (hard_negatives=0)", "swap (error_model=one-error)"]
    assert rows[0][4:8] == rows[1][4:8]  # the peer runs once per data set


def test_the_mapping_follows_the_error_model_unless_the_paper_one_is_asked_for() -> None:
    script = benchmark_script("phenomena")
    assert script.chosen_mapping("default", "registers") == REGISTER_MAPPING
    assert script.chosen_mapping("default", "one-error") == DEFAULT_MAPPING
    assert script.chosen_mapping("paper", "registers") == DEFAULT_MAPPING
    combined = script.chosen_mapping("paper+combined", "registers")
    assert combined == (*DEFAULT_MAPPING, ("first+middle+last", "first+last"))
    with pytest.raises(SystemExit):
        script.main(["--mapping", "mine"])


def test_an_unknown_data_set_is_refused() -> None:
    with pytest.raises(SystemExit):
        benchmark_script("phenomena").main(["--phenomena", "date"])
