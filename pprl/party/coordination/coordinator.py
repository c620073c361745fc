"""Moves two daemons through the phases of Algorithm 1 in lockstep.

A run links one pair of parties; with more than two (pprl.party.coordination.sessions) each
pair is a run of its own. The coordinator sees only phases, progress and counts: no tensor,
record or record id ever reaches it. A run interrupted anywhere resumes from the last phase
both parties completed.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, TextIO

import grpc

from pprl.party.credentials.tls import secure_channel
from pprl.party.reasons import describe, reason_name, reason_of
from pprl.party.storage.run_ids import check_run_id, new_run_id
from pprl.party.tls_files import TlsFiles
from pprl.party.wire_types import DRIVER_LEASE_SECONDS, wire_phase
from pprl.protocol.errors import PprlError
from pprl.protocol.phases import LAST_PHASE, Phase
from pprl.protocol.progress import rate_text
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc


class CoordinatorError(PprlError):
    """A party could not be reached or a phase failed; the message says which and why, and
    `reason` names the ErrorReason a party gave (the first failing party's, in order)."""

    def __init__(self, message: str, reason: str = "ERROR_REASON_UNSPECIFIED") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Endpoint:
    name: str  # how the summary calls this party, e.g. "alice"
    address: str
    identity: str  # the identity its certificate must carry


def check_parties(parties: list[Endpoint]) -> None:
    """Each party once: a name or identity given twice would link a party with itself."""
    if len(parties) < 2:
        raise CoordinatorError(f"a run needs at least two parties, got {len(parties)}")
    for key in ("name", "identity", "address"):
        seen: set[str] = set()
        for party in parties:
            value = getattr(party, key)
            if value in seen:
                raise CoordinatorError(
                    f"the party list repeats the {key} {value!r}: each party once"
                )
            seen.add(value)


class _Printer:
    """Progress lines from both parties' streams, one at a time, with rate and time left."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        # Per party and count, when it stood at 0 and when its first unit was done (with how
        # many): the pace is read from the first unit on, else from the phase's start (none is
        # told at the first unit of a count seen at 0). The phase's setup (MATCH's keys and
        # layout) and a first batch that waits for the peer's own setup made estimates from
        # the start several times too long (~700 s left for a minute's work at 50,000 a side).
        self.counting: dict[tuple[str, str, int, float], list[tuple[float, int]]] = {}

    def line(self, text: str) -> None:
        with self.lock:
            print(text, file=self.out, flush=True)

    def progress(self, name: str, event: pb.AdvanceResponse, started: float) -> None:
        if event.finished:
            self.line(f"      {name:<6} done in {event.seconds:.2f} s {event.message}".rstrip())
            return
        text = event.message
        now = time.monotonic()
        count = (name, event.unit, event.total, started)  # a phase's count, not a later one's
        marks = self.counting.setdefault(count, [(started, 0)])
        if event.total and event.done == 0:
            marks[:] = [(now, 0)]
        elif event.total and len(marks) == 1:
            marks.append((now, event.done))
        if event.total and event.unit and not event.message:
            text = (
                f"{event.done}/{event.total} {event.unit} ({100 * event.done / event.total:.0f}%)"
            )
            since, counted = marks[-1] if event.done > marks[-1][1] else marks[0]
            done, total = event.done - counted, event.total - counted
            rate = rate_text(done, total, now - since, event.unit)
            # A count seen at 0 tells no pace at its first unit, which waited on the setup.
            first_unit = marks[0][0] != started and len(marks) == 2 and done == event.done
            if rate and event.done < event.total and not first_unit:
                text += f", {rate}"
        if text:
            self.line(f"      {name:<6} {text}")


# How long one phase may take on a party before the coordinator gives it up (--phase-timeout).
DEFAULT_PHASE_TIMEOUT = 3600.0
# How often to ask again while a party is still running a phase begun by an earlier call.
BUSY_POLL_SECONDS = 1.0
# How often a party that has finished a phase is held while the other one works on it: well
# within the daemons' lease, so no other coordinator takes the run over in between.
HOLD_SECONDS = DRIVER_LEASE_SECONDS / 4


class Coordinator:
    def __init__(
        self,
        parties: list[Endpoint],
        tls: TlsFiles,
        out: TextIO = sys.stdout,
        phase_timeout: float = DEFAULT_PHASE_TIMEOUT,
    ) -> None:
        check_parties(parties)
        self.parties = parties
        self.phase_timeout = phase_timeout
        self._channels = {p.name: secure_channel(p.address, tls, p.identity) for p in parties}
        self._stubs = {name: rpc.ControlStub(ch) for name, ch in self._channels.items()}
        self.printer = _Printer(out)
        # Every coordinator has the one identity; this tells the daemons which one drives a
        # run (pprl.party.service.drivers).
        self.driver = secrets.token_hex(16)

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()

    def status(self, party: Endpoint, run_id: str = "") -> pb.GetStatusResponse:
        try:
            return self._stubs[party.name].GetStatus(pb.GetStatusRequest(run_id=run_id), timeout=10)
        except grpc.RpcError as error:
            raise CoordinatorError(
                f"{party.name} at {party.address}: {describe(error)}",
                reason_name(reason_of(error)),
            ) from None

    def wait_ready(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        for party in self.parties:
            while True:
                try:
                    self.status(party)
                    break
                except CoordinatorError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)

    def _pair(self, pair: tuple[str, str] | None) -> tuple[Endpoint, Endpoint]:
        """The two parties a run links: those named, or the only two there are."""
        if pair is None:
            if len(self.parties) != 2:
                raise CoordinatorError(f"{len(self.parties)} parties: name the pair to link")
            return self.parties[0], self.parties[1]
        by_name = {p.name: p for p in self.parties}
        return by_name[pair[0]], by_name[pair[1]]

    def _resume_point(
        self, parties: tuple[Endpoint, Endpoint], run_id: str | None, new: bool
    ) -> tuple[str, Phase]:
        """The run to drive and the last phase both parties completed in it."""
        if run_id is not None:
            check_run_id(run_id)
        if new:
            return new_run_id(), Phase.NEW
        statuses = [self.status(p, run_id or "") for p in parties]
        ids = {s.run_id for s in statuses}
        completed = Phase(min(s.completed for s in statuses))
        if run_id is not None:
            return run_id, completed if ids == {run_id} else Phase.NEW
        if len(ids) == 1 and "" not in ids and completed < LAST_PHASE:
            return ids.pop(), completed
        return new_run_id(), Phase.NEW

    def _advance(
        self,
        party: Endpoint,
        peer: Endpoint,
        run_id: str,
        phase: Phase,
        errors: dict[str, grpc.RpcError],
    ) -> None:
        """Run `phase` on `party`, linking with `peer`; if it is still running from a call
        that was cut off (the coordinator restarted, a daemon was paused), wait for it rather
        than fail."""
        started = time.monotonic()
        deadline = started + self.phase_timeout
        request = pb.AdvanceRequest(
            run_id=run_id, phase=wire_phase(phase), peer=peer.identity, driver=self.driver
        )
        while True:
            try:
                for event in self._stubs[party.name].Advance(
                    request, timeout=max(1.0, deadline - time.monotonic())
                ):
                    self.printer.progress(party.name, event, started)
                return
            except grpc.RpcError as error:
                if reason_of(error) != pb.BUSY or time.monotonic() >= deadline:
                    errors[party.name] = error
                    return
            time.sleep(BUSY_POLL_SECONDS)

    def _hold(self, party: Endpoint, run_id: str, release: bool = False) -> None:
        """Keep this coordinator's hold on `run_id` at `party`, or give it up. Best effort: a
        party that cannot be reached holds nothing for anyone else either."""
        with contextlib.suppress(grpc.RpcError):
            self._stubs[party.name].Hold(
                pb.HoldRequest(run_id=run_id, driver=self.driver, release=release), timeout=5
            )

    def _join(
        self, threads: dict[str, threading.Thread], parties: tuple[Endpoint, ...], run_id: str
    ) -> None:
        """Wait for every party's phase, holding those that have finished theirs."""
        while any(thread.is_alive() for thread in threads.values()):
            for party in parties:
                threads[party.name].join(HOLD_SECONDS / len(parties))
            for party in parties:
                if not threads[party.name].is_alive():
                    self._hold(party, run_id)

    def abandon(self, run_id: str) -> dict[str, str]:
        """Abandon `run_id` on every party; what each had completed in it."""
        check_run_id(run_id)
        done = {}
        for party in self.parties:
            try:
                reply = self._stubs[party.name].Abandon(
                    pb.AbandonRequest(run_id=run_id), timeout=10
                )
            except grpc.RpcError as error:
                if error.code() is grpc.StatusCode.NOT_FOUND:
                    done[party.name] = "never begun there"
                    continue
                raise CoordinatorError(
                    f"{party.name} at {party.address}: {describe(error)}",
                    reason_name(reason_of(error)),
                ) from None
            completed = Phase(reply.completed).name
            closed = f"already closed ({completed})"
            done[party.name] = f"abandoned after {completed}" if reply.was_open else closed
        return done

    def run(
        self,
        run_id: str | None = None,
        new: bool = False,
        until: Phase = LAST_PHASE,
        pair: tuple[str, str] | None = None,
        threshold: float | None = None,
    ) -> dict[str, Any]:
        """Drive the run of `pair` (by name; None: the only two parties) through `until`
        (inclusive); a later call resumes where it stopped. `threshold` sets both parties' cut
        before MATCH; a run that has matched is cut again (MATCH, REVEAL and LINK again; in
        sealed linkage REVEAL and LINK on the pairs MATCH kept)."""
        parties = self._pair(pair)
        run_id, completed = self._resume_point(parties, run_id, new)
        if completed is Phase.NEW:
            self.printer.line(f"run {run_id}: starting")
        else:
            self.printer.line(f"run {run_id}: resuming after {completed.name}")
        started = time.perf_counter()
        try:
            if threshold is not None and completed >= Phase.MATCH and until >= Phase.MATCH:
                self.recut(parties, run_id, threshold)
                # Where each party went back to: after EXCHANGE, or after MATCH where the cut
                # applies at REVEAL (sealed linkage keeps what MATCH found).
                completed = Phase(min(self.status(p, run_id).completed for p in parties))
                threshold = None  # set: MATCH need not set it again
            wall = self._drive(parties, run_id, completed, until, threshold)
        finally:
            for party in parties:
                self._hold(party, run_id, release=True)
        return self.summary(parties, run_id, completed, wall, time.perf_counter() - started)

    def recut(self, parties: tuple[Endpoint, ...], run_id: str, threshold: float) -> None:
        """Set the cut of `run_id` on every party (Control.Recut); a party that has matched
        drops its matches and result and goes back to after EXCHANGE."""
        request = pb.RecutRequest(run_id=run_id, threshold=threshold, driver=self.driver)
        for party in parties:
            try:
                reply = self._stubs[party.name].Recut(request, timeout=30)
            except grpc.RpcError as error:
                raise CoordinatorError(
                    f"run {run_id}: {party.name} refused the threshold {threshold:g}: "
                    f"{describe(error)}",
                    reason_name(reason_of(error)),
                ) from None
            done = (
                f"its result was dropped (it had completed {Phase(reply.completed).name}); "
                "the phases from the cut's on run again"
                if reply.rewound
                else "the run applies it when it gets there"
            )
            self.printer.line(f"      {party.name:<6} threshold {reply.threshold:g}: {done}")

    def _drive(
        self,
        parties: tuple[Endpoint, Endpoint],
        run_id: str,
        completed: Phase,
        until: Phase,
        threshold: float | None = None,
    ) -> dict[str, float]:
        """The phases after `completed` through `until`, both parties at once; each phase's
        wall time. A `threshold` is set on both just before MATCH."""
        wall: dict[str, float] = {}
        for phase in Phase:
            if phase <= completed or phase > until:
                continue
            if phase is Phase.MATCH and threshold is not None:
                self.recut(parties, run_id, threshold)
            self.printer.line(f"[{int(phase)}/{int(LAST_PHASE)}] {phase.name}")
            errors: dict[str, grpc.RpcError] = {}
            phase_start = time.perf_counter()
            threads = {
                p.name: threading.Thread(
                    target=self._advance, args=(p, peer, run_id, phase, errors)
                )
                for p, peer in zip(parties, reversed(parties), strict=True)
            }
            for thread in threads.values():
                thread.start()
            self._join(threads, parties, run_id)
            if errors:
                failed = [p.name for p in parties if p.name in errors]
                detail = "; ".join(f"{name}: {self._describe(errors[name])}" for name in failed)
                raise CoordinatorError(
                    f"run {run_id}: {phase.name} failed: {detail}",
                    reason_name(reason_of(errors[failed[0]])),
                )
            wall[phase.name.lower()] = time.perf_counter() - phase_start
        return wall

    def _describe(self, error: grpc.RpcError) -> str:
        if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED and not reason_of(error):
            return f"the phase did not end within {self.phase_timeout:g} s (--phase-timeout)"
        return describe(error)

    def summary(
        self,
        parties: tuple[Endpoint, Endpoint],
        run_id: str,
        resumed_after: Phase = Phase.NEW,
        wall: dict[str, float] | None = None,
        total: float = 0.0,
    ) -> dict[str, Any]:
        """What both parties report of the run; phases not timed here are their own times."""
        wall = wall or {}
        statuses = {p.name: self.status(p, run_id) for p in parties}
        phases = {}
        for phase in Phase:
            key = phase.name.lower()
            recorded = [s.phase_seconds.get(key) for s in statuses.values()]
            if key in wall or (phase is not Phase.NEW and None not in recorded):
                phases[key] = round(wall.get(key, max(recorded)), 3)
        # Both parties hold the one agreed method once AGREE is done (their digests matched);
        # a party that has not agreed yet reports none.
        method = next((json.loads(s.method) for s in statuses.values() if s.method), None)
        return {
            "run_id": run_id,
            "resumed_after": None if resumed_after is Phase.NEW else resumed_after.name.lower(),
            "completed": Phase(min(s.completed for s in statuses.values())).name.lower(),
            **({"method": method} if method else {}),
            "seconds": round(total, 3),
            "phases": phases,
            "bytes_sent": {name: s.bytes_sent for name, s in statuses.items()},
            "parties": {
                name: {
                    "identity": s.identity,
                    "peer": s.peer,
                    "records": s.records,
                    "own_matches": s.own_matches,
                    "peer_matches": s.peer_matches,
                    "agreed_matches": s.agreed_matches,
                    "scored_pairs": s.scored_pairs,
                    "peak_rss_bytes": s.peak_rss_bytes,
                    "result": s.result,
                    "threshold": s.threshold,
                    "data": {
                        "reference_shared": dict(s.reference_shared),
                        "repeated_groups": s.repeated_groups,
                        "repeated_records": s.repeated_records,
                        "missing_values": dict(s.missing_values),
                        "unreadable_values": dict(s.unreadable_values),
                    },
                    "privacy": {
                        "audited_records": s.audited_records,
                        "reidentified": s.reidentified,
                        "limit": s.reidentification_limit,
                        "noise_edits": s.noise_edits,
                        "noise_sigma": s.noise_sigma,
                        "noise_choice": s.noise_choice,
                        "exposed": s.exposed,
                        "recovered": dict(sorted(s.recovered.items())),
                    },
                    "expected": {
                        "precision": s.expected_precision,
                        "recall": s.expected_recall,
                        "f1": s.expected_f1,
                        "minimum": s.min_expected_f1,
                        "spread": s.expected_spread,
                    },
                    **_fitted(s),
                    "phase_seconds": {
                        p.name.lower(): round(s.phase_seconds[p.name.lower()], 3)
                        for p in Phase
                        if p.name.lower() in s.phase_seconds
                    },
                }
                for name, s in statuses.items()
            },
        }


def _fitted(status: pb.GetStatusResponse) -> dict[str, Any]:
    """MATCH's estimate fitted to the party's accepted pairs, as {"fitted": ...}, or nothing
    where none was fitted (all zeros on the wire: before MATCH, under sealed linkage, with a
    threshold of the party's own), so that no reader takes zeros for an estimate."""
    if not (status.fitted_f1 or status.fitted_error_rate):
        return {}
    return {
        "fitted": {
            "precision": status.fitted_precision,
            "recall": status.fitted_recall,
            "f1": status.fitted_f1,
            "partnered": status.fitted_partnered,
            "error_rate": status.fitted_error_rate,
        }
    }
