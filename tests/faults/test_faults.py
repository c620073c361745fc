"""Fault injection: every phase, each daemon and the coordinator killed or paused, a peer gone
mid-stream, a slow or broken network path, a full disk. Each case ends either in exactly the
linkage an undisturbed run makes (same development seed) or in a clear error, after which
the run resumes to that linkage; never a hang, never a partial result file.

Daemons kill, pause or starve themselves at a chosen point through PPRL_FAILPOINT
(pprl.failpoints); the coordinator is a separate process the test signals.

The second hardening round's cases, each reproduced by a test here or named beside it:
 1. records rewritten during AGREE, then a restart: test_records_rewritten_during_agree_...
 2. calls that never send their request: test_party_defences, ..._hold_no_worker
 3. one's own release sent back: test_party_defences, ..._own_tensor_back_...;
    test_sealed_daemons for blinded keys
 4. values and ids in errors: test_party_defences, test_a_bad_cell_is_named_...; the
    bad-input corpus's `absent` texts
 5. ids a spreadsheet would run: test_record_ids
 6. peer ids that corrupt or deceive: test_hardening, ..._matches_must_be_one_to_one
 7. too many peer records: test_party_defences, ..._more_records_than_this_daemon_...; the
    bad-input corpus's max_peer_records cases
 8. a second daemon on the other loopback: test_hardening, ..._taken_port_or_state_...
 9. Unicode forms: test_unicode_forms
 10. a reference set edited after AGREE: test_a_reference_set_edited_after_agree_...
 11. a full disk at AGREE or EXCHANGE: test_a_full_disk_in_any_phase_... (failpoints) and
    test_a_real_write_limit_... (the kernel's)
 12. two daemons on one state directory: test_hardening, ..._taken_port_or_state_directory_...
 13. readable keys: test_key_warnings; 14. noise no gate proposes: test_noise_proposal
 15. a kill at LINK: test_a_kill_at_link_...; matches before MATCH and the agreement asked
    again and again: test_party_defences; two coordinators at once: test_hardening
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pprl.failpoints import FAILPOINT_ENV
from pprl.party.coordination.coordinator import Coordinator, CoordinatorError
from pprl.party.local import (
    PARTIES,
    Deployment,
    Privacy,
    generated_deployment,
    log_tail,
    start_daemon,
    stop_daemon,
)
from pprl.party.storage.artifacts import (
    BULK,
    DATA_REPORT,
    KEEP_CLOSED_RUNS,
    LINKAGE_CSV,
    MODEL,
    OWN_MATCHES,
    OWN_TENSOR,
    PEER_MATCHES,
    PEER_TENSOR,
)
from pprl.party.storage.state import run_dir
from pprl.protocol.phases import Phase
from tests.conftest import coordinate_command
from tests.faults.proxy import Proxy

pytestmark = [pytest.mark.integration, pytest.mark.faults]

RECORDS, REFERENCE_ROWS, SEED = 60, 300, 5
PHASES = [p.name.lower() for p in Phase if p]
# A phase, and which daemon writes which artifact in it (for the full-disk cases).
WRITES = {
    "agree": DATA_REPORT,
    "smash": OWN_TENSOR,
    "train": MODEL,
    "exchange": PEER_TENSOR,
    "match": OWN_MATCHES,
    "reveal": PEER_MATCHES,
    "link": LINKAGE_CSV,
}


class Pair:
    """Two daemons on generated data with a development seed, restarted as a case needs."""

    def __init__(self, workdir: Path, dictionary: Path, encoding: str = "reference") -> None:
        # This module's cases run the reference release, whose tensors WRITES names; sealed
        # linkage, the default, is tests/faults/test_sealed_faults.py's.
        self.deployment: Deployment = generated_deployment(
            workdir, RECORDS, SEED, reference_rows=REFERENCE_ROWS, overlap=0.9, encoding=encoding
        )
        for setup in self.deployment.parties.values():
            text = setup.config.read_text()
            setup.config.write_text(
                text.replace("[peer]\n", "[peer]\ntimeout_seconds = 5\n")
                # the gate is not under test here: attacking one record with the trial
                # dictionary keeps restarts quick
                .replace(
                    "[privacy]\n",
                    f"[privacy]\naudit_records = 1\ndictionary = {str(dictionary)!r}\n",
                )
                + "[development]\nseed = 11\n"
            )
        self._failpoints: dict[str, str | None] = {}
        for name in PARTIES:
            self._launch(name)
        self._wait_ready()

    def _launch(self, name: str, failpoint: str | None = None) -> subprocess.Popen:
        self._failpoints[name] = failpoint
        saved = os.environ.pop(FAILPOINT_ENV, None)
        if failpoint:
            os.environ[FAILPOINT_ENV] = failpoint
        try:
            return start_daemon(self.deployment, name)
        finally:
            os.environ.pop(FAILPOINT_ENV, None)
            if saved is not None:
                os.environ[FAILPOINT_ENV] = saved

    def _wait_ready(self, seconds: float = 60) -> None:
        """Until both daemons answer. A daemon that exits at start (its port taken in the
        moment between a kill and the restart, say) is started once more, and if it exits
        again the test fails with its log instead of waiting out the deadline."""
        deadline = time.monotonic() + seconds
        relaunched: set[str] = set()
        coordinator = Coordinator(self.deployment.endpoints(), self.deployment.coordinator_tls)
        try:
            while True:
                try:
                    coordinator.wait_ready(1)
                    return
                except CoordinatorError:
                    if time.monotonic() > deadline:
                        raise
                for name, process in list(self.deployment.processes.items()):
                    if process.poll() is None:
                        continue
                    log = log_tail(self.deployment, name)
                    assert name not in relaunched, f"{name} exited at start twice:\n{log}"
                    relaunched.add(name)
                    self._launch(name, self._failpoints.get(name))
        finally:
            coordinator.close()

    def start(self, name: str, failpoint: str | None = None) -> subprocess.Popen:
        """Start one daemon, and the other without a failpoint if a kill left it down; wait
        until both answer."""
        process = self._launch(name, failpoint)
        for other in PARTIES:
            running = self.deployment.processes.get(other)
            if other != name and (running is None or running.poll() is not None):
                self._launch(other)
        self._wait_ready()
        return process

    def restart(self, name: str, failpoint: str | None = None) -> subprocess.Popen:
        stop_daemon(self.deployment, name, signal.SIGKILL)
        return self.start(name, failpoint)

    def ensure_running(self) -> None:
        for name in PARTIES:
            process = self.deployment.processes.get(name)
            if process is None or process.poll() is not None:
                self.deployment.processes.pop(name, None)
                self._launch(name)
        self._wait_ready()

    def coordinator(self, *extra: str) -> subprocess.Popen:
        command = coordinate_command(
            self.deployment, "--wait", "20", "--phase-timeout", "120", *extra
        )
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def coordinate(self, *extra: str) -> tuple[int, str, str]:
        process = self.coordinator(*extra)
        out, err = process.communicate(timeout=240)
        return process.returncode, out, err

    def finish(self) -> str:
        """Resume whatever run is open to its end; its run id."""
        summary = self.deployment.workdir / "summary.json"
        code, _, err = self.coordinate("--json", str(summary))
        assert code == 0, err
        return json.loads(summary.read_text())["run_id"]

    def linkage(self, run_id: str) -> dict[str, str]:
        return {
            name: (
                run_dir(self.deployment.parties[name].state_dir, run_id) / LINKAGE_CSV
            ).read_text()
            for name in PARTIES
        }

    def no_partial_files(self) -> list[Path]:
        return [
            path
            for name in PARTIES
            for path in self.deployment.parties[name].state_dir.rglob("*.tmp")
        ]

    def stop(self) -> None:
        for name in PARTIES:
            stop_daemon(self.deployment, name)


def pair_of(tmp_path_factory, trial_privacy: Privacy, encoding: str) -> Iterator[Pair]:
    """A module's pair of daemons, its `pair` fixture (this module's runs the reference
    release, tests/faults/test_sealed_faults.py's sealed linkage); `undisturbed` and `fresh`
    (tests/faults/conftest.py) build on whichever the module has."""
    assert trial_privacy.dictionary is not None
    pair = Pair(tmp_path_factory.mktemp(f"faults-{encoding}"), trial_privacy.dictionary, encoding)
    yield pair
    pair.stop()


@pytest.fixture(scope="module")
def pair(tmp_path_factory, trial_privacy: Privacy) -> Iterator[Pair]:
    yield from pair_of(tmp_path_factory, trial_privacy, "reference")


def _run_id(lines: str) -> str:
    """The run a coordinator began or resumed, from its first line."""
    first = lines.splitlines()[0]
    assert first.startswith("run "), first
    return first.split()[1].rstrip(":")


def resuming(run_id: str | None) -> tuple[str, ...]:
    """The coordinator's arguments that resume `run_id`; none for a new run."""
    return ("--run-id", run_id) if run_id else ()


