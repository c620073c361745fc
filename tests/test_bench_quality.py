"""The quality benchmark on a small grid: files, numbers that must hold, the paper's trend."""

import csv
import json
from pathlib import Path

import pytest

from pprl.bench.data import make_task, read_reference
from pprl.bench.quality import PAPER, ablation_variants, default_variant, run_cell
from pprl.cli import main
from pprl.protocol.errors import InputError
from pprl.protocol.method import method_params


def test_reads_the_papers_one_column_format(tmp_path: Path) -> None:
    path = tmp_path / "actors.csv"
    path.write_text("CHIANG_KAI-SHEK\nDom_DeLuise\n\nBEULAH_BONDI\n", encoding="utf-8")
    assert read_reference(path, 2) == {"first": ["CHIANG", "DOM"], "last": ["KAI-SHEK", "DELUISE"]}
    assert len(read_reference(path, 3)["first"]) == 3


def test_reads_the_projects_csv_format(tmp_path: Path) -> None:
    path = tmp_path / "ref.csv"
    path.write_text("last,first,extra\nLee,Ann,x\nMoe,Bo,y\n", encoding="utf-8")
    assert read_reference(path, 2) == {"first": ["ANN", "BO"], "last": ["LEE", "MOE"]}


@pytest.mark.parametrize(
    ("text", "rows", "words"),
    [
        ("ANN_LEE\nJUST-ONE-NAME\n", 1, "row 2"),
        ("A_B_C\n", 1, "one underscore"),
        ("ANN_LEE\n", 2, "asked for 2 reference rows, the file has 1"),
        ("first,middle\nA,B\n", 1, "last"),
    ],
)
def test_bad_reference_files_are_named_with_row_and_field(
    tmp_path: Path, text: str, rows: int, words: str
) -> None:
    path = tmp_path / "ref.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_reference(path, rows)
    assert str(path) in str(error.value) and words in str(error.value)


def test_missing_reference_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_reference(tmp_path / "nope.csv", 10)


def test_a_cell_counts_every_pair_for_both_parties_and_the_plain_baseline() -> None:
    task = make_task(400, seed=3)
    reference = read_reference(None, 100)
    rows = run_cell(task, reference, [PAPER, default_variant()], seed=3)
    assert sum(rows[0]["reference_overlap"].values()) == 0  # built-in reference is held out
    assert [r["variant_name"] for r in rows] == ["paper", "default"]
    for row in rows:
        for role in ("alice", "bob", "agreed", "plain"):
            q = row[role]
            assert q["tp"] + q["fn"] == 400  # every true pair is counted, found or not
            assert 0.0 <= q["precision"] <= 1.0
        assert row["alice_match_seconds"] > 0 and row["plain_match_seconds"] > 0
        # The agreed linkage is the intersection: never more true pairs than either party.
        assert row["agreed"]["tp"] <= min(row["alice"]["tp"], row["bob"]["tp"])
    paper, ours = rows
    assert ours["agreed"]["f1"] >= 0.97
    assert ours["alice"]["precision"] > paper["alice"]["precision"]
    assert ours["plain"]["f1"] >= 0.97


def test_ablation_names_are_distinct_and_start_from_the_paper() -> None:
    names = [v.name for v in ablation_variants()]
    assert len(set(names)) == len(names)
    assert names[0] == "paper" and "default" in names


