"""Durable run state: SQLite for what a run has done, files beside it for tensors and models.

A phase counts as completed only once its artifacts are renamed into place and its row is
committed, so a daemon killed mid-phase redoes that phase and nothing before it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pprl.party.storage.run_ids import check_run_id
from pprl.protocol.errors import InputError, PprlError
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.phases import LAST_PHASE, Phase

# The state database's layout, recorded in it (PRAGMA user_version): 0 before it was recorded,
# 1 with abandoned runs and each run's peer, 2 with a run's own cut (the layout below).
STATE_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    completed INTEGER NOT NULL DEFAULT 0,
    digest TEXT,
    description TEXT,
    records_sha256 TEXT,
    abandoned INTEGER NOT NULL DEFAULT 0,
    peer TEXT NOT NULL DEFAULT '',
    threshold REAL
);
CREATE TABLE IF NOT EXISTS phases (
    run_id TEXT NOT NULL,
    phase INTEGER NOT NULL,
    seconds REAL NOT NULL,
    finished REAL NOT NULL,
    PRIMARY KEY (run_id, phase)
);
CREATE TABLE IF NOT EXISTS artifacts (
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS counters (
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""

_READ_BLOCK = 4 << 20


def agreed_params(description: str | None) -> MethodParams:
    """The method parameters an agreement's stored description holds (defaults without one)."""
    return MethodParams(**(json.loads(description)["params"] if description else {}))


@dataclass(frozen=True)
class Run:
    run_id: str
    completed: Phase
    digest: str | None
    description: str | None
    records_sha256: str | None
    abandoned: bool = False
    # The identity of the party the run links with ("": a run stored before daemons had
    # several peers, whose peer is the only one configured).
    peer: str = ""
    # The cut a coordinator set for this run (Recut); None: the daemon's [matching] threshold.
    threshold: float | None = None

    def cut(self, floor: float) -> float:
        """The threshold MATCH applies: the one set for the run, never below the daemon's own
        `floor` ([matching] threshold, which its custodian may have raised since)."""
        return floor if self.threshold is None else max(floor, self.threshold)

    @property
    def open(self) -> bool:
        """Begun, not finished and not abandoned: the one run this daemon may work on."""
        return not self.abandoned and self.completed < LAST_PHASE

    def params(self) -> MethodParams:
        """The agreed method (the paper's defaults before AGREE, or for a run stored
        without a description)."""
        return agreed_params(self.description)

    def agreement(self) -> tuple[str, str]:
        """(digest, description) of a run past AGREE; the later phases need both."""
        if self.digest is None or self.description is None:
            raise ArtifactError(f"run {self.run_id!r} has no agreement yet")
        return self.digest, self.description


@dataclass(frozen=True)
class Artifact:
    path: Path
    sha256: str
    size: int
    meta: dict