def killed(pair: Pair, victim: str, failpoint: str, phase: str, run_id: str | None = None) -> str:
    """A run (`run_id` resumed, or a new one) in which `victim` kills itself at `failpoint`:
    it fails at `phase` and the daemon is gone; the run's id."""
    process = pair.restart(victim, failpoint=failpoint)
    code, out, err = pair.coordinate(*resuming(run_id))
    assert code != 0 and f"{phase.upper()} failed" in err, (phase, victim, err)
    assert process.wait(10) == -signal.SIGKILL, (phase, victim)
    pair.deployment.processes.pop(victim, None)
    return run_id or _run_id(out)


def _resumed_equals(pair: Pair, undisturbed: dict[str, str], run_id: str) -> None:
    """The disturbed run, resumed to its end (if it had not ended), linked as undisturbed."""
    pair.ensure_running()
    code, _, err = pair.coordinate("--run-id", run_id)
    assert code == 0, err
    assert pair.linkage(run_id) == undisturbed
    assert pair.no_partial_files() == []


# Each phase is killed in one daemon, alice and bob in turn, instead of in both: the two run
# the same code in every phase (only sealed linkage, not run here, gives them roles), so this
# still kills every phase and each party. Bob at LINK: alice killed at LINK is
# test_a_kill_at_link_leaves_no_result_file_in_the_unfinished_run's case.
KILLED = {
    "agree": "alice",
    "smash": "bob",
    "train": "alice",
    "exchange": "bob",
    "match": "alice",
    "reveal": "bob",
    "link": "bob",
}
assert list(KILLED) == PHASES, "every phase needs a daemon to kill"


