"""Soft linkage through two daemons: each writes its records' K best peer records as the
peer's per-run tokens, and its own token map, which only it can read back to records."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pprl.party.local import PARTIES, read_truth
from pprl.party.storage.artifacts import OWN_TOKENS_CSV, SOFT_LINKS_CSV
from pprl.party.storage.state import run_dir
from tests.conftest import coordinate

pytestmark = pytest.mark.integration


def _soft_top_k(k: int, parties: tuple[str, ...] = PARTIES):
    def configure(deployment) -> None:
        for name in parties:
            config = deployment.parties[name].config
            text = config.read_text(encoding="utf-8").replace(
                "[method]\n", f"[method]\nsoft_top_k = {k}\n"
            )
            config.write_text(text, encoding="utf-8")

    return configure


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_each_party_writes_its_records_k_best_peer_records_as_tokens(deploy) -> None:
    deployment = deploy(encoding="reference", size=300, overlap=0.9, configure=_soft_top_k(3))
    summary_path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(summary_path))
    assert result.returncode == 0, result.stderr
    run_id = json.loads(summary_path.read_text())["run_id"]
    runs = {n: run_dir(deployment.parties[n].state_dir, run_id) for n in PARTIES}
    truth = read_truth(deployment.workdir / "data" / "truth.csv")
    for own, peer in (("alice", "bob"), ("bob", "alice")):
        soft = _rows(runs[own] / SOFT_LINKS_CSV)
        tokens = {r[f"{peer}_token"]: r[f"{peer}_id"] for r in _rows(runs[peer] / OWN_TOKENS_CSV)}
        assert len(soft) == 3 * 300 and len(tokens) == 300
        assert list(soft[0]) == [f"{own}_id", "rank", f"{peer}_token", "score"]
        by_record: dict[str, list[dict[str, str]]] = {}
        for row in soft:
            by_record.setdefault(row[f"{own}_id"], []).append(row)
        assert len(by_record) == 300
        for rows in by_record.values():
            assert [r["rank"] for r in rows] == ["1", "2", "3"]
            scores = [float(r["score"]) for r in rows]
            assert scores == sorted(scores, reverse=True)
        # The soft file names no peer id; the peer's own map turns every token into one.
        peer_ids = set(tokens.values())
        text = (runs[own] / SOFT_LINKS_CSV).read_text(encoding="utf-8")
        assert not any(peer_id in text for peer_id in peer_ids)
        partners = {(a, b) if own == "alice" else (b, a) for a, b in truth}
        found = {(r[f"{own}_id"], tokens[r[f"{peer}_token"]]) for r in soft}
        first = {(r[f"{own}_id"], tokens[r[f"{peer}_token"]]) for r in soft if r["rank"] == "1"}
        # Without noise the true partner is nearly always first, and within the three.
        assert len(partners & found) >= 0.98 * len(partners)
        assert len(partners & first) >= 0.95 * len(partners)


def test_soft_top_k_on_one_side_only_is_a_mismatch_naming_the_key(deploy) -> None:
    deployment = deploy(encoding="reference", size=200, configure=_soft_top_k(3, ("alice",)))
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "agreement digests differ" in output and "soft_top_k" in output


def test_more_soft_records_than_the_peer_has_is_refused_at_match(deploy) -> None:
    deployment = deploy(encoding="reference", size=200, configure=_soft_top_k(500))
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "MATCH failed" in output and "[method] soft_top_k = 500" in output
    assert "than the peer has (" in output and "alice.toml" in output
    for name in PARTIES:
        assert not list(deployment.parties[name].state_dir.rglob(SOFT_LINKS_CSV))
