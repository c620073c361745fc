"""`pprl assess-reference`: a candidate reference set's noise, leakage and linkage on generated
data, before any run; bad input gets a message, not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pprl.files import generated
from pprl.protocol.data import synthetic


def _assess(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pprl", "assess-reference", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_set_is_assessed_at_the_automatic_noise_and_at_each_sigma_asked(tmp_path: Path):
    reference = tmp_path / "reference.csv"
    generated.write_reference_csv(reference, synthetic.default_reference(120))
    out = tmp_path / "report.json"
    result = _assess(
        *("--reference", str(reference), "--size", "200", "--audit-records", "80"),
        *("--sigma", "0", "--json", str(out)),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["rows"] == 120 and report["sigma0"] > 0
    points = {row["sigma"]: row for row in report["points"]}
    automatic = report["automatic"]["sigma"]
    assert set(points) == {0.0, automatic} and automatic > 0
    assert points[0.0]["reidentified"] > 0.5 and points[0.0]["f1"] >= 0.95  # raw: linked, leaky
    assert points[automatic]["reidentified"] <= 0.10
    assert points[automatic]["f1"] < points[0.0]["f1"]
    assert f"automatic noise at a 10% gate: sigma {automatic:g}" in result.stdout


def test_a_missing_set_or_a_bad_setting_is_a_message(tmp_path: Path) -> None:
    missing = _assess("--reference", str(tmp_path / "absent.csv"))
    assert missing.returncode == 2 and "reference file not found" in missing.stderr
    assert "Traceback" not in missing.stderr
    reference = tmp_path / "reference.csv"
    generated.write_reference_csv(reference, synthetic.default_reference(50))
    bad = _assess("--reference", str(reference), "--limit", "0")
    assert bad.returncode == 2 and "--limit" in bad.stderr
    negative = _assess("--reference", str(reference), "--sigma", "-1")
    assert negative.returncode == 2 and "--sigma must be >= 0" in negative.stderr