def killed_in_turn(pair: Pair, kills: Sequence[tuple[str, str]]) -> str:
    """One run whose daemons are killed once per (phase, victim), in that order: each kill
    fails the run at its phase, and the next is armed in the restarted victim before the run
    is resumed. The run's id. One run instead of a run per kill, since a resumed run must
    survive the next kill as a new one does, and each run costs the suite seconds."""
    run_id = None
    for phase, victim in kills:
        run_id = killed(pair, victim, f"kill-after:{phase}", phase, run_id)
    assert run_id is not None
    return run_id


def test_a_daemon_killed_in_every_phase_in_turn_resumes_to_the_same_linkage(fresh, undisturbed):
    _resumed_equals(fresh, undisturbed, killed_in_turn(fresh, list(KILLED.items())))


# Each phase is paused in the daemon not killed in it (KILLED): every phase is still paused,
# each party is paused, and across the two tests each daemon is disturbed in every phase.
PAUSED = {phase: "alice" if victim == "bob" else "bob" for phase, victim in KILLED.items()}


def test_a_daemon_paused_in_every_phase_carries_on_to_the_same_linkage(fresh, undisturbed):
    """One run in which each phase stops (SIGSTOP) one daemon after its work, PAUSED's, until
    the test continues it a second later: no phase times out and the run ends as undisturbed."""
    processes = {
        victim: fresh.restart(
            victim,
            failpoint=",".join(f"stop-after:{p}" for p, v in PAUSED.items() if v == victim),
        )
        for victim in sorted(set(PAUSED.values()))
    }
    pauses = {name: list(PAUSED.values()).count(name) for name in processes}
    continued: dict[str, int] = {}
    waiters = [
        threading.Thread(
            target=lambda n=name, p=process: continued.update({n: _cont_each_stop(p, pauses[n])})
        )
        for name, process in processes.items()
    ]
    coordinator = fresh.coordinator()
    for waiter in waiters:
        waiter.start()
    out, err = coordinator.communicate(timeout=240)
    for waiter in waiters:
        waiter.join(30)
    assert coordinator.returncode == 0, err
    assert continued == pauses
    for name, process in processes.items():
        assert _process_state(process) not in ("T", ""), name
    _resumed_equals(fresh, undisturbed, _run_id(out))


