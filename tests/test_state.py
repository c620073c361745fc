"""RunStore keeps what a run has done across restarts; a changed or missing artifact is refused."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pprl.party.storage.state import (
    STATE_VERSION,
    ArtifactError,
    RunStore,
    StateDirInUse,
    StateFromNewer,
    file_sha256,
    run_dir,
)
from pprl.protocol.phases import Phase


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def store(state_dir: Path) -> Iterator[RunStore]:
    store = RunStore(state_dir)
    yield store
    store.close()


def reopen(store: RunStore) -> RunStore:
    store.close()
    return RunStore(store.state_dir)


# --- runs ---------------------------------------------------------------------------------


def test_a_new_store_has_no_runs(store: RunStore, state_dir: Path) -> None:
    assert (state_dir / "state.db").is_file()
    assert store.latest() is None
    assert store.get("run-1") is None


def test_create_and_get(store: RunStore, state_dir: Path) -> None:
    run = store.create("run-1")
    assert run.run_id == "run-1"
    assert run.completed is Phase.NEW
    assert (run.digest, run.description, run.records_sha256) == (None, None, None)
    assert store.get("run-1") == run
    assert store.run_dir("run-1") == run_dir(state_dir, "run-1") == state_dir / "runs" / "run-1"
    assert store.run_dir("run-1").is_dir()
    assert store.get("run-2") is None


def test_latest_is_the_last_created_and_recreating_does_not_change_it(store: RunStore) -> None:
    store.create("run-1")
    store.create("run-2")
    assert store.latest().run_id == "run-2"
    store.complete_phase("run-2", Phase.AGREE, 1.0)
    again = store.create("run-1")  # already exists: nothing changes
    assert again.completed is Phase.NEW
    assert store.latest().run_id == "run-2"
    assert store.get("run-2").completed is Phase.AGREE
    store.create("run-3")
    assert store.latest().run_id == "run-3"


def test_set_agreement_persists(store: RunStore) -> None:
    store.create("run-1")
    store.create("run-2")
    store.set_agreement("run-1", "ab" * 32, '{"v": 1}', "cd" * 32)
    store = reopen(store)
    try:
        run = store.get("run-1")
        assert (run.digest, run.description, run.records_sha256) == (
            "ab" * 32,
            '{"v": 1}',
            "cd" * 32,
        )
        assert store.get("run-2").digest is None
    finally:
        store.close()


# --- phases -------------------------------------------------------------------------------


def test_complete_phase_is_monotonic(store: RunStore) -> None:
    store.create("run-1")
    store.complete_phase("run-1", Phase.AGREE, 0.5)
    assert store.get("run-1").completed is Phase.AGREE
    store.complete_phase("run-1", Phase.SMASH, 2.0)
    assert store.get("run-1").completed is Phase.SMASH
    store.complete_phase("run-1", Phase.AGREE, 0.7)  # a late retry must not move it back
    assert store.get("run-1").completed is Phase.SMASH
    store.complete_phase("run-1", Phase.SMASH, 2.5)
    assert store.get("run-1").completed is Phase.SMASH


def test_phases_of_one_run_do_not_touch_another(store: RunStore) -> None:
    store.create("run-1")
    store.create("run-2")
    store.complete_phase("run-1", Phase.TRAIN, 3.0)
    assert store.get("run-2").completed is Phase.NEW
    assert store.phase_seconds("run-2") == {}


def test_completed_phases_persist_across_reopen(store: RunStore) -> None:
    store.create("run-1")
    for phase, seconds in [(Phase.AGREE, 0.25), (Phase.SMASH, 4.5), (Phase.TRAIN, 12.0)]:
        store.complete_phase("run-1", phase, seconds)
    store = reopen(store)
    try:
        assert store.get("run-1").completed is Phase.TRAIN
        store.complete_phase("run-1", Phase.SMASH, 5.0)
        assert store.get("run-1").completed is Phase.TRAIN
        store.complete_phase("run-1", Phase.EXCHANGE, 1.5)
    finally:
        store.close()
    store = RunStore(store.state_dir)
    try:
        assert store.get("run-1").completed is Phase.EXCHANGE
        assert store.latest().run_id == "run-1"
    finally:
        store.close()


def test_phase_seconds(store: RunStore) -> None:
    store.create("run-1")
    assert store.phase_seconds("run-1") == {}
    store.complete_phase("run-1", Phase.SMASH, 4.5)
    store.complete_phase("run-1", Phase.AGREE, 0.25)
    seconds = store.phase_seconds("run-1")
    assert seconds == {Phase.AGREE: 0.25, Phase.SMASH: 4.5}
    assert list(seconds) == [Phase.AGREE, Phase.SMASH]  # in phase order
    assert all(isinstance(phase, Phase) for phase in seconds)
    store = reopen(store)
    try:
        assert store.phase_seconds("run-1") == {Phase.AGREE: 0.25, Phase.SMASH: 4.5}
    finally:
        store.close()


# --- counters -----------------------------------------------------------------------------


def test_counters_add_up_and_persist(store: RunStore) -> None:
    store.create("run-1")
    store.create("run-2")
    assert store.counter("run-1", "bytes_sent") == 0
    store.add_counter("run-1", "bytes_sent", 4_194_304)
    store.add_counter("run-1", "bytes_sent", 205_696)
    store.add_counter("run-1", "messages", 3)
    store.add_counter("run-2", "bytes_sent", 7)
    assert store.counter("run-1", "bytes_sent") == 4_400_000
    assert store.counter("run-1", "messages") == 3
    assert store.counter("run-2", "bytes_sent") == 7
    assert store.counter("run-2", "messages") == 0
    store = reopen(store)
    try:
        store.add_counter("run-1", "bytes_sent", 1)
        assert store.counter("run-1", "bytes_sent") == 4_400_001
        assert store.counter("run-2", "bytes_sent") == 7
    finally:
        store.close()


def test_counters_from_many_threads_lose_nothing(store: RunStore) -> None:
    store.create("run-1")

    def add() -> None:
        for _ in range(50):
            store.add_counter("run-1", "chunks", 1)

    threads = [threading.Thread(target=add) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.counter("run-1", "chunks") == 200


# --- artifacts ----------------------------------------------------------------------------


def put(store: RunStore, run_id: str, name: str, data: bytes) -> Path:
    path = store.artifact_path(run_id, name)
    path.write_bytes(data)
    return path


def test_record_artifact_and_verify(store: RunStore) -> None:
    store.create("run-1")
    data = bytes(range(256)) * 1000
    path = put(store, "run-1", "smashed.bin", data)
    assert path == store.run_dir("run-1") / "smashed.bin"
    recorded = store.record_artifact("run-1", "smashed.bin", {"shape": [250, 4, 256]})
    assert recorded.path == path
    assert recorded.sha256 == hashlib.sha256(data).hexdigest() == file_sha256(path)
    assert recorded.size == 256_000
    assert recorded.meta == {"shape": [250, 4, 256]}
    assert store.artifact("run-1", "smashed.bin") == recorded
    assert store.artifact("run-1", "model.pkl") is None
    assert store.artifact("run-2", "smashed.bin") is None


def test_a_checksum_given_by_the_writer_is_recorded_and_still_verified(store: RunStore) -> None:
    store.create("run-1")
    data = b"tensor bytes"
    put(store, "run-1", "peer.bin", data)
    known = hashlib.sha256(data).hexdigest()
    assert store.record_artifact("run-1", "peer.bin", sha256=known).sha256 == known
    assert store.artifact("run-1", "peer.bin").sha256 == known
    store.record_artifact("run-1", "peer.bin", sha256="0" * 64)
    with pytest.raises(ArtifactError):
        store.artifact("run-1", "peer.bin")


def test_artifacts_persist_across_reopen(store: RunStore) -> None:
    store.create("run-1")
    put(store, "run-1", "model.pkl", b"model bytes")
    store.record_artifact("run-1", "model.pkl")
    store = reopen(store)
    try:
        artifact = store.artifact("run-1", "model.pkl")
        assert artifact.sha256 == hashlib.sha256(b"model bytes").hexdigest()
        assert (artifact.size, artifact.meta) == (11, {})
    finally:
        store.close()


def test_re_recording_an_artifact_replaces_its_checksum(store: RunStore) -> None:
    store.create("run-1")
    put(store, "run-1", "matches.csv", b"a,b\n")
    store.record_artifact("run-1", "matches.csv", {"pairs": 0})
    put(store, "run-1", "matches.csv", b"a,b\n1,2\n")
    with pytest.raises(ArtifactError):
        store.artifact("run-1", "matches.csv")
    store.record_artifact("run-1", "matches.csv", {"pairs": 1})
    artifact = store.artifact("run-1", "matches.csv")
    assert (artifact.size, artifact.meta) == (8, {"pairs": 1})


def test_a_tampered_artifact_raises(store: RunStore) -> None:
    store.create("run-1")
    path = put(store, "run-1", "smashed.bin", b"\x00" * 1000)
    store.record_artifact("run-1", "smashed.bin")
    path.write_bytes(b"\x00" * 999 + b"\x01")  # same size, one byte changed
    with pytest.raises(ArtifactError, match=r"smashed\.bin .*does not match its checksum"):
        store.artifact("run-1", "smashed.bin")
    unchecked = store.artifact("run-1", "smashed.bin", verify=False)
    assert unchecked.sha256 == hashlib.sha256(b"\x00" * 1000).hexdigest()


def test_a_missing_artifact_raises(store: RunStore) -> None:
    store.create("run-1")
    path = put(store, "run-1", "smashed.bin", b"tensor")
    store.record_artifact("run-1", "smashed.bin")
    path.unlink()
    with pytest.raises(ArtifactError, match="missing"):
        store.artifact("run-1", "smashed.bin")


def test_prune_deletes_bulk_files_of_closed_runs_beyond_the_newest_kept(store: RunStore) -> None:
    for index, closed in enumerate(["finished", "abandoned", "finished", "open"]):
        run_id = f"run-{index}"
        store.create(run_id)
        for name in ("tensor.u8", "linkage.csv"):
            (store.run_dir(run_id) / name).write_text(run_id)
        if closed == "finished":
            for phase in Phase:
                if phase:
                    store.complete_phase(run_id, phase, 0.1)
        elif closed == "abandoned":
            store.abandon(run_id)
    assert store.prune(("tensor.u8",), keep=1) == 2  # run-2 is the newest closed run; run-3 open
    left = {p.parent.name for p in store.state_dir.rglob("tensor.u8")}
    assert left == {"run-2", "run-3"}
    assert len(list(store.state_dir.rglob("linkage.csv"))) == 4  # results are not bulk
    assert store.get("run-0") is not None  # the run's row stays
    assert store.prune(("tensor.u8",), keep=1) == 0


def test_the_state_directory_is_private_and_held_by_one_store(tmp_path: Path) -> None:
    """Mode 0700 whatever the umask (no other user lists or reads runs, hashes or keys), and
    locked: a second store on it (a second daemon) is refused until the first closes."""
    store = RunStore(tmp_path / "state")
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    with pytest.raises(StateDirInUse, match="another daemon is using this state directory"):
        RunStore(tmp_path / "state")
    store.close()
    RunStore(tmp_path / "state").close()


def test_a_database_from_before_versions_is_migrated_and_a_newer_one_refused(tmp_path: Path):
    """Upgrading: a state directory an earlier daemon wrote (no version, no abandoned or peer
    columns) keeps its runs and gains the columns; one a newer daemon wrote is refused by
    name, and the directory stays free for that daemon."""
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "state.db") as db:
        db.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, created REAL NOT NULL, "
                   "completed INTEGER NOT NULL DEFAULT 0, digest TEXT, description TEXT, "
                   "records_sha256 TEXT)")  # fmt: skip
        db.execute("INSERT INTO runs (run_id, created, completed) VALUES ('r1', 1.0, 3)")
    store = RunStore(old)
    run = store.get("r1")
    assert run is not None and run.completed is Phase.TRAIN and not run.abandoned
    assert run.threshold is None and run.cut(0.5) == 0.5
    store.close()
    with sqlite3.connect(old / "state.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == STATE_VERSION
        db.execute(f"PRAGMA user_version = {STATE_VERSION + 1}")
    with pytest.raises(StateFromNewer, match="written by a newer pprl") as refused:
        RunStore(old)
    assert refused.value.field == "state_dir"
    with sqlite3.connect(old / "state.db") as db:
        db.execute(f"PRAGMA user_version = {STATE_VERSION}")
    RunStore(old).close()  # the refusal left no lock behind


def test_a_recut_takes_a_matched_run_back_to_exchange_and_drops_only_what_follows(
    store: RunStore,
) -> None:
    """The cut is set, MATCH's and later phases' records and the named files go, and what
    EXCHANGE left (the tensors) stays; the cut never goes below the daemon's own floor."""
    store.create("r1")
    for phase in (Phase.AGREE, Phase.SMASH, Phase.TRAIN, Phase.EXCHANGE, Phase.MATCH, Phase.LINK):
        store.complete_phase("r1", phase, 1.0)
    for name in ("peer_tensor.u8", "own_matches.npz", "linkage.csv"):
        store.artifact_path("r1", name).write_bytes(b"x")
        store.record_artifact("r1", name)
    store.recut("r1", 2.5, Phase.EXCHANGE, ("own_matches.npz", "linkage.csv"))
    run = store.run("r1")
    assert run.completed is Phase.EXCHANGE and run.threshold == 2.5
    assert set(store.phase_seconds("r1")) == {Phase.AGREE, Phase.SMASH, Phase.TRAIN, Phase.EXCHANGE}
    assert store.artifact("r1", "own_matches.npz") is None
    assert not store.artifact_path("r1", "linkage.csv").exists()
    assert store.artifact("r1", "peer_tensor.u8") is not None
    assert (run.cut(0.0), run.cut(4.0)) == (2.5, 4.0)
    # a run that has not matched keeps its place and takes the cut
    store.create("r2")
    store.complete_phase("r2", Phase.AGREE, 1.0)
    store.recut("r2", 1.0, Phase.AGREE, ())
    assert store.run("r2").completed is Phase.AGREE and store.run("r2").threshold == 1.0
