"""Sealed linkage, the daemons' default, under the faults tests/faults/test_faults.py gives the
reference release: each daemon killed after each phase, and the scoring party gone in the
middle of its encrypted stream. The two daemons run the same code in every phase but MATCH,
where each scores its own pairs with the other evaluating them (a stream each way): each
phase is killed in one daemon, alternately, and MATCH in both."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from pprl.party.local import PARTIES, Privacy
from pprl.party.storage.artifacts import PEER_MATCHES
from pprl.party.storage.state import run_dir
from tests.faults.test_faults import KILLED, Pair, _resumed_equals, _run_id

pytestmark = [pytest.mark.integration, pytest.mark.faults]


@pytest.fixture(scope="module")
def sealed_pair(tmp_path_factory, trial_privacy: Privacy) -> Iterator[Pair]:
    assert trial_privacy.dictionary is not None
    pair = Pair(tmp_path_factory.mktemp("sealed-faults"), trial_privacy.dictionary, "sealed")
    yield pair
    pair.stop()


@pytest.fixture(scope="module")
def sealed_undisturbed(sealed_pair: Pair) -> dict[str, str]:
    """The linkage of an undisturbed sealed run; a second one gives the same bytes (the
    flooding and the random factors change the ciphertexts, not the decisions)."""
    first = sealed_pair.linkage(sealed_pair.finish())
    assert first["alice"].count("\n") > 30
    assert sealed_pair.linkage(sealed_pair.finish()) == first
    return first


@pytest.fixture
def sealed_fresh(sealed_pair: Pair, sealed_undisturbed) -> Pair:
    sealed_pair.ensure_running()
    return sealed_pair


@pytest.mark.parametrize(("phase", "victim"), [*KILLED.items(), ("match", "bob")])
def test_a_sealed_daemon_killed_in_any_phase_resumes_to_the_same_linkage(
    sealed_fresh, sealed_undisturbed, phase, victim
):
    process = sealed_fresh.restart(victim, failpoint=f"kill-after:{phase}")
    code, out, err = sealed_fresh.coordinate()
    assert code != 0 and f"{phase.upper()} failed" in err
    assert process.wait(10) == -signal.SIGKILL
    sealed_fresh.deployment.processes.pop(victim, None)
    _resumed_equals(sealed_fresh, sealed_undisturbed, _run_id(out))


def test_a_scorer_gone_mid_stream_is_a_clear_error_and_the_run_resumes(
    sealed_fresh, sealed_undisturbed
):
    """Killed after sending its scoring header: the evaluator's stream ends, MATCH fails on
    both sides with the peer named, nothing was revealed, and the resumed run links as the
    undisturbed one."""
    process = sealed_fresh.restart("alice", failpoint="kill-mid-stream")
    code, out, err = sealed_fresh.coordinate()
    assert code != 0 and "MATCH failed" in err
    assert process.wait(10) == -signal.SIGKILL
    sealed_fresh.deployment.processes.pop("alice", None)
    run_id = _run_id(out)
    for name in PARTIES:
        state = run_dir(sealed_fresh.deployment.parties[name].state_dir, run_id)
        assert not list(state.glob(f"{PEER_MATCHES}*"))  # no id crossed
    _resumed_equals(sealed_fresh, sealed_undisturbed, run_id)