def _process_state(process: subprocess.Popen) -> str:
    """R, S, T (stopped), ... from /proc; "" once the process is gone."""
    try:
        return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def _cont_each_stop(process: subprocess.Popen, times: int, limit: float = 120) -> int:
    """SIGCONT the daemon a second after each time it stops itself, up to `times` times; how
    many times it did."""
    done = 0
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.poll() is None and done < times:
        if _process_state(process) == "T":
            time.sleep(1)
            process.send_signal(signal.SIGCONT)
            done += 1
            while _process_state(process) == "T":
                time.sleep(0.01)
        time.sleep(0.05)
    return done


def _signal_at_phase(coordinator: subprocess.Popen, phase: str, sig: int) -> list[str]:
    """Read the coordinator's lines until `phase` begins, then signal it."""
    seen = []
    assert coordinator.stdout is not None
    for line in coordinator.stdout:
        seen.append(line)
        if f"] {phase.upper()}" in line:
            coordinator.send_signal(sig)
            return seen
    return seen


def test_the_coordinator_killed_in_every_phase_in_turn_is_resumed_by_the_next(fresh, undisturbed):
    """Each coordinator is killed as its phase begins, the next resumes the run from there and
    is killed at the next phase; the last one finishes the run."""
    run_id = None
    for phase in PHASES:
        coordinator = fresh.coordinator(*resuming(run_id))
        seen = _signal_at_phase(coordinator, phase, signal.SIGKILL)
        coordinator.communicate(timeout=60)
        assert any(f"] {phase.upper()}" in line for line in seen), (phase, seen)
        assert coordinator.returncode == -signal.SIGKILL, phase
        run_id = run_id or _run_id("".join(seen))
    assert run_id is not None
    _resumed_equals(fresh, undisturbed, run_id)


def test_the_coordinator_paused_in_every_phase_carries_on(fresh, undisturbed):
    """One coordinator stopped for a second as each phase begins: the run ends as undisturbed."""
    coordinator = fresh.coordinator()
    seen: list[str] = []
    for phase in PHASES:
        seen += _signal_at_phase(coordinator, phase, signal.SIGSTOP)
        assert f"] {phase.upper()}" in seen[-1], (phase, seen)
        time.sleep(1)
        coordinator.send_signal(signal.SIGCONT)
    _, err = coordinator.communicate(timeout=240)
    assert coordinator.returncode == 0, err
    _resumed_equals(fresh, undisturbed, _run_id("".join(seen)))


def test_a_peer_gone_mid_stream_leaves_no_tensor_and_the_run_resumes(fresh, undisturbed):
    run_id = killed(fresh, "alice", "kill-mid-stream", "exchange")
    assert not (run_dir(fresh.deployment.parties["bob"].state_dir, run_id) / PEER_TENSOR).exists()
    _resumed_equals(fresh, undisturbed, run_id)


def test_a_full_disk_in_every_phase_in_turn_is_a_clear_error_and_nothing_half_written(
    fresh, undisturbed
):
    """One run that meets a full disk in each phase in turn, where that phase writes its
    artifact (the receiver writes the peer's tensor and matches; the sender everything else):
    each a clear storage error with no partial file, after which the run resumes."""
    run_id = None
    for phase, artifact in WRITES.items():
        victim = "bob" if phase in ("exchange", "reveal") else "alice"
        fresh.restart(victim, failpoint=f"disk-full:{artifact}")
        code, out, err = fresh.coordinate(*resuming(run_id))
        assert code != 0, phase
        assert f"{phase.upper()} failed" in err, (phase, err)
        assert "No space left on device" in err and "STORAGE" in err, (phase, err)
        assert fresh.no_partial_files() == [], phase
        run_id = run_id or _run_id(out)
    assert run_id is not None
    _resumed_equals(fresh, undisturbed, run_id)  # each failpoint fires once per process


