"""Phases run for the coordinator: one at a time, in a worker thread, with streamed progress.

The peer service reads one thing from here: why this party's AGREE of a run failed, so a
peer waiting for the agreement learns it at once instead of polling until it gives up.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator

import grpc

from pprl import failpoints
from pprl.party.peering.peer import PeerError
from pprl.party.phases.context import PhaseFailed
from pprl.party.phases.work import PhaseWork
from pprl.party.reasons import abort, reason_name
from pprl.party.storage.state import ArtifactError, RunStore
from pprl.party.wire_types import wire_phase
from pprl.protocol.errors import InputError
from pprl.protocol.phases import Phase
from pprl.wire.v1 import linkage_pb2 as pb

log = logging.getLogger("pprl.party")

PROGRESS_INTERVAL = 0.5
# A phase that reports nothing for this long sends a line saying what it is waiting for,
# so the coordinator's operator never watches a silent phase.
HEARTBEAT_SECONDS = 15.0
# What a phase's exception ends the Advance call with; PhaseFailed and PeerError carry their
# own reason, which replaces the one given here.
_FAILURES: list[tuple[type[BaseException], grpc.StatusCode, pb.ErrorReason]] = [
    (InputError, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT),
    (PhaseFailed, grpc.StatusCode.FAILED_PRECONDITION, pb.BAD_INPUT),
    (PeerError, grpc.StatusCode.UNAVAILABLE, pb.PEER_UNAVAILABLE),
    (ArtifactError, grpc.StatusCode.DATA_LOSS, pb.DATA_LOSS),
    (OSError, grpc.StatusCode.RESOURCE_EXHAUSTED, pb.STORAGE),
]


def failure(error: BaseException) -> tuple[grpc.StatusCode, pb.ErrorReason]:
    """The status code and reason for an exception a phase raised."""
    for kind, code, reason in _FAILURES:
        if isinstance(error, kind):
            return code, getattr(error, "reason", reason)
    return grpc.StatusCode.INTERNAL, pb.INTERNAL


class PhaseRunner:
    def __init__(self, store: RunStore, work: PhaseWork) -> None:
        self.store = store
        self.work = work
        self._busy: tuple[str, Phase] | None = None
        self._busy_lock = threading.Lock()
        self._failed_agreements: dict[str, pb.ErrorDetail] = {}

    def agreement_failure(self, run_id: str) -> pb.ErrorDetail | None:
        """Why this party's AGREE of `run_id` failed, if it did (and has not been retried)."""
        return self._failed_agreements.get(run_id)

    def refuse_agreement(self, run_id: str, reason: pb.ErrorReason, message: str) -> None:
        """AGREE of `run_id` was refused before it began: a peer asking for its agreement
        learns why at once instead of waiting for one that will never come."""
        self._failed_agreements[run_id] = pb.ErrorDetail(reason=reason, message=message)

    def retry_agreement(self, run_id: str) -> None:
        """The coordinator asks for AGREE of `run_id` again: why it failed before no longer
        holds, so a peer asking for the agreement now waits for the new attempt."""
        self._failed_agreements.pop(run_id, None)

    def is_running(self, run_id: str) -> bool:
        with self._busy_lock:
            return self._busy is not None and self._busy[0] == run_id

    def run(
        self, run_id: str, phase: Phase, context: grpc.ServicerContext
    ) -> Iterator[pb.AdvanceResponse]:
        """Run the phase unless another one is running; progress until it has finished."""
        with self._busy_lock:
            if self._busy is not None:
                busy_run, busy_phase = self._busy
                abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    pb.BUSY,
                    f"{busy_phase.name} of run {busy_run} is still running",
                )
            self._busy = (run_id, phase)
        yield from self._run_phase(run_id, phase, context)

    def _run_phase(
        self, run_id: str, phase: Phase, context: grpc.ServicerContext
    ) -> Iterator[pb.AdvanceResponse]:
        """Run the phase in a worker thread, so it completes even if the coordinator goes away."""
        events: queue.Queue = queue.Queue()
        last = [0.0]
        doing = [f"{phase.name} started"]

        def progress(done: int, total: int, unit: str, message: str) -> None:
            now = time.monotonic()
            if message:
                doing[0] = message
            if message or done >= total or now - last[0] >= PROGRESS_INTERVAL:
                last[0] = now
                events.put(
                    pb.AdvanceResponse(
                        phase=wire_phase(phase), done=done, total=total, unit=unit, message=message
                    )
                )

        def worker() -> None:
            started = time.perf_counter()
            self._failed_agreements.pop(run_id, None)
            try:
                log.info("run %s: %s started", run_id, phase.name)
                self.work.run(phase, run_id, progress)
                failpoints.after_phase(phase.name.lower())
                seconds = time.perf_counter() - started
                self.store.complete_phase(run_id, phase, seconds)
                log.info("run %s: %s completed in %.2f s", run_id, phase.name, seconds)
                events.put(
                    pb.AdvanceResponse(phase=wire_phase(phase), finished=True, seconds=seconds)
                )
            except Exception as error:
                code, reason = failure(error)
                if phase is Phase.AGREE:
                    self._failed_agreements[run_id] = pb.ErrorDetail(
                        reason=reason, message=str(error)
                    )
                internal = code is grpc.StatusCode.INTERNAL
                log.log(
                    logging.ERROR if internal else logging.WARNING,
                    "run %s: %s failed [%s]: %s",
                    run_id,
                    phase.name,
                    reason_name(reason),
                    error,
                    exc_info=internal,
                )
                events.put(error)
            finally:
                with self._busy_lock:
                    self._busy = None

        threading.Thread(target=worker, name=f"{phase.name.lower()}-{run_id}", daemon=True).start()
        began = time.monotonic()
        while True:
            try:
                event = events.get(timeout=HEARTBEAT_SECONDS)
            except queue.Empty:
                waited = time.monotonic() - began
                yield pb.AdvanceResponse(
                    phase=wire_phase(phase),
                    message=f"still working after {waited:.0f} s; last: {doing[0]}",
                )
                continue
            if isinstance(event, BaseException):
                code, reason = failure(event)
                abort(context, code, reason, f"{phase.name} failed: {event}")
            yield event
            if event.finished:
                return
