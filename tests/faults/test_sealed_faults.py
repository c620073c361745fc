"""Sealed linkage, the daemons' default, under the faults tests/faults/test_faults.py gives the
reference release: each daemon killed after each phase, and the scoring party gone in the
middle of its encrypted stream. Only the phases whose work sealed linkage changes are killed
here: SMASH (it keeps its vectors and a blinding secret), EXCHANGE (blinded keys both ways)
and MATCH, in both daemons (each scores its own pairs with the other evaluating them). AGREE,
TRAIN, REVEAL and LINK run the same steps for every encoding; test_faults.py kills those."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pprl.party.local import PARTIES, Privacy
from pprl.party.storage.artifacts import OWN_MATCHES, PEER_MATCHES, PEER_NAMED
from pprl.party.storage.state import run_dir
from tests.faults.test_faults import (
    KILLED,
    Pair,
    _resumed_equals,
    _run_id,
    killed,
    killed_in_turn,
    pair_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.faults]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, trial_privacy: Privacy) -> Iterator[Pair]:
    """Sealed daemons, which tests/faults/conftest.py's `undisturbed` and `fresh` build on."""
    yield from pair_of(tmp_path_factory, trial_privacy, "sealed")


SEALED_PHASES = ("smash", "exchange", "match")
# Every sealed phase killed in one run, then MATCH in the other daemon in a run of its own: a
# daemon that finished MATCH before its peer was killed does not run it again on resuming.
KILLS = [
    [(phase, KILLED[phase]) for phase in SEALED_PHASES],
    [("match", "alice" if KILLED["match"] == "bob" else "bob")],
]


@pytest.mark.parametrize("kills", KILLS, ids=lambda kills: "-".join(map("-".join, kills)))
def test_a_sealed_daemon_killed_after_each_of_its_phases_resumes_to_the_same_linkage(
    fresh, undisturbed, kills
):
    _resumed_equals(fresh, undisturbed, killed_in_turn(fresh, kills))


def test_a_scorer_gone_mid_stream_is_a_clear_error_and_the_run_resumes(fresh, undisturbed):
    """Killed after sending its scoring header: the evaluator's stream ends, MATCH fails on
    both sides with the peer named, nothing was revealed, and the resumed run links as the
    undisturbed one."""
    run_id = killed(fresh, "alice", "kill-mid-stream", "match")
    for name in PARTIES:
        state = run_dir(fresh.deployment.parties[name].state_dir, run_id)
        assert not list(state.glob(f"{PEER_MATCHES}*"))  # no id crossed
    _resumed_equals(fresh, undisturbed, run_id)


def test_an_evaluator_returning_values_of_its_own_is_caught_before_anything_is_named(
    fresh, undisturbed
):
    """Bob, evaluating alice's slots, returns fresh encryptions of values of his own in place
    of his results (what an evaluator learning signs of her key would send; the tamper-scores
    failpoint). Alice's check slots decrypt to other buckets than they must, so her MATCH
    fails with BAD_CIPHERTEXT before she names a slot or keeps a match; the run resumed with
    an honest bob links as the undisturbed one."""
    fresh.restart("bob", failpoint="tamper-scores")
    code, out, err = fresh.coordinate()
    assert code != 0 and "MATCH failed" in err, err
    assert "BAD_CIPHERTEXT" in err and "fail this party's checks" in err, err
    run_id = _run_id(out)
    alice, bob = (run_dir(fresh.deployment.parties[name].state_dir, run_id) for name in PARTIES)
    assert not list(alice.glob(f"{OWN_MATCHES}*"))
    assert not list(bob.glob(f"{PEER_NAMED}*"))  # no slot of alice's resolved
    fresh.restart("bob")
    _resumed_equals(fresh, undisturbed, run_id)
