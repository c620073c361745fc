"""What a run report shows, read from a party's state directory without taking it over.

The daemon holds its state directory's lock while it runs, so the report reads the state
database read-only and the result files as written; it works on a running daemon's
directory and on a copy of it. Nothing here reaches the peer.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pprl.party.storage.artifacts import (
    LINKAGE_CSV,
    MODEL,
    OWN_MATCHES,
    OWN_MATCHES_CSV,
    OWN_TENSOR,
    PEER_MATCHES_CSV,
)
from pprl.party.storage.state import agreed_params, run_dir
from pprl.protocol.data.record_ids import spreadsheet_safe
from pprl.protocol.encodings.registry import encoding_named
from pprl.protocol.errors import InputError
from pprl.protocol.expectation import TYPICAL_ERROR_RATE, Simulation
from pprl.protocol.phases import LAST_PHASE, Phase


@dataclass(frozen=True)
class OwnPair:
    """A pair this party's classifier accepted, with its score, and whether the peer's did."""

    own_id: str
    peer_id: str  # "" where the peer accepted no pair with that peer record
    score: float
    agreed: bool


@dataclass(frozen=True)
class RunFacts:
    run_id: str
    identity: str
    peer: str
    directory: Path  # the run's directory, where the result is
    records: int
    threshold: float
    pairs: tuple[OwnPair, ...]
    review: int  # agreed pairs marked for review in linkage.csv
    fitted: dict[str, float] = field(default_factory=dict)  # MATCH's, fitted to its links
    simulations: tuple[Simulation, ...] = ()
    privacy: dict[str, Any] = field(default_factory=dict)
    # Whether the run's encoding keeps scores a threshold can cut again.
    cuts: bool = True
    # Sealed linkage: the scores are match probabilities (calibrated buckets), cut at or
    # above the threshold, and the expected trade-off is read from them.
    probabilities: bool = False
    expected: dict[str, Any] = field(default_factory=dict)  # TRAIN's estimate
    peer_only: int = 0  # pairs the peer accepted and this party did not (their ids came too)

    @property
    def agreed(self) -> int:
        return sum(pair.agreed for pair in self.pairs)

    def curve_simulation(self) -> Simulation | None:
        """The simulation whose error rate is nearest the one fitted to the links (before
        MATCH could fit one, a typical rate's): its curve is the expected trade-off."""
        with_curve = [s for s in self.simulations if s.curve]
        if not with_curve:
            return None
        rate = self.fitted.get("error_rate") or TYPICAL_ERROR_RATE
        return min(with_curve, key=lambda s: abs(s.error_rate - rate))


def read_facts(state_dir: Path, run_id: str | None = None, linking: bool = False) -> RunFacts:
    """The facts of `run_id` (default: the latest finished run) in `state_dir`; `linking`:
    LINK asks, its result written and its completion not yet recorded."""
    database = Path(state_dir) / "state.db"
    if not database.is_file():
        raise InputError("no state database here: give a party's state_dir", path=str(state_dir))
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        run_id, peer, threshold, description = _run(db, database, run_id, linking)
        meta = {name: _meta(db, run_id, name) for name in (OWN_TENSOR, MODEL, OWN_MATCHES)}
    directory = run_dir(Path(state_dir), run_id)
    linkage = _read_csv(directory / LINKAGE_CSV)
    identity = linkage[0][0].removesuffix("_id")
    agreed = {(row[0], row[1]) for row in linkage[1:]}
    own = _read_csv(directory / OWN_MATCHES_CSV)
    pairs = tuple(
        OwnPair(row[0], row[1], float(row[2]), (row[0], row[1]) in agreed) for row in own[1:]
    )
    peer_pairs = _read_csv(directory / PEER_MATCHES_CSV)[1:]
    tensor, model, matched = meta[OWN_TENSOR], meta[MODEL], meta[OWN_MATCHES]
    encoding = encoding_named(agreed_params(description).encoding)
    privacy_keys = (
        *("audited_records", "reidentified", "limit"),
        *("exposed", "recovered", "noise_edits"),
    )
    return RunFacts(
        run_id=run_id,
        identity=identity,
        peer=peer or linkage[0][1].removesuffix("_id"),
        directory=directory,
        records=int(tensor.get("shape", [0])[0]),
        threshold=float(matched.get("threshold", threshold or 0.0)),
        pairs=pairs,
        review=sum(1 for row in linkage[1:] if row[-1]),
        fitted=matched.get("expected", {}),
        simulations=tuple(Simulation.from_dict(s) for s in model.get("simulations", [])),
        privacy={key: tensor[key] for key in privacy_keys if key in tensor},
        cuts=encoding.cuts,
        probabilities=own[0][2] == "probability",
        expected=model.get("expected", {}),
        peer_only=sum(1 for row in peer_pairs if (row[0], row[1]) not in agreed),
    )


def _run(
    db: sqlite3.Connection, database: Path, run_id: str | None, linking: bool
) -> tuple[str, str, float, str | None]:
    """(run id, peer, the run's own cut or 0, agreed description) of the named run, or of the
    latest finished."""
    select = "SELECT run_id, completed, peer, threshold, description FROM runs"
    if run_id is None:
        row = db.execute(
            f"{select} WHERE completed >= ? ORDER BY created DESC, rowid DESC LIMIT 1",
            (int(LAST_PHASE),),
        ).fetchone()
        if row is None:
            raise InputError("no finished run to report on", path=str(database))
    else:
        row = db.execute(f"{select} WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"no run {run_id!r} here", path=str(database))
        if row[1] < LAST_PHASE and not linking:
            raise InputError(
                f"run {run_id} has completed {Phase(row[1]).name}, not LINK: nothing to report "
                "yet (finish it with `pprl coordinate --run-id`)",
                path=str(database),
            )
    return row[0], row[2] or "", row[3] or 0.0, row[4]


def _meta(db: sqlite3.Connection, run_id: str, name: str) -> dict[str, Any]:
    row = db.execute(
        "SELECT meta FROM artifacts WHERE run_id = ? AND name = ?", (run_id, name)
    ).fetchone()
    return {} if row is None else json.loads(row[0])


def _read_csv(path: Path) -> list[list[str]]:
    if not path.is_file():
        raise InputError("the run's result file is missing", path=str(path))
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def read_truth(path: Path, facts: RunFacts) -> set[tuple[str, str]]:
    """The true pairs as (own id, peer id), from a CSV with the columns `<identity>_id`
    and `<peer>_id`; ids escaped for spreadsheets as the result escapes them."""
    columns = [f"{facts.identity}_id", f"{facts.peer}_id"]
    with Path(path).open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not set(columns) <= set(reader.fieldnames):
            raise InputError(f"needs the columns {','.join(columns)}", path=str(path), row=1)
        return {(spreadsheet_safe(r[columns[0]]), spreadsheet_safe(r[columns[1]])) for r in reader}
