"""The Peer service: what the other party's daemon may ask of this one.

Only the configured peer gets here: the Authorise interceptor checks every call first.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterator

import grpc

from pprl import __version__
from pprl.party.config import PartyConfig
from pprl.party.phase_runner import PhaseRunner
from pprl.party.reasons import abort
from pprl.party.state import Run, RunStore
from pprl.party.transfer import TransferError, receive_tensor
from pprl.party.work import PEER_TENSOR, PhaseFailed, PhaseWork
from pprl.protocol.phases import Phase
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc

log = logging.getLogger("pprl.party")


class PeerService(rpc.PeerServicer):
    def __init__(
        self, config: PartyConfig, store: RunStore, work: PhaseWork, runner: PhaseRunner
    ) -> None:
        self.config = config
        self.store = store
        self.work = work
        self.runner = runner

    def _current_run(self, context: grpc.ServicerContext, run_id: str, before: Phase) -> Run:
        """The latest run, if `run_id` names it and it has not yet completed `before`."""
        run = self.store.latest()
        if run is None or run.digest is None:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.UNKNOWN_RUN,
                "no agreed run here yet",
            )
        if run_id != run.run_id:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.UNKNOWN_RUN,
                f"run {run_id!r} is not the current run {run.run_id!r}",
            )
        if run.completed >= before:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OUT_OF_ORDER,
                f"run {run_id!r} has already completed {before.name}",
            )
        return run

    def GetAgreement(
        self, request: pb.GetAgreementRequest, context: grpc.ServicerContext
    ) -> pb.GetAgreementResponse:
        run = self.store.get(request.run_id)
        failed = self.runner.agreement_failure(request.run_id)
        if failed is not None and (run is None or run.digest is None):
            abort(
                context,
                grpc.StatusCode.ABORTED,
                failed.reason,
                f"{self.config.identity} could not agree: {failed.message}",
            )
        if run is None or run.digest is None:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.UNKNOWN_RUN,
                f"no agreement yet for run {request.run_id!r}",
            )
        reply = pb.GetAgreementResponse(
            run_id=run.run_id,
            digest=run.digest,
            description=run.description,
            software_version=__version__,
        )
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def PushTensor(
        self, request_iterator: Iterator[pb.PushTensorRequest], context: grpc.ServicerContext
    ) -> pb.PushTensorResponse:
        first = next(request_iterator, None)
        run_id = first.header.run_id if first is not None and first.HasField("header") else ""
        run = self._current_run(context, run_id, Phase.MATCH)
        dest = self.store.artifact_path(run.run_id, PEER_TENSOR)
        try:
            expected = self.work.expected_tensor(run.run_id)
            shape, sha = receive_tensor(
                itertools.chain([first] if first else [], request_iterator), expected, dest
            )
        except TransferError as error:
            log.warning("refused a tensor from %s: %s", self.config.peer_identity, error)
            abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_CHUNK, f"tensor refused: {error}"
            )
        self.store.record_artifact(run.run_id, PEER_TENSOR, {"shape": list(shape)}, sha256=sha)
        log.info("stored %s's tensor %s for run %s", self.config.peer_identity, shape, run_id)
        reply = pb.PushTensorResponse(sha256=bytes.fromhex(sha), bytes_received=math.prod(shape))
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def PushMatches(
        self, request: pb.PushMatchesRequest, context: grpc.ServicerContext
    ) -> pb.PushMatchesResponse:
        run = self._current_run(context, request.run_id, Phase.LINK)
        if request.digest != run.digest:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.DIGEST_MISMATCH,
                "matches made under another digest",
            )
        try:
            count = self.work.receive_matches(run.run_id, request)
        except PhaseFailed as error:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_MATCHES,
                f"matches refused: {error}",
            )
        reply = pb.PushMatchesResponse(pairs_received=count)
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply
