"""The Control service: what the coordinator may ask of this daemon.

Only the configured coordinator gets here: the Authorise interceptor checks every call first.
"""

from __future__ import annotations

import json
import math
import resource
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import grpc

from pprl.party.config import PartyConfig
from pprl.party.phases.phase_runner import PhaseRunner
from pprl.party.reasons import abort
from pprl.party.service.drivers import Claim, Drivers
from pprl.party.storage.artifacts import (
    BULK,
    CUT,
    DATA_REPORT,
    KEEP_CLOSED_RUNS,
    LINKAGE_CSV,
    MODEL,
    NOISE_CHOICE,
    OWN_MATCHES,
    OWN_TENSOR,
    PEER_MATCHES,
    PEER_TENSOR,
)
from pprl.party.storage.run_ids import BadRunId, check_run_id
from pprl.party.storage.state import Run, RunStore
from pprl.party.wire_types import wire_phase
from pprl.protocol.encodings.registry import encoding_named
from pprl.protocol.expectation import spread_words
from pprl.protocol.phases import Phase, PhaseOrderError, check_advance
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc


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


class ControlService(rpc.ControlServicer):
    def __init__(self, config: PartyConfig, store: RunStore, runner: PhaseRunner) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        # Admitting a run (reading the open runs, creating one, claiming it for its
        # coordinator) is one step.
        self._admission = threading.Lock()
        self.drivers = Drivers()

    def GetStatus(
        self, request: pb.GetStatusRequest, context: grpc.ServicerContext
    ) -> pb.GetStatusResponse:
        if request.run_id:
            _valid_run_id(request.run_id, context)
        run = self.store.get(request.run_id) if request.run_id else self.store.latest()
        if run is None:
            return pb.GetStatusResponse(identity=self.config.identity)

        def meta(name: str, key: str, index: int | None = None, kind: type = int):
            artifact = self.store.artifact(run.run_id, name, verify=False)
            # runs stored by older versions, and fixed noise, lack some keys: the kind's zero
            if artifact is None or key not in artifact.meta:
                return kind()
            value = artifact.meta[key]
            return kind(value[index] if index is not None else value)

        # TRAIN's estimate of this party's linkage, and MATCH's fitted to its accepted pairs
        # (each empty before its phase)
        expected = meta(MODEL, "expected", kind=dict)
        fitted = meta(OWN_MATCHES, "expected", kind=dict)
        return pb.GetStatusResponse(
            identity=self.config.identity,
            run_id=run.run_id,
            peer=run.peer or self.config.peers[0].identity,
            completed=wire_phase(run.completed),
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
            noise_sigma=self._noise_sigma(run.run_id),
            noise_choice=meta(NOISE_CHOICE, "why", kind=str) or "",
            exposed=meta(OWN_TENSOR, "exposed", kind=float),
            recovered=meta(OWN_TENSOR, "recovered", kind=dict),
            expected_precision=expected.get("precision", 0.0),
            expected_recall=expected.get("recall", 0.0),
            expected_f1=expected.get("f1", 0.0),
            min_expected_f1=self.config.privacy.min_expected_f1,
            expected_spread=spread_words(expected),
            fitted_precision=fitted.get("precision", 0.0),
            fitted_recall=fitted.get("recall", 0.0),
            fitted_f1=fitted.get("f1", 0.0),
            # 0 where the accepted count could not tell how many records have a partner
            fitted_partnered=fitted.get("partnered", 0.0) if fitted.get("fitted") else 0.0,
            fitted_error_rate=fitted.get("error_rate", 0.0),
            result=self._result(run.run_id),
            threshold=run.cut(self.config.threshold),
            method=self._method(run),
            **self._data_report(run.run_id),
        )

    def _result(self, run_id: str) -> str:
        """linkage.csv relative to the state directory, once LINK wrote it (else empty)."""
        if self.store.artifact(run_id, LINKAGE_CSV, verify=False) is None:
            return ""
        path = self.store.artifact_path(run_id, LINKAGE_CSV)
        return path.relative_to(self.store.state_dir).as_posix()

    def _noise_sigma(self, run_id: str) -> float:
        """The agreed sigma, as stored with the agreement (0 before AGREE)."""
        run = self.store.run(run_id)
        return float(run.params().noise_sigma)

    @staticmethod
    def _method(run: Run) -> str:
        """The agreed encoding and its main settings as JSON ("" before AGREE): the coordinator
        names the run's mode with them."""
        if run.description is None:
            return ""
        return json.dumps(run.params().summary())

    def _data_report(self, run_id: str) -> dict[str, Any]:
        """AGREE's report on the data, as status fields (empty before AGREE)."""
        artifact = self.store.artifact(run_id, DATA_REPORT, verify=False)
        if artifact is None:
            return {}
        keys = (
            "reference_shared",
            "repeated_groups",
            "repeated_records",
            "missing_values",
            "unreadable_values",
        )
        return {key: artifact.meta[key] for key in keys if key in artifact.meta}

    def Advance(
        self, request: pb.AdvanceRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.AdvanceResponse]:
        if not request.run_id or request.phase not in {int(p) for p in Phase if p}:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_INPUT,
                "a run id and a phase are required",
            )
        _valid_run_id(request.run_id, context)
        phase = Phase(request.phase)
        if phase is Phase.AGREE:
            self.runner.retry_agreement(request.run_id)
        with self._admission:
            try:
                run = (
                    self._admit(request, context)
                    if phase is Phase.AGREE
                    else self.store.get(request.run_id)
                )
            except OSError as error:  # the state database could not be written
                message = f"{phase.name} failed: {error.strerror or error}"
                if phase is Phase.AGREE:  # the peer waiting for the agreement learns it
                    self.runner.refuse_agreement(request.run_id, pb.STORAGE, message)
                abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, pb.STORAGE, message)
            claim = Claim.GRANTED
            if run is not None:
                claim = self.drivers.claim(run.run_id, request.driver, context)
        if claim is Claim.DRIVING:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OTHER_COORDINATOR,
                f"another coordinator is driving run {request.run_id} here: let it finish, or "
                "stop it and start this one again",
            )
        if claim is Claim.HOLDING:  # the coordinator asks again, as for a busy phase
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.BUSY,
                f"run {request.run_id} is held by another coordinator between its calls (for "
                f"up to {self.drivers.lease_seconds:g} s after its last)",
            )
        try:
            yield from self._advance(run, phase, request, context)
        finally:
            if run is not None:
                self.drivers.release(run.run_id, request.driver, context)

    def _advance(
        self,
        run: Run | None,
        phase: Phase,
        request: pb.AdvanceRequest,
        context: grpc.ServicerContext,
    ) -> Iterator[pb.AdvanceResponse]:
        """Advance's checks of the run, then the phase."""
        if run is None:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.UNKNOWN_RUN,
                f"run {request.run_id!r} has not begun: {phase.name} comes after AGREE",
            )
        self._check_peer(run, request.peer, context)
        if run.abandoned:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.ABANDONED,
                f"run {run.run_id} was abandoned; start a new one with `pprl coordinate --new`",
            )
        try:
            todo = check_advance(run.completed, phase)
        except PhaseOrderError as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, pb.OUT_OF_ORDER, str(error))
        if not todo:
            seconds = self.store.phase_seconds(run.run_id).get(phase, 0.0)
            yield pb.AdvanceResponse(
                phase=wire_phase(phase), finished=True, seconds=seconds, message="already done"
            )
            return
        yield from self.runner.run(run.run_id, phase, context)

    def _peer_named(self, request: pb.AdvanceRequest, context: grpc.ServicerContext) -> str:
        """The configured peer a new run links with: the one named, or the only one. A
        refusal is also the answer a waiting peer gets, without this daemon's peer list."""
        peer = request.peer
        identities = self.config.peer_identities
        if not peer and len(identities) == 1:
            return identities[0]
        if peer in identities:
            return peer
        listed = ", ".join(repr(i) for i in identities)
        message = (
            f"this daemon links with several peers ({listed}): the coordinator must name one"
            if not peer
            else f"{peer!r} is not a peer of {self.config.identity!r} (its peers: {listed})"
        )
        self.runner.refuse_agreement(
            request.run_id, pb.BAD_INPUT, "its coordinator named no peer of this daemon"
        )
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, message)

    def _check_peer(self, run: Run, peer: str, context: grpc.ServicerContext) -> None:
        """A coordinator that names a peer must name the run's own."""
        linked = run.peer or self.config.peers[0].identity
        if peer and peer != linked:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.BAD_INPUT,
                f"run {run.run_id} links {self.config.identity!r} with {linked!r}, not {peer!r}",
            )

    def _admit(self, request: pb.AdvanceRequest, context: grpc.ServicerContext) -> Run:
        """The run AGREE works on: the existing one, or a new one if no other is open here.

        A second coordinator, or `--new` during a run, must not take the run in progress
        away from its peer; a run that never completed AGREE here, and that no phase or
        coordinator is working on, holds nothing to resume and makes way by itself. Called
        under the admission lock, so reading the open runs and creating one is one step.
        """
        run_id = request.run_id
        existing = self.store.get(run_id)
        if existing is not None:
            return existing
        peer = self._peer_named(request, context)
        for other in self.store.open_runs():
            idle = not self.runner.is_running(other.run_id) and not self.drivers.held(other.run_id)
            if other.completed is Phase.NEW and idle:
                self.store.abandon(other.run_id)
                continue
            doing = (
                "running AGREE"
                if other.completed is Phase.NEW
                else (f"completed {other.completed.name}")
            )
            message = (
                f"run {other.run_id} is still open here ({doing}): resume it with "
                f"`pprl coordinate --run-id {other.run_id}`, or abandon it with "
                f"`pprl coordinate --abandon {other.run_id}`"
            )
            self.runner.refuse_agreement(run_id, pb.RUN_OPEN, message)
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, pb.RUN_OPEN, message)
        self.store.prune(BULK, KEEP_CLOSED_RUNS)
        return self.store.create(run_id, peer)

    def Hold(self, request: pb.HoldRequest, context: grpc.ServicerContext) -> pb.HoldResponse:
        _valid_run_id(request.run_id, context)
        return pb.HoldResponse(
            held=self.drivers.hold(request.run_id, request.driver, request.release)
        )

    def Recut(self, request: pb.RecutRequest, context: grpc.ServicerContext) -> pb.RecutResponse:
        _valid_run_id(request.run_id, context)
        with self._admission:
            run = self._recuttable(request, context)
            claim = self.drivers.claim(run.run_id, request.driver, context)
            if claim is not Claim.GRANTED or self.runner.is_running(run.run_id):
                if claim is Claim.GRANTED:
                    self.drivers.release(run.run_id, request.driver, context)
                abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    pb.BUSY,
                    f"run {run.run_id} is being worked on here: set its cut once it is idle",
                )
            try:
                # A cut applied at REVEAL (sealed) keeps MATCH's pairs and their buckets.
                at_reveal = encoding_named(run.params().encoding).cuts_at_reveal
                redo = Phase.REVEAL if at_reveal else Phase.MATCH
                rewound = run.completed >= redo
                back_to = Phase(redo - 1) if rewound else run.completed
                dropped = tuple(n for n in CUT if not (at_reveal and n == OWN_MATCHES))
                self.store.recut(run.run_id, request.threshold, back_to, dropped if rewound else ())
            except OSError as error:
                abort(
                    context,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    pb.STORAGE,
                    f"the cut could not be set: {error.strerror or error}",
                )
            finally:
                self.drivers.release(run.run_id, request.driver, context)
        return pb.RecutResponse(
            completed=wire_phase(run.completed), rewound=rewound, threshold=request.threshold
        )

    def _recuttable(self, request: pb.RecutRequest, context: grpc.ServicerContext) -> Run:
        """The run whose cut may be set: the latest one here, agreed, not abandoned, no other
        open, its tensors and model still kept, its encoding one that cuts, and the cut a
        number at or above this party's own threshold."""
        run = self.store.get(request.run_id)

        def refuse(reason: pb.ErrorReason, message: str) -> NoReturn:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, reason, message)

        if run is None or run.description is None:
            refuse(pb.UNKNOWN_RUN, f"run {request.run_id!r} has not been agreed here")
        if run.abandoned:
            refuse(pb.ABANDONED, f"run {run.run_id} was abandoned; start a new one")
        latest = self.store.latest()
        others = [r.run_id for r in self.store.open_runs() if r.run_id != run.run_id]
        if latest is None or latest.run_id != run.run_id or others:
            refuse(
                pb.RUN_OPEN,
                f"run {run.run_id} is not the latest run here: only the latest can be cut again",
            )
        encoding = encoding_named(run.params().encoding)
        # What a new cut works from: MATCH's pairs with their buckets and the calibration
        # (sealed), or both tensors and the model to match again.
        kept = (OWN_MATCHES, MODEL) if encoding.cuts_at_reveal else (OWN_TENSOR, PEER_TENSOR, MODEL)
        missing = [
            name for name in kept if self.store.artifact(run.run_id, name, verify=False) is None
        ]
        if run.completed >= Phase.MATCH and missing:
            refuse(
                pb.UNKNOWN_RUN,
                f"run {run.run_id} can no longer be cut again: {', '.join(missing)} "
                "removed with older runs; start a new run",
            )
        floor = self.config.threshold
        top = 1.0 if encoding.cuts_at_reveal else math.inf
        problem = ""
        if not encoding.cuts:
            problem = f'encoding "{encoding.name}" accepts above 0 and cannot be cut elsewhere'
        elif not math.isfinite(request.threshold) or not floor <= request.threshold < top:
            unit = " (a match probability, below 1)" if encoding.cuts_at_reveal else ""
            problem = (
                f"the cut must be a number at or above this party's [matching] threshold "
                f"{floor:g}{unit} (a coordinator may raise it, never lower it), got "
                f"{request.threshold:g}"
            )
        elif encoding.cuts_at_reveal and request.threshold > 0 and not _calibrated(self, run):
            problem = (
                "this run has no match probabilities to cut on: its TRAIN estimated nothing "
                "([privacy] min_expected_f1 = 0)"
            )
        if problem:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, problem)
        return run

    def Abandon(
        self, request: pb.AbandonRequest, context: grpc.ServicerContext
    ) -> pb.AbandonResponse:
        _valid_run_id(request.run_id, context)
        with self._admission:
            run = self.store.get(request.run_id)
            if run is None:
                abort(
                    context,
                    grpc.StatusCode.NOT_FOUND,
                    pb.UNKNOWN_RUN,
                    f"run {request.run_id!r} has never begun here",
                )
            if run.open:
                self.store.abandon(run.run_id)
        return pb.AbandonResponse(
            run_id=run.run_id, completed=wire_phase(run.completed), was_open=run.open
        )


def _valid_run_id(run_id: str, context: grpc.ServicerContext) -> None:
    try:
        check_run_id(run_id)
    except BadRunId as error:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, str(error))


def _calibrated(service: ControlService, run: Run) -> bool:
    """Whether the run's model holds the calibration its probabilities come from (or it has
    not trained yet: its TRAIN will fit one, if it estimates)."""
    model = service.store.artifact(run.run_id, MODEL, verify=False)
    return model is None or "calibration" in model.meta