class ArtifactError(PprlError):
    """A stored artifact no longer matches its recorded checksum."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_READ_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def run_dir(state_dir: Path, run_id: str) -> Path:
    return Path(state_dir) / "runs" / check_run_id(run_id)


class StateFromNewer(InputError):
    """The state database was written by a newer version of pprl."""


class StateDirInUse(InputError):
    """Another daemon holds this state directory: two would mix their runs."""


def _lock_directory(state_dir: Path) -> TextIO:
    """An exclusive lock on the state directory for this process's life (released when the
    store is closed or the process ends, however it ends)."""
    handle = (state_dir / "daemon.lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise StateDirInUse(
            "another daemon is using this state directory; give each daemon its own",
            path=str(state_dir),
            field="state_dir",
        ) from None
    return handle


# SQLite's primary result codes for a write the disk refused.
_DISK_ERRORS = frozenset(
    {sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY}
)


class RunStore:
    """One daemon's runs. Thread-safe: gRPC handlers and phase workers share it."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        # The runs, records' hashes, keys and results are this party's alone: no other user
        # of the machine may list or read them, whatever the files' own modes.
        self.state_dir.chmod(0o700)
        self._held = _lock_directory(self.state_dir)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.state_dir / "state.db", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        try:
            self._migrate()
        except StateFromNewer:
            self._db.close()
            self._held.close()
            raise

    def _migrate(self) -> None:
        """Bring a state database written by an earlier version to STATE_VERSION (each step
        adds what its version lacked), and refuse one a newer version wrote: it may hold
        what this one would misread."""
        found = self._db.execute("PRAGMA user_version").fetchone()[0]
        if found > STATE_VERSION:
            raise StateFromNewer(
                f"its state database was written by a newer pprl (state version {found}; this "
                f"one reads up to {STATE_VERSION}): run that version, or give this daemon "
                "another state_dir",
                path=str(self.state_dir / "state.db"),
                field="state_dir",
            )
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        if "abandoned" not in columns:  # a state directory from before runs could be abandoned
            self._db.execute("ALTER TABLE runs ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0")
        if "peer" not in columns:  # a state directory from before daemons had several peers
            self._db.execute("ALTER TABLE runs ADD COLUMN peer TEXT NOT NULL DEFAULT ''")
        if "threshold" not in columns:  # from before a coordinator could set a run's cut
            self._db.execute("ALTER TABLE runs ADD COLUMN threshold REAL")
        self._db.execute(f"PRAGMA user_version = {STATE_VERSION}")
        self._db.commit()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """The lock and one transaction. A disk that refuses the database's write (full, or
        failing) is an OSError here as it is for every other file, so each caller reports it
        as a storage failure (STORAGE) and not as a bug."""
        with self._lock:
            try:
                with self._db:
                    yield
            except sqlite3.Error as error:
                code = getattr(error, "sqlite_errorcode", 0) & 0xFF
                if code not in _DISK_ERRORS:
                    raise
                number = errno.ENOSPC if code == sqlite3.SQLITE_FULL else errno.EIO
                raise OSError(
                    number, f"the state database could not be written ({error})"
                ) from error

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._held.close()

    def remove_leftovers(self) -> int:
        """Delete temporary files a killed writer left beside its artifacts (atomic_file
        names them .NAME.*.tmp); none of them was ever an artifact. Returns how many."""
        removed = 0
        for leftover in self.state_dir.rglob(".*.tmp"):
            leftover.unlink(missing_ok=True)
            removed += 1
        return removed

    def remove_unfinished_results(self, names: tuple[str, ...]) -> int:
        """Delete the result files of runs whose last phase is not recorded (a kill between
        writing them and recording it): a result file is there only once its run is done,
        and the resumed phase writes them again. Returns how many."""
        with self._lock:
            open_runs = [
                row[0]
                for row in self._db.execute(
                    "SELECT run_id FROM runs WHERE completed < ?", (int(LAST_PHASE),)
                )
            ]
        removed = 0
        for run_id in open_runs:
            for name in names:
                path = run_dir(self.state_dir, run_id) / name
                if path.exists():
                    path.unlink()
                    removed += 1
        return removed

    def run_dir(self, run_id: str) -> Path:
        return run_dir(self.state_dir, run_id)

    def create(self, run_id: str, peer: str = "") -> Run:
        check_run_id(run_id)
        with self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO runs (run_id, created, peer) VALUES (?, ?, ?)",
                (run_id, time.time(), peer),
            )
        self.run_dir(run_id).mkdir(parents=True, exist_ok=True)
        return self.run(run_id)

    def run(self, run_id: str) -> Run:
        """A run that must exist: the phases after AGREE only ever ask for their own run."""
        run = self.get(run_id)
        if run is None:
            raise ArtifactError(f"run {run_id!r} is not in {self.state_dir / 'state.db'}")
        return run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            row = self._db.execute(
                "SELECT run_id, completed, digest, description, records_sha256, abandoned, peer,"
                " threshold FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            return None
        return Run(row[0], Phase(row[1]), row[2], row[3], row[4], bool(row[5]), row[6], row[7])

    def latest(self) -> Run | None:
        """The last run begun here and not abandoned: the one a peer's calls must name."""
        with self._lock:
            row = self._db.execute(
                "SELECT run_id FROM runs WHERE abandoned = 0"
                " ORDER BY created DESC, rowid DESC LIMIT 1"
            ).fetchone()
        return None if row is None else self.get(row[0])

    def open_runs(self) -> list[Run]:
        """Runs begun, not finished and not abandoned (at most one once admission checks)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT run_id FROM runs WHERE abandoned = 0 AND completed < ?"
                " ORDER BY created, rowid",
                (int(LAST_PHASE),),
            ).fetchall()
        runs = [self.get(row[0]) for row in rows]
        return [run for run in runs if run is not None]

    def prune(self, names: tuple[str, ...], keep: int) -> int:
        """Delete the files `names` of closed runs (finished or abandoned) older than the
        `keep` newest ones; their rows, reports and results stay. Returns files deleted."""
        with self._lock:
            rows = self._db.execute(
                "SELECT run_id FROM runs WHERE abandoned = 1 OR completed >= ?"
                " ORDER BY created DESC, rowid DESC",
                (int(LAST_PHASE),),
            ).fetchall()
        deleted = 0
        for (run_id,) in rows[keep:]:
            for name in names:
                path = self.artifact_path(run_id, name)
                if path.exists():
                    path.unlink()
                    deleted += 1
        return deleted

    def abandon(self, run_id: str) -> None:
        """Mark a run abandoned: no phase of it runs again and a new run may begin."""
        with self._transaction():
            self._db.execute("UPDATE runs SET abandoned = 1 WHERE run_id = ?", (run_id,))

    def recut(self, run_id: str, threshold: float, back_to: Phase, names: tuple[str, ...]) -> None:
        """Set the run's cut and, if it has completed a phase after `back_to`, take it back
        there: the artifacts `names` and those phases' records go in one transaction, then
        their files (a kill in between leaves files no record names, which the phases write
        again, and result files the next start removes)."""
        with self._transaction():
            self._db.execute(
                "UPDATE runs SET threshold = ? WHERE run_id = ?", (float(threshold), run_id)
            )
            self._db.execute(
                "UPDATE runs SET completed = ? WHERE run_id = ? AND completed > ?",
                (int(back_to), run_id, int(back_to)),
            )
            self._db.execute(
                "DELETE FROM phases WHERE run_id = ? AND phase > ?", (run_id, int(back_to))
            )
            self._db.executemany(
                "DELETE FROM artifacts WHERE run_id = ? AND name = ?",
                [(run_id, name) for name in names],
            )
        for name in names:
            self.artifact_path(run_id, name).unlink(missing_ok=True)

    def set_agreement(
        self, run_id: str, digest: str, description: str, records_sha256: str
    ) -> None:
        with self._transaction():
            self._db.execute(
                "UPDATE runs SET digest = ?, description = ?, records_sha256 = ? WHERE run_id = ?",
                (digest, description, records_sha256, run_id),
            )

    def complete_phase(self, run_id: str, phase: Phase, seconds: float) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO phases (run_id, phase, seconds, finished)"
                " VALUES (?, ?, ?, ?)",
                (run_id, int(phase), seconds, time.time()),
            )
            self._db.execute(
                "UPDATE runs SET completed = ? WHERE run_id = ? AND completed < ?",
                (int(phase), run_id, int(phase)),
            )

    def phase_seconds(self, run_id: str) -> dict[Phase, float]:
        with self._lock:
            rows = self._db.execute(
                "SELECT phase, seconds FROM phases WHERE run_id = ? ORDER BY phase", (run_id,)
            ).fetchall()
        return {Phase(p): s for p, s in rows}

    def add_counter(self, run_id: str, name: str, amount: int) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT INTO counters (run_id, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id, name) DO UPDATE SET value = value + excluded.value",
                (run_id, name, amount),
            )

    def counter(self, run_id: str, name: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM counters WHERE run_id = ? AND name = ?", (run_id, name)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def artifact_path(self, run_id: str, name: str) -> Path:
        return self.run_dir(run_id) / name

    def record_artifact(
        self, run_id: str, name: str, meta: dict | None = None, sha256: str | None = None
    ) -> Artifact:
        """Register a file already renamed into place under the run directory.

        Pass `sha256` when the writer already hashed the bytes, to spare a second read.
        """
        path = self.artifact_path(run_id, name)
        sha, size = sha256 or file_sha256(path), path.stat().st_size
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO artifacts (run_id, name, file, sha256, bytes, meta)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, name, path.name, sha, size, json.dumps(meta or {}, sort_keys=True)),
            )
        return Artifact(path, sha, size, meta or {})

    def artifact(self, run_id: str, name: str, verify: bool = True) -> Artifact | None:
        """The registered artifact, checked against its checksum so a damaged file is not used."""
        with self._lock:
            row = self._db.execute(
                "SELECT file, sha256, bytes, meta FROM artifacts WHERE run_id = ? AND name = ?",
                (run_id, name),
            ).fetchone()
        if row is None:
            return None
        artifact = Artifact(self.run_dir(run_id) / row[0], row[1], row[2], json.loads(row[3]))
        if verify and (not artifact.path.exists() or file_sha256(artifact.path) != artifact.sha256):
            raise ArtifactError(f"{artifact.path} is missing or does not match its checksum")
        return artifact
