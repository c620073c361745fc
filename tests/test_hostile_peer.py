"""A hostile peer through real daemons: Bob's daemon is changed (failpoints) to do what a
crafting organisation would, and Alice's refuses it by name before Bob learns what the bound
withholds. The stubs of tests/test_sealed_daemons.py send the same breaches message by
message; here the whole run goes as a changed daemon would drive it."""

from __future__ import annotations

import json

from pprl.failpoints import FAILPOINT_ENV
from pprl.party.local import Deployment, start_daemon, stop_daemon
from pprl.party.storage.artifacts import OWN_MATCHES, PEER_MATCHES, PEER_NAMED
from tests.conftest import coordinate

# Keys on one name each: loose, so that the slots outnumber what Bob's rows may name.
LOOSE = ["first:soundex", "last:soundex"]
# Two keys of a row's own values, and both names' codes as a fallback: a row that keeps one
# of its keys and adds the fallback's probing tag holds more than a keyless row may.
WITH_FALLBACK = [
    "first:soundex+last:soundex",
    "first:initial+last",
    "?first:soundex+middle:soundex",
]


def _sealed(recipes: list[str], join: str):
    def configure(deployment: Deployment) -> None:
        keys = "[" + ", ".join(json.dumps(r) for r in recipes) + "]"
        head = f'[method]\nencoding = "sealed"\nsealed_keys = {keys}\nsealed_join = "{join}"\n'
        for party in deployment.parties.values():
            text = party.config.read_text(encoding="utf-8")
            party.config.write_text(text.replace("[method]\n", head, 1), encoding="utf-8")

    return configure


def _hostile_bob(deploy, recipes: list[str], join: str, failpoint: str, monkeypatch):
    deployment = deploy(size=120, overlap=0.9, configure=_sealed(recipes, join))
    stop_daemon(deployment, "bob")
    monkeypatch.setenv(FAILPOINT_ENV, failpoint)
    start_daemon(deployment, "bob")
    monkeypatch.delenv(FAILPOINT_ENV)
    return deployment


def test_a_scorer_naming_every_slot_is_refused_and_resolves_nothing(deploy, monkeypatch):
    """Naming every slot would give Bob the keys' graph the hidden join withholds, and every
    slot's bucket beside: Alice resolves none of them (NAMING_BOUND) and no match crosses."""
    deployment = _hostile_bob(deploy, LOOSE, "hidden", "name-every-slot", monkeypatch)
    result = coordinate(deployment)
    assert result.returncode != 0, result.stderr
    assert "NAMING_BOUND" in result.stderr and "more than the peer's rows need" in result.stderr
    alice = deployment.parties["alice"].state_dir
    assert not list(alice.rglob(PEER_NAMED)), "Alice resolved slots for Bob"
    # Alice's own MATCH is hers; nothing of Bob's crosses, and he keeps no match.
    assert not list(alice.rglob(PEER_MATCHES))
    assert not list(deployment.parties["bob"].state_dir.rglob(OWN_MATCHES))


def test_rows_that_keep_their_keys_and_probe_with_the_fallback_are_refused(deploy, monkeypatch):
    """Every one of Bob's rows keeps a key of its own and adds the fallback's probing tag, to
    find every row of Alice's with the same two names' codes: under the keys' graph Alice
    refuses his keys (KEY_BOUND) before anything is scored."""
    deployment = _hostile_bob(deploy, WITH_FALLBACK, "graph", "probe-with-fallback", monkeypatch)
    result = coordinate(deployment)
    assert result.returncode != 0, result.stderr
    assert "KEY_BOUND" in result.stderr and "probes with a fallback key" in result.stderr
    for name in ("alice", "bob"):
        state = deployment.parties[name].state_dir
        assert not list(state.rglob(OWN_MATCHES)) and not list(state.rglob(PEER_MATCHES))
