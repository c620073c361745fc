"""Sealed linkage through two real daemons over loopback mutual TLS: blinded keys and
encrypted scores on the wire, no vector, and what its configuration refuses."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

pytest.importorskip("tenseal")

from pprl.party.local import Deployment, evaluate, read_truth
from pprl.party.storage.artifacts import OWN_KEYS, PEER_KEYS_TWICE, PEER_TENSOR
from pprl.party.storage.state import run_dir
from tests.conftest import coordinate

pytestmark = pytest.mark.integration

# Keys for the built-in demo's first, middle and last names: each needs two of them to agree
# (a code or an initial), so that a typo in one name still leaves a key in common.
RECIPES = [
    "first:soundex+last:soundex",
    "first:initial+last",
    "first+last:initial",
    "first:initial+middle:initial+last:initial",
]


def _sealed(recipes: list[str] = RECIPES, extra: str = "") -> Callable[[Deployment], None]:
    """A configure hook: sealed linkage on both daemons."""

    def configure(deployment: Deployment) -> None:
        keys = "[" + ", ".join(json.dumps(r) for r in recipes) + "]"
        for party in deployment.parties.values():
            text = party.config.read_text(encoding="utf-8")
            text = text.replace(
                "[method]\n", f'[method]\nencoding = "sealed"\nsealed_keys = {keys}\n{extra}', 1
            )
            party.config.write_text(text, encoding="utf-8")

    return configure


def _run(deployment: Deployment, *extra: str) -> tuple[subprocess.CompletedProcess, dict | None]:
    path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(path), *extra)
    return result, json.loads(path.read_text()) if path.exists() else None


def test_two_daemons_link_sealed_and_send_no_vectors(deploy):
    deployment = deploy(size=300, overlap=0.9, configure=_sealed())
    result, summary = _run(deployment)
    assert result.returncode == 0, result.stderr
    assert "candidate pairs" in result.stdout and "under encryption" in result.stdout
    quality = evaluate(
        deployment, summary["run_id"], read_truth(deployment.workdir / "data/truth.csv")
    )
    assert quality["linkage"]["f1"] >= 0.9, quality
    for name in ("alice", "bob"):
        state = run_dir(deployment.parties[name].state_dir, summary["run_id"])
        # No tensor was received; the peer's keys arrived blinded twice, one set per row.
        assert not (state / PEER_TENSOR).exists()
        assert (state / PEER_KEYS_TWICE).exists() and (state / OWN_KEYS).exists()
