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
from pprl.party.storage.artifacts import PEER_MATCHES
from pprl.party.storage.state import run_dir
from tests.faults.test_faults import (
    KILLED,
    Pair,
    _resumed_equals,
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
