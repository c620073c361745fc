"""benchmarks/coordinates.py: registers with points within the tolerance, linked and
tabulated, and the peer's trilateration of released points."""

import json
from argparse import Namespace
from pathlib import Path

from pprl.protocol.data.canonical import point_of
from pprl.protocol.data.distances import haversine_metres
from tests.scripts import benchmark_script


def test_bobs_points_lie_within_the_tolerance_of_alices() -> None:
    script = benchmark_script("coordinates")
    args = Namespace(
        size=200, seed=3, errors="registers", overlap=0.7, namesakes=0.3, box=script.DEFAULT_BOX
    )
    alice, bob, truth = script.registers(args, 25.0)
    assert len(truth) == 140 and len(alice["pos"]) == len(bob["pos"]) == 200
    apart = [
        haversine_metres(*point_of(alice["pos"][a]), *point_of(bob["pos"][b])) for a, b in truth
    ]
    assert max(apart) <= 25.0 and min(apart) < 10.0
    others = {b for _, b in truth} ^ set(range(200))
    assert all(point_of(bob["pos"][b])[0] > 48.79 for b in others)  # in the box too
    # The same names at every tolerance; only the points move.
    again = script.registers(args, 100.0)
    assert again[0] == alice and again[1]["last"] == bob["last"] and again[1]["pos"] != bob["pos"]


def test_a_small_run_links_tabulates_and_locates(tmp_path: Path, capsys) -> None:
    script = benchmark_script("coordinates")
    out = tmp_path / "coordinates.json"
    args = ["--size", "200", "--reference-rows", "200", "--tolerances", "50"]
    assert script.main([*args, "--trilaterate", "5", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = {row["attributes"]: row for row in result["rows"]}
    assert set(rows) == {"names", "names + coordinates", "coordinates"}
    assert rows["names + coordinates"]["f1"] >= max(rows["names"]["f1"], 0.9)
    assert rows["coordinates"]["f1"] > 0.8  # 200 people in 100 km2: 50 m tells them apart
    assert result["trilateration"]["50"]["max_m"] < 50  # finer than the tolerance
    assert "| 50 m | names + coordinates |" in capsys.readouterr().out