def test_small_grid_writes_tables_and_figures_and_shows_the_papers_trend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    code = main(
        [
            "bench", "quality", "--sizes", "250,1000", "--reference-rows", "100",
            "--training", "300", "--repetitions", "2", "--out", str(out), "--plots",
        ]
    )  # fmt: skip
    assert code == 0
    document = json.loads((out / "quality.json").read_text())
    assert len(document["rows"]) == 2 * 2 * 2  # sizes x variants x repetitions
    assert document["settings"]["command"].startswith("pprl bench quality --sizes 250,1000")
    summary = {(e["size"], e["variant"]): e for e in document["summary"]}
    assert len(summary) == 4 and all(e["repetitions"] == 2 for e in summary.values())
    # Paper mode: precision falls as the files grow; the default mode holds up.
    assert (
        summary[1000, "paper"]["alice"]["precision"]["mean"]
        < summary[250, "paper"]["alice"]["precision"]["mean"]
    )
    for size in (250, 1000):
        assert summary[size, "default"]["agreed"]["f1"]["mean"] >= 0.97
    with (out / "quality.csv").open(encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == 8 and "alice_precision" in lines[0] and "plain_recall" in lines[0]
    for figure in ("quality_precision_recall.png", "quality_time.png"):
        assert (out / figure).read_bytes().startswith(b"\x89PNG")
    printed = capsys.readouterr().out
    assert "| 1,000 | 100 | 300 | linear | default |" in printed
    # The saved run prints the same table again, and redraws its figures elsewhere.
    assert main(["bench", "report", str(out / "quality.json"), "--plots", str(tmp_path / "f")]) == 0
    again = capsys.readouterr().out
    assert again.startswith("command: pprl bench quality --sizes 250,1000")
    assert printed.split("\n\n")[0] in again
    assert (tmp_path / "f" / "quality_time.png").exists()
    assert main(["bench", "report", str(out / "quality.json"), "--no-times"]) == 0
    untimed = capsys.readouterr().out
    assert "match s" not in untimed and "| 1,000 | 100 | 300 | linear | default |" in untimed


def test_a_grid_with_an_error_model_namesakes_and_register_training(tmp_path: Path) -> None:
    out = tmp_path / "results"
    code = main(
        [
            "bench", "quality", "--sizes", "200", "--reference-rows", "100", "--training", "200",
            "--repetitions", "1", "--mode", "default", "--errors", "registers",
            "--overlap", "0.8", "--namesakes", "0.5", "--training-errors", "registers",
            "--no-plain", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    document = json.loads((out / "quality.json").read_text())
    settings = document["settings"]
    assert (settings["error_model"], settings["namesakes"]) == ("registers", 0.5)
    assert settings["errors_per_row"] == 1
    (row,) = document["rows"]
    assert row["variant_corruption"] == "registers"
    assert row["agreed"]["tp"] + row["agreed"]["fn"] == 160


def test_make_task_passes_the_error_model_and_namesakes_on() -> None:
    task = make_task(200, seed=4, error_model="middle", overlap=0.5, namesakes=1.0)
    assert len(task.truth) == 100
    alice = set(zip(task.alice["first"], task.alice["last"], strict=True))
    bob = list(zip(task.bob["first"], task.bob["last"], strict=True))
    new = [i for i in range(200) if i not in {b for _, b in task.truth}]
    assert all(bob[i] in alice for i in new)


@pytest.mark.parametrize("text", [None, "not json", '{"settings": {}}'])
def test_report_refuses_what_is_not_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None
) -> None:
    path = tmp_path / "results.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    assert main(["bench", "report", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["--errors", "0"],
        ["--errors", "3-1"],
        ["--errors", "sloppy"],
        ["--namesakes", "2"],
        ["--training-errors", "sloppy"],
        ["--sizes", "0"],
        ["--overlap", "2"],
    ],
)
def test_bad_arguments_exit_with_usage_errors(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "quality", *args])
    assert exit_info.value.code == 2


def test_unknown_kernel_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "quality", "--kernels", "poly", "--out", str(tmp_path)])
    assert code == 2
    assert "poly" in capsys.readouterr().err


def test_candidate_matching_keeps_what_the_all_pairs_scan_keeps_under_noise() -> None:
    """The benchmark measures the daemon's configuration: noise, its features and candidates."""
    task = make_task(300, seed=5)
    reference = read_reference(None, 100)
    noisy = method_params(noise_sigma=1.0)
    assert noisy.feature == "projected-cosine" and noisy.hard_negatives == 0
    ours = default_variant(noisy)
    runs = {
        mode: run_cell(task, reference, [ours], 5, method=noisy, matching_mode=mode)[0]
        for mode in ("all-pairs", "candidates")
    }
    for role in ("alice", "bob", "agreed"):
        assert runs["candidates"][role] == runs["all-pairs"][role]
    row = runs["candidates"]
    assert (row["noise_sigma"], row["feature"], row["matching"]) == (
        1.0,
        "projected-cosine",
        "candidates",
    )
    assert row["agreed"]["f1"] >= 0.7  # noise costs quality, but the features still link
    clean = run_cell(task, reference, [default_variant()], 5, with_plain=False)[0]
    assert clean["agreed"]["f1"] > row["agreed"]["f1"]


@pytest.mark.parametrize("command", ["quality", "scale"])
def test_negative_noise_is_an_input_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code = main(["bench", command, "--noise-sigma", "-0.5", "--out", str(tmp_path)])
    assert code == 2
    assert "--noise-sigma must be >= 0, got -0.5" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(
    "args",
    [["--matching", "some"], ["--feature", "euclid"], ["--noise-sigma", "lots"]],
)
def test_bad_release_options_exit_with_usage_errors(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "quality", *args])
    assert exit_info.value.code == 2


def test_a_cell_refuses_an_unknown_matching_mode() -> None:
    with pytest.raises(ValueError, match="unknown matching 'some'"):
        run_cell(make_task(20, seed=1), read_reference(None, 10), [PAPER], 1, matching_mode="some")