def _route_alice(pair: Pair, old_port: int, new_port: int) -> None:
    """From her next start on, alice reaches bob at `new_port` instead of `old_port`."""
    config = pair.deployment.parties["alice"].config
    text = config.read_text()
    config.write_text(
        text.replace(f'address = "127.0.0.1:{old_port}"', f'address = "127.0.0.1:{new_port}"')
    )


def _through_proxy(pair: Pair, proxy: Proxy) -> None:
    _route_alice(pair, pair.deployment.parties["bob"].port, proxy.port)


def _direct(pair: Pair, proxy: Proxy) -> None:
    _route_alice(pair, proxy.port, pair.deployment.parties["bob"].port)


def test_a_slow_network_path_gives_the_same_linkage(fresh, undisturbed):
    with Proxy(fresh.deployment.parties["bob"].port, delay=0.05) as proxy:
        _through_proxy(fresh, proxy)
        try:
            fresh.restart("alice")
            run_id = fresh.finish()
        finally:
            _direct(fresh, proxy)
    assert fresh.linkage(run_id) == undisturbed
    fresh.restart("alice")


def test_a_dropped_connection_is_a_clear_error_and_the_run_resumes(fresh, undisturbed):
    tensor_bytes = RECORDS * 4 * REFERENCE_ROWS
    with Proxy(fresh.deployment.parties["bob"].port, cut_after=tensor_bytes // 2) as proxy:
        _through_proxy(fresh, proxy)
        try:
            fresh.restart("alice")
            code, out, err = fresh.coordinate()
            assert proxy.cuts == 1
            assert code != 0 and "EXCHANGE failed" in err and "bob" in err
            assert fresh.no_partial_files() == []
            run_id = _run_id(out)
            _resumed_equals(fresh, undisturbed, run_id)  # the proxy cuts only once
        finally:
            _direct(fresh, proxy)
    assert fresh.linkage(run_id) == undisturbed
    fresh.restart("alice")


def test_after_many_runs_only_the_newest_closed_runs_keep_their_bulk(fresh, undisturbed):
    """Each new run prunes the bulk files of closed runs but the newest; results stay."""
    for _ in range(KEEP_CLOSED_RUNS + 2):
        fresh.finish()
    for name in PARTIES:
        state = fresh.deployment.parties[name].state_dir
        runs = [path for path in (state / "runs").iterdir() if path.is_dir()]
        assert len(runs) >= KEEP_CLOSED_RUNS + 4
        for bulk in BULK:
            assert len(list(state.rglob(bulk))) <= KEEP_CLOSED_RUNS + 1, bulk
        assert len(list(state.rglob(LINKAGE_CSV))) == len(runs)  # results stay


def test_records_rewritten_during_agree_are_refused_after_a_restart(fresh, undisturbed):
    """The records' hash is of the bytes the run read: a nightly re-export (the same rows in
    another order) written while AGREE runs, then a crash, cannot pass for them; before, the
    hash was taken later, from the new file, and the restarted daemon read it with the old
    shuffle (every pair wrong)."""
    records = fresh.deployment.workdir / "data" / "alice.csv"
    original = records.read_text(encoding="utf-8")
    process = fresh.restart("alice", failpoint="stop-after-read:records")
    coordinator = fresh.coordinator("--until", "smash")
    try:
        deadline = time.monotonic() + 60
        while _process_state(process) != "T":
            assert time.monotonic() < deadline, "alice never stopped after reading"
            time.sleep(0.1)
        header, *rows = original.splitlines(keepends=True)
        records.write_text(header + "".join(reversed(rows)), encoding="utf-8")
        process.send_signal(signal.SIGCONT)
        out, err = coordinator.communicate(timeout=240)
        assert coordinator.returncode == 0, err  # the run goes on with the rows it read
        run_id = _run_id(out)
        fresh.restart("alice")  # a crash: the daemon comes back on the rewritten file
        code, _, err = fresh.coordinate("--run-id", run_id)
        assert code != 0 and "changed since this run's agreement" in err, err
    finally:
        records.write_text(original, encoding="utf-8")
    code, _, err = fresh.coordinate("--abandon", run_id)
    assert code == 0, err
    assert fresh.linkage(fresh.finish()) == undisturbed


def test_a_reference_set_edited_after_agree_is_refused_after_a_restart(fresh, undisturbed):
    """The reference set is checked against the agreement's hash of it whenever a restarted
    daemon reads it again; before, the run completed on the edited set."""
    reference = fresh.deployment.workdir / "data" / "reference.csv"
    original = reference.read_text(encoding="utf-8")
    code, out, err = fresh.coordinate("--until", "smash")
    assert code == 0, err
    run_id = _run_id(out)
    try:
        header, first, *rest = original.splitlines(keepends=True)
        reference.write_text(header + "".join(rest) + first, encoding="utf-8")
        fresh.restart("alice")
        code, _, err = fresh.coordinate("--run-id", run_id)
        assert code != 0 and "reference.csv changed since this run's agreement" in err, err
    finally:
        reference.write_text(original, encoding="utf-8")
    code, _, err = fresh.coordinate("--abandon", run_id)
    assert code == 0, err
    fresh.restart("alice")
    assert fresh.linkage(fresh.finish()) == undisturbed


def test_a_kill_at_link_leaves_no_result_file_in_the_unfinished_run(fresh, undisturbed):
    """LINK writes the result files, then is recorded; a kill in between used to leave a
    linkage.csv in a run whose LINK was never recorded. A restarted daemon removes them, and
    the resumed LINK writes them again."""
    process = fresh.restart("alice", failpoint="kill-after:link")
    code, out, _ = fresh.coordinate()
    assert code != 0
    assert process.wait(10) == -signal.SIGKILL
    fresh.deployment.processes.pop("alice", None)
    run_id = _run_id(out)
    state = run_dir(fresh.deployment.parties["alice"].state_dir, run_id)
    assert (state / LINKAGE_CSV).exists()  # written, LINK not recorded
    fresh.ensure_running()
    assert not (state / LINKAGE_CSV).exists()
    _resumed_equals(fresh, undisturbed, run_id)


@pytest.mark.parametrize(
    ("phase", "limit"), [("agree", 4096), ("exchange", 4096), ("exchange", 65536)]
)
def test_a_real_write_limit_is_a_storage_error_and_the_run_resumes(
    fresh, undisturbed, phase, limit
):
    """Not a failpoint: the kernel refuses every write past `limit` bytes of any file bob
    writes (his file-size limit, lowered while he runs), as a full disk would, SQLite's
    database and the tensor alike. Before, the database's refusal was an INTERNAL error on
    bob, UNKNOWN with a traceback on alice, and the tensor stayed in the run unrecorded."""
    before = Phase[phase.upper()] - 1
    run_id = None
    if before:
        code, out, err = fresh.coordinate("--until", Phase(before).name.lower())
        assert code == 0, err
        run_id = _run_id(out)
    bob = fresh.deployment.processes["bob"]
    hard = resource.prlimit(bob.pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(bob.pid, resource.RLIMIT_FSIZE, (limit, hard))
    try:
        code, out, err = fresh.coordinate(*resuming(run_id))
    finally:
        resource.prlimit(bob.pid, resource.RLIMIT_FSIZE, (hard, hard))
    run_id = run_id or _run_id(out)
    assert code != 0
    assert f"{phase.upper()} failed" in err and "[STORAGE]" in err, err
    assert "INTERNAL" not in err and "Exception calling application" not in err, err
    assert fresh.no_partial_files() == []
    bob_run = run_dir(fresh.deployment.parties["bob"].state_dir, run_id)
    assert not (bob_run / PEER_TENSOR).exists()
    _resumed_equals(fresh, undisturbed, run_id)
