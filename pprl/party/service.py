"""The gRPC face of a party daemon: who may call what, and phases run with streamed progress."""

from __future__ import annotations

import itertools
import logging
import math
import queue
import resource
import threading
import time
from collections.abc import Iterator

import grpc

from pprl.party.config import PartyConfig
from pprl.party.peer import PeerError
from pprl.party.state import ArtifactError, RunStore
from pprl.party.tls import caller_identity
from pprl.party.transfer import TransferError, receive_tensor
from pprl.party.work import (
    LINKAGE_CSV,
    OWN_MATCHES,
    OWN_TENSOR,
    PEER_MATCHES,
    PEER_TENSOR,
    PhaseFailed,
    PhaseWork,
)
from pprl.protocol.errors import InputError
from pprl.protocol.phases import Phase, PhaseOrderError, check_advance
from pprl.wire import linkage_pb2 as pb
from pprl.wire import linkage_pb2_grpc as rpc


def peak_rss_bytes() -> int:
    """This process's peak resident memory. On Linux, VmHWM: ru_maxrss would also count the
    memory of whatever process started the daemon, as it survives fork and exec."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


log = logging.getLogger("pprl.party")

PROGRESS_INTERVAL = 0.5
_ERROR_CODES: list[tuple[type[BaseException], grpc.StatusCode]] = [
    (InputError, grpc.StatusCode.INVALID_ARGUMENT),
    (PhaseFailed, grpc.StatusCode.FAILED_PRECONDITION),
    (PeerError, grpc.StatusCode.UNAVAILABLE),
    (ArtifactError, grpc.StatusCode.DATA_LOSS),
]


def _status_code(error: BaseException) -> grpc.StatusCode:
    for kind, code in _ERROR_CODES:
        if isinstance(error, kind):
            return code
    return grpc.StatusCode.INTERNAL


class PartyService(rpc.PartyServicer):
    def __init__(self, config: PartyConfig, store: RunStore, work: PhaseWork) -> None:
        self.config = config
        self.store = store
        self.work = work
        self._busy: tuple[str, Phase] | None = None
        self._busy_lock = threading.Lock()
        # run id -> why its AGREE failed, so a waiting peer learns it at once instead of polling
        self._failed_agreements: dict[str, str] = {}

    # -- who may call ----------------------------------------------------------------------
    def _allow(self, context: grpc.ServicerContext, role: str, method: str) -> None:
        allowed = self.config.peer_identity if role == "peer" else self.config.coordinator_identity
        caller = caller_identity(context)
        if caller != allowed:
            log.warning(
                "refused %s from %r: only the %s %r may call it", method, caller, role, allowed
            )
            context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"{method} is for the {role} {allowed!r} only, not {caller!r}",
            )

    def _current_run(self, context: grpc.ServicerContext, run_id: str, before: Phase):
        """The latest run, if `run_id` names it and it has not yet completed `before`."""
        run = self.store.latest()
        if run is None or run.digest is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no agreed run here yet")
        if run_id != run.run_id:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"run {run_id!r} is not the current run {run.run_id!r}",
            )
        if run.completed >= before:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"run {run_id!r} has already completed {before.name}",
            )
        return run

    # -- peer RPCs -------------------------------------------------------------------------
    def GetAgreement(self, request: pb.AgreementRequest, context) -> pb.Agreement:
        self._allow(context, "peer", "GetAgreement")
        run = self.store.get(request.run_id)
        failure = self._failed_agreements.get(request.run_id)
        if failure is not None and (run is None or run.digest is None):
            context.abort(
                grpc.StatusCode.ABORTED, f"{self.config.identity} could not agree: {failure}"
            )
        if run is None or run.digest is None:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, f"no agreement yet for run {request.run_id!r}"
            )
        reply = pb.Agreement(run_id=run.run_id, digest=run.digest, description=run.description)
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def PushTensor(self, request_iterator: Iterator[pb.TensorMessage], context):
        self._allow(context, "peer", "PushTensor")
        first = next(request_iterator, None)
        run_id = first.header.run_id if first is not None and first.HasField("header") else ""
        run = self._current_run(context, run_id, Phase.MATCH)
        dest = self.store.artifact_path(run.run_id, PEER_TENSOR)
        try:
            expected = self.work.expected_tensor(run.run_id)
            shape, sha = receive_tensor(itertools.chain([first], request_iterator), expected, dest)
        except TransferError as error:
            log.warning("refused a tensor from %s: %s", self.config.peer_identity, error)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"tensor refused: {error}")
        self.store.record_artifact(run.run_id, PEER_TENSOR, {"shape": list(shape)}, sha256=sha)
        log.info("stored %s's tensor %s for run %s", self.config.peer_identity, shape, run_id)
        reply = pb.TensorReceipt(sha256=bytes.fromhex(sha), bytes_received=math.prod(shape))
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def PushMatches(self, request: pb.MatchSet, context) -> pb.MatchReceipt:
        self._allow(context, "peer", "PushMatches")
        run = self._current_run(context, request.run_id, Phase.LINK)
        if request.digest != run.digest:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "matches made under another digest")
        try:
            count = self.work.receive_matches(run.run_id, request)
        except PhaseFailed as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"matches refused: {error}")
        reply = pb.MatchReceipt(pairs_received=count)
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    # -- control RPCs ----------------------------------------------------------------------
    def Status(self, request: pb.StatusRequest, context) -> pb.PartyStatus:
        self._allow(context, "coordinator", "Status")
        run = self.store.get(request.run_id) if request.run_id else self.store.latest()
        if run is None:
            return pb.PartyStatus(identity=self.config.identity)

        def meta(name: str, key: str, index: int | None = None, kind: type = int):
            artifact = self.store.artifact(run.run_id, name, verify=False)
            if artifact is None:
                return kind(0)
            value = artifact.meta.get(key, 0)  # runs stored by older versions lack some keys
            return kind(value[index] if index is not None else value)

        return pb.PartyStatus(
            identity=self.config.identity,
            run_id=run.run_id,
            completed=int(run.completed),
            phase_seconds={
                p.name.lower(): s for p, s in self.store.phase_seconds(run.run_id).items()
            },
            bytes_sent=self.store.counter(run.run_id, "bytes_sent"),
            records=meta(OWN_TENSOR, "shape", 0),
            own_matches=meta(OWN_MATCHES, "pairs"),
            peer_matches=meta(PEER_MATCHES, "pairs"),
            agreed_matches=meta(LINKAGE_CSV, "rows"),
            peak_rss_bytes=peak_rss_bytes(),
            scored_pairs=meta(OWN_MATCHES, "scored"),
            audited_records=meta(OWN_TENSOR, "audited_records"),
            reidentified=meta(OWN_TENSOR, "reidentified", kind=float),
            reidentification_limit=self.config.privacy.max_reidentification,
            noise_edits=meta(OWN_TENSOR, "noise_edits", kind=float),
        )

    def Advance(self, request: pb.AdvanceRequest, context) -> Iterator[pb.Progress]:
        self._allow(context, "coordinator", "Advance")
        if not request.run_id or request.phase not in {int(p) for p in Phase if p}:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a run id and a phase are required")
        phase = Phase(request.phase)
        run = self.store.create(request.run_id) if phase is Phase.AGREE else None
        run = run or self.store.get(request.run_id)
        if run is None:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"run {request.run_id!r} has not begun: {phase.name} comes after AGREE",
            )
        try:
            todo = check_advance(run.completed, phase)
        except PhaseOrderError as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        if not todo:
            seconds = self.store.phase_seconds(run.run_id).get(phase, 0.0)
            yield pb.Progress(phase=phase, finished=True, seconds=seconds, message="already done")
            return
        with self._busy_lock:
            if self._busy is not None:
                busy_run, busy_phase = self._busy
                context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"{busy_phase.name} of run {busy_run} is still running",
                )
            self._busy = (run.run_id, phase)
        yield from self._run_phase(run.run_id, phase, context)

    def _run_phase(self, run_id: str, phase: Phase, context) -> Iterator[pb.Progress]:
        """Run the phase in a worker thread, so it completes even if the coordinator goes away."""
        events: queue.Queue = queue.Queue()
        last = [0.0]

        def progress(done: int, total: int, unit: str, message: str) -> None:
            now = time.monotonic()
            if message or done >= total or now - last[0] >= PROGRESS_INTERVAL:
                last[0] = now
                events.put(
                    pb.Progress(phase=phase, done=done, total=total, unit=unit, message=message)
                )

        def worker() -> None:
            started = time.perf_counter()
            self._failed_agreements.pop(run_id, None)
            try:
                log.info("run %s: %s started", run_id, phase.name)
                self.work.run(phase, run_id, progress)
                seconds = time.perf_counter() - started
                self.store.complete_phase(run_id, phase, seconds)
                log.info("run %s: %s completed in %.2f s", run_id, phase.name, seconds)
                events.put(pb.Progress(phase=phase, finished=True, seconds=seconds))
            except Exception as error:
                if phase is Phase.AGREE:
                    self._failed_agreements[run_id] = str(error)
                log.log(
                    logging.ERROR
                    if _status_code(error) is grpc.StatusCode.INTERNAL
                    else logging.WARNING,
                    "run %s: %s failed: %s",
                    run_id,
                    phase.name,
                    error,
                    exc_info=_status_code(error) is grpc.StatusCode.INTERNAL,
                )
                events.put(error)
            finally:
                with self._busy_lock:
                    self._busy = None

        threading.Thread(target=worker, name=f"{phase.name.lower()}-{run_id}", daemon=True).start()
        while True:
            event = events.get()
            if isinstance(event, BaseException):
                context.abort(_status_code(event), f"{phase.name} failed: {event}")
            yield event
            if event.finished:
                return
