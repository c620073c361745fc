"""The peer (the anonlink stack) and the FEBRL4 files; skipped without the optional extra `peer`."""

import csv
import importlib.util
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("anonlink")
pytest.importorskip("recordlinkage")
if importlib.util.find_spec("clkhash") is None:
    pytest.skip("clkhash is not installed (optional extra peer)", allow_module_level=True)

from lab.clk_attack import attack_clks
from pprl.bench.febrl import FIELDS
from pprl.bench.peer import (
    NAME_FIELDS,
    THRESHOLDS,
    Records,
    all_candidates,
    candidates,
    encode,
    read_records,
    run_peer,
    solve,
    solve_all,
)
from pprl.cli import main
from pprl.party.local import read_truth, write_demo_data
from pprl.protocol.data import synthetic
from pprl.protocol.errors import InputError


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 built-in people and a copy with one error per row (alice.csv, bob.csv, truth.csv)."""
    out = tmp_path_factory.mktemp("generated")
    write_demo_data(out, 300, seed=5)
    return out


def _peer_command(data: Path, *arguments: str) -> list[str]:
    """`pprl bench peer` on the generated files, with further arguments."""
    files = ["--records-a", str(data / "alice.csv"), "--records-b", str(data / "bob.csv")]
    return ["bench", "peer", *files, "--truth", str(data / "truth.csv"), *arguments]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_febrl4_files_hold_5000_people_a_side_and_their_pairs(tmp_path: Path) -> None:
    assert main(["bench", "data", "febrl4", "--out", str(tmp_path)]) == 0
    a, b = _rows(tmp_path / "records_a.csv"), _rows(tmp_path / "records_b.csv")
    truth = read_truth(tmp_path / "truth.csv")
    assert len(a) == len(b) == len(truth) == 5000
    assert list(a[0]) == ["id", *FIELDS]
    assert a[0]["id"] == "rec-1070-org" and a[0]["given_name"] == "michaela"
    assert a[0]["postcode"] == "4223" and a[0]["date_of_birth"] == "19151111"
    ids_a, ids_b = {r["id"] for r in a}, {r["id"] for r in b}
    assert {x for x, _ in truth} == ids_a and {y for _, y in truth} == ids_b
    assert all(x.split("-")[1] == y.split("-")[1] for x, y in truth)
    # FEBRL's missing values are empty cells, never "nan".
    assert sum(r["given_name"] == "" for r in b) > 100
    assert not any(value == "nan" for r in a + b for value in r.values())


def test_febrl_others_are_the_originals_of_febrl1_to_3_under_ids_of_their_own(
    tmp_path: Path,
) -> None:
    assert main(["bench", "data", "febrl4", "--out", str(tmp_path), "--others"]) == 0
    others = _rows(tmp_path / "others.csv")
    ids = [r["id"] for r in others]
    assert len(others) == len(set(ids)) == 6500
    assert list(others[0]) == ["id", *FIELDS]
    assert all(i.startswith(("febrl1-", "febrl2-", "febrl3-")) and i.endswith("-org") for i in ids)
    sets = Counter(i.split("-", 1)[0] for i in ids)
    assert sets == {"febrl1": 500, "febrl2": 4000, "febrl3": 2000}


def test_the_peer_links_generated_data_at_its_best_threshold(generated: Path) -> None:
    truth = read_truth(generated / "truth.csv")
    result = run_peer(
        generated / "alice.csv", generated / "bob.csv", truth, ["first", "last"], workers=1
    )
    assert result.best.quality.f1 > 0.9
    assert result.best.threshold in THRESHOLDS
    assert [p.threshold for p in result.sweep] == sorted(THRESHOLDS)
    assert result.best.quality.f1 == max(p.quality.f1 for p in result.sweep)
    assert set(result.seconds) >= {"encode", "match", "sweep"}


def test_one_solve_at_the_floor_gives_the_linkage_at_every_threshold(generated: Path) -> None:
    fields = ["first", "middle", "last"]
    a, b = (
        read_records(generated / "alice.csv", fields),
        read_records(generated / "bob.csv", fields),
    )
    clks_a, clks_b = encode(a, fields, workers=1), encode(b, fields, workers=1)
    found, reference = all_candidates(clks_a, clks_b, 0.5), candidates(clks_a, clks_b, 0.5)
    for ours, theirs in zip(
        (found[0], *found[1], *found[2]), (reference[0], *reference[1], *reference[2]), strict=True
    ):
        assert list(ours) == list(theirs)
    links = solve_all(found)
    for threshold in (0.5, 0.7, 0.8, 0.9, 0.95):
        direct = set(solve(candidates(clks_a, clks_b, threshold)))
        assert {pair for sim, pair in links if sim >= threshold} == direct


def test_the_peer_refuses_a_field_the_files_lack(generated: Path, capsys) -> None:
    with pytest.raises(InputError, match=r"field 'surname'.*no such column.*first, middle, last"):
        run_peer(generated / "alice.csv", generated / "bob.csv", set(), ["first", "surname"])
    code = main(_peer_command(generated, "--fields", "given_name"))
    assert code == 2
    assert "field 'given_name': no such column" in capsys.readouterr().err


def test_the_command_prints_the_table_and_writes_json(
    generated: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "peer.json"
    arguments = ["--fields", "first,last", "--thresholds", "0.6:0.9:0.1", "--workers", "1"]
    code = main(_peer_command(generated, *arguments, "--json", str(out)))
    assert code == 0
    assert "<- best F1" in capsys.readouterr().out
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [p["threshold"] for p in document["sweep"]] == [0.6, 0.7, 0.8, 0.9]
    assert document["best"]["f1"] == max(p["f1"] for p in document["sweep"])
    assert document["fields"] == ["first", "last"] and document["truth_pairs"] == 300
    assert 0 < document["candidate_pairs"]["best"] <= document["candidate_pairs"]["floor"]


def test_the_key_holder_reads_every_listed_name_from_anonlinks_clks() -> None:
    """The attack bloom_compare.py runs on the peer's CLKs: a record's listed names are read
    back exactly (the longest listed name whose bits its CLK holds), an unlisted one is not."""
    census = synthetic.census_names()
    firsts = [str(n).lower() for n in census.first.names[:400]]
    lasts = [str(n).lower() for n in census.last.names[:400]]
    rng = np.random.default_rng(3)
    values = [[firsts[i], lasts[j]] for i, j in rng.integers(0, 400, (60, 2))]
    values.append(["zqxjvw", lasts[0]])  # a given name no list holds
    records = Records(Path("generated"), [str(i) for i in range(61)], values)
    leakage = attack_clks(records, NAME_FIELDS, NAME_FIELDS, [*firsts, *lasts])
    assert leakage.by_field["surname"] == 1.0
    assert leakage.by_field["given_name"] == pytest.approx(60 / 61)
    assert leakage.records_reidentified == pytest.approx(60 / 61)
    assert leakage.records_exposed == 1.0
