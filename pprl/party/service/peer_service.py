"""The Peer service: what the other party's daemon may ask of this one.

Only configured peers get here (the Authorise interceptor checks every call first), and each
may touch only the runs the coordinator began with it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import math
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import grpc
import numpy as np

from pprl import __version__
from pprl.party.config import MAX_RECORDS, PartyConfig
from pprl.party.credentials.tls import caller_identity
from pprl.party.peering.transfer import (
    KeyBoundError,
    NamingBoundError,
    StreamTimeout,
    TransferError,
    idle_limited,
    joined_matches,
    joined_slots,
    number_chunks,
    receive_tensor,
    received_keys,
)
from pprl.party.phases.context import PhaseFailed
from pprl.party.phases.phase_runner import PhaseRunner
from pprl.party.phases.reveal import match_rows
from pprl.party.phases.sealed import stream_checks
from pprl.party.phases.work import PhaseWork
from pprl.party.reasons import abort, reason_name
from pprl.party.storage.artifacts import DATA_REPORT, OWN_TENSOR, PEER_MATCHES, PEER_TENSOR
from pprl.party.storage.run_ids import BadRunId, check_run_id
from pprl.party.storage.state import Run, RunStore
from pprl.protocol.phases import Phase
from pprl.protocol.sealed.blinding import BlindingError
from pprl.protocol.sealed.hidden_join import NAMES_PER_ROW
from pprl.protocol.sealed.recipes import group_size, most_keys
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
        # One tensor stream at a time: a peer opening many and sending nothing must not take
        # every worker thread (and with them the coordinator's Status calls).
        self._receiving = threading.Lock()
        self._agreement_counted: set[str] = set()

    def _check_caller(self, run: Run, context: grpc.ServicerContext) -> None:
        """A run is between this daemon and one peer: another peer may not read or feed it."""
        caller = caller_identity(context) or ""
        linked = run.peer or self.config.peers[0].identity
        if caller != linked:
            log.warning(
                "refused %r a call on run %s, which links with %r", caller, run.run_id, linked
            )
            abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                pb.NOT_AUTHORISED,
                f"run {run.run_id!r} links this daemon with another party, not with {caller!r}",
            )

    def _current_run(self, context: grpc.ServicerContext, run_id: str, before: Phase) -> Run:
        """The latest run, if `run_id` names it, it links with the caller and it has not yet
        completed `before`."""
        try:
            check_run_id(run_id)
        except BadRunId as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, str(error))
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
        self._check_caller(run, context)
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
        try:
            check_run_id(request.run_id)
        except BadRunId as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_INPUT, str(error))
        run = self.store.get(request.run_id)
        failed = self.runner.agreement_failure(request.run_id)
        if failed is not None and (run is None or run.digest is None):
            # Why, by reason only: the message names this party's files and rows, which are
            # for its own operator (the coordinator has it), not for the peer.
            abort(
                context,
                grpc.StatusCode.ABORTED,
                failed.reason,
                f"{self.config.identity} could not agree ({reason_name(failed.reason)}); its "
                "operator has the details",
            )
        if run is None or run.digest is None:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.UNKNOWN_RUN,
                f"no agreement yet for run {request.run_id!r}",
            )
        self._check_caller(run, context)
        report = self.store.artifact(run.run_id, DATA_REPORT, verify=False)
        own = int(report.meta.get("records", 0)) if report is not None else 0
        reply = pb.GetAgreementResponse(
            run_id=run.run_id,
            digest=run.digest,
            description=run.description,
            software_version=__version__,
            records=own,
            accepts_records=self.config.accepted_peer_records(own),
        )
        # Counted once a run: a peer asking again and again must not inflate bytes_sent.
        if run.run_id not in self._agreement_counted:
            self._agreement_counted.add(run.run_id)
            self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def PushTensor(
        self, request_iterator: Iterator[pb.PushTensorRequest], context: grpc.ServicerContext
    ) -> pb.PushTensorResponse:
        if not self._receiving.acquire(blocking=False):
            abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                pb.BUSY,
                "a tensor stream is already being received; send one at a time",
            )
        try:
            return self._receive_tensor(request_iterator, context)
        finally:
            self._receiving.release()

    def _receive_tensor(
        self, request_iterator: Iterator[pb.PushTensorRequest], context: grpc.ServicerContext
    ) -> pb.PushTensorResponse:
        caller = caller_identity(context) or ""
        first, messages = self._first(request_iterator, context, "tensor")
        if first is None or not first.HasField("header"):
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_CHUNK,
                "tensor refused: the stream must start with a tensor header",
            )
        run = self._current_run(context, first.header.run_id, Phase.MATCH)
        if self.work.agreement(run.run_id).encoding.sealed:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OUT_OF_ORDER,
                f"run {run.run_id!r} is sealed: it takes no tensor",
            )
        held = self.store.artifact(run.run_id, PEER_TENSOR, verify=False)
        if held is not None:
            offered = first.header.sha256.hex()
            return self._already_received(held.sha256, offered, held.size, caller, context)
        dest = self.store.artifact_path(run.run_id, PEER_TENSOR)
        try:
            expected = self.work.expected_tensor(run.run_id)
            shape, sha = receive_tensor(itertools.chain([first], messages), expected, dest)
            self.store.record_artifact(run.run_id, PEER_TENSOR, {"shape": list(shape)}, sha256=sha)
        except StreamTimeout as error:
            log.warning("gave up a tensor from %s: %s", caller, error)
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"tensor: {error}")
        except TransferError as error:
            log.warning("refused a tensor from %s: %s", caller, error)
            abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_CHUNK, f"tensor refused: {error}"
            )
        except OSError as error:
            dest.unlink(missing_ok=True)  # written, perhaps, but not recorded: not received
            self._unstored(context, "tensor", error)
        log.info("stored %s's tensor %s for run %s", caller, shape, run.run_id)
        reply = pb.PushTensorResponse(sha256=bytes.fromhex(sha), bytes_received=math.prod(shape))
        self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
        return reply

    def _already_received(
        self, held_sha: str, offered_sha: str, size: int, caller: str, context: grpc.ServicerContext
    ) -> pb.PushTensorResponse:
        """A sender that resumes EXCHANGE sends the same tensor again: confirm it. Any other
        tensor would replace one already checked, so it is refused."""
        if offered_sha != held_sha:
            log.warning("refused a second, different tensor from %s", caller)
            abort(
                context,
                grpc.StatusCode.ALREADY_EXISTS,
                pb.ALREADY_RECEIVED,
                "tensor refused: this run already holds a different tensor from you",
            )
        return pb.PushTensorResponse(sha256=bytes.fromhex(held_sha), bytes_received=size)

    def PushMatches(
        self, request_iterator: Iterator[pb.PushMatchesRequest], context: grpc.ServicerContext
    ) -> pb.PushMatchesResponse:
        first, messages = self._opened(request_iterator, context, "matches")
        run = self._current_run(context, first.run_id, Phase.LINK)
        if run.completed < Phase.MATCH:
            # The peer reveals after both have matched: earlier matches are out of order.
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OUT_OF_ORDER,
                f"matches refused: run {run.run_id!r} has not completed MATCH here",
            )
        if first.digest != run.digest:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.DIGEST_MISMATCH,
                "matches made under another digest",
            )
        own = self.store.artifact(run.run_id, OWN_TENSOR, verify=False)
        try:
            request = joined_matches(
                itertools.chain([first], messages),
                own.meta["shape"][0] if own is not None else MAX_RECORDS,
            )
        except StreamTimeout as error:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"matches: {error}")
        except TransferError as error:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_MATCHES,
                f"matches refused: {error}",
            )
        held = self.store.artifact(run.run_id, PEER_MATCHES, verify=False)
        if held is not None:
            stored = json.loads(held.path.read_text(encoding="utf-8"))["pairs"]
            if stored != match_rows(request):
                abort(
                    context,
                    grpc.StatusCode.ALREADY_EXISTS,
                    pb.ALREADY_RECEIVED,
                    "matches refused: this run already holds other matches from you",
                )
            return pb.PushMatchesResponse(pairs_received=len(stored))
        try:
            count = self.work.receive_matches(run.run_id, request)
        except OSError as error:
            self._unstored(context, "matches", error)
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

    def _sealed_run(
        self, context: grpc.ServicerContext, run_id: str, digest: str, before: Phase
    ) -> Run:
        """The current run, if it is sealed and `digest` is its agreement's."""
        run = self._current_run(context, run_id, before)
        if digest != run.digest:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.DIGEST_MISMATCH,
                "made under another agreement digest",
            )
        if not self.work.agreement(run.run_id).encoding.sealed:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OUT_OF_ORDER,
                f"run {run.run_id!r} is not sealed: it takes no blinded keys or ciphertexts",
            )
        return run

    def _first(
        self, request_iterator: Iterator, context: grpc.ServicerContext, what: str
    ) -> tuple[Any, Iterator]:
        """A peer stream's first message (None: the stream was empty) and the rest, each
        waited for at most [peer] timeout_seconds."""
        caller = caller_identity(context) or ""
        messages = idle_limited(request_iterator, self.config.peer(caller).timeout)
        try:
            return next(messages, None), messages
        except StreamTimeout as error:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"{what}: {error}")

    def _opened(
        self, request_iterator: Iterator, context: grpc.ServicerContext, what: str
    ) -> tuple[Any, Iterator]:
        """`_first` for a stream that must hold a message: an empty one is refused."""
        first, messages = self._first(request_iterator, context, what)
        if first is None:
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_MATCHES,
                f"{what} refused: the stream held no message",
            )
        return first, messages

    def _refuse_keys(
        self, context: grpc.ServicerContext, caller: str, error: Exception
    ) -> NoReturn:
        log.warning("refused blinded keys from %s: %s", caller, error)
        reason = pb.KEY_BOUND if isinstance(error, KeyBoundError) else pb.BAD_CIPHERTEXT
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, reason, f"keys refused: {error}")

    def BlindKeys(
        self, request_iterator: Iterator[pb.BlindedKeys], context: grpc.ServicerContext
    ) -> Iterator[pb.BlindedKeys]:
        caller = caller_identity(context) or ""
        first, messages = self._first(request_iterator, context, "blinded keys")
        if first is None:
            abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_CIPHERTEXT, "no blinded keys sent"
            )
        run = self._sealed_run(context, first.run_id, first.digest, Phase.MATCH)
        chunks = self._key_chunks(context, caller, run, first, messages)
        counts = np.asarray([c for chunk in chunks for c in chunk.counts], dtype=np.int64)
        values = b"".join(chunk.values for chunk in chunks)
        with self._keys_kept(context, caller, "keys"):
            again = self.work.reblind_for_peer(run.run_id, counts, values)
        log.info("blinded %s's %d keys again for run %s", caller, len(counts), run.run_id)
        offset = 0
        for chunk in chunks:
            size = len(chunk.values)
            reply = pb.BlindedKeys(
                run_id=run.run_id,
                digest=run.digest,
                first_row=chunk.first_row,
                counts=chunk.counts,
                values=again[offset : offset + size],
                last=chunk.last,
            )
            offset += size
            self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
            yield reply

    def SendEntries(
        self, request_iterator: Iterator[pb.BlindedKeys], context: grpc.ServicerContext
    ) -> pb.EntriesReceipt:
        caller = caller_identity(context) or ""
        first, messages = self._first(request_iterator, context, "key entries")
        if first is None:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_CIPHERTEXT, "no entries sent")
        run = self._sealed_run(context, first.run_id, first.digest, Phase.MATCH)
        self._hidden_only(context, run)
        chunks = self._key_chunks(context, caller, run, first, messages, entries=True)
        counts = np.fromiter((n for c in chunks for n in c.counts), dtype=np.int64)
        with self._keys_kept(context, caller, "key entries"):
            kept = self.work.keep_peer_entries(
                run.run_id, counts, b"".join(c.values for c in chunks)
            )
        log.info("kept %s's %d key entries for run %s", caller, kept, run.run_id)
        return pb.EntriesReceipt(entries=kept)

    def JoinCounts(
        self, request: pb.JoinCountsRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.JoinCountsResponse]:
        run = self._sealed_run(context, request.run_id, request.digest, Phase.REVEAL)
        self._hidden_only(context, run)
        try:
            counts = self.work.join_counts_for_peer(run.run_id)
        except PhaseFailed as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, error.reason, str(error))
        except OSError as error:
            self._unstored(context, "join", error)
        for part in number_chunks(counts.tolist()):
            reply = pb.JoinCountsResponse(counts=part)
            self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
            yield reply

    def ResolveSlots(
        self, request_iterator: Iterator[pb.ResolveSlotsRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ResolveSlotsResponse]:
        caller = caller_identity(context) or ""
        first, messages = self._opened(request_iterator, context, "slots")
        run = self._sealed_run(context, first.run_id, first.digest, Phase.REVEAL)
        self._hidden_only(context, run)
        # resolve_for_peer holds the exact bound; this one only keeps a peer naming slots
        # without end from filling memory first.
        most = self.work.peer_declared(run.run_id) * NAMES_PER_ROW
        try:
            named = joined_slots(first, messages, most)
            rows = self.work.resolve_for_peer(
                run.run_id, *(np.asarray(n, dtype=np.int64) for n in named)
            )
        except StreamTimeout as error:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"slots: {error}")
        except (TransferError, PhaseFailed) as error:
            log.warning("refused to resolve %s's slots: %s", caller, error)
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, _slots_reason(error), str(error))
        for part in number_chunks(rows.tolist()):
            reply = pb.ResolveSlotsResponse(rows=part)
            self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
            yield reply

    def _hidden_only(self, context: grpc.ServicerContext, run: Run) -> None:
        if not self.work.agreement(run.run_id).method.join.hidden:
            abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                pb.OUT_OF_ORDER,
                f"run {run.run_id!r} joins by the keys' graph: it takes no key entries",
            )

    def _key_chunks(
        self,
        context: grpc.ServicerContext,
        caller: str,
        run: Run,
        first: pb.BlindedKeys,
        messages: Iterator[pb.BlindedKeys],
        entries: bool = False,
    ) -> list[pb.BlindedKeys]:
        """A stream of keys, each chunk checked as it arrives against the run, the rows
        before it and the peer's declared records: at most that many rows of at most the keys
        an honest row of the agreed recipes holds. Under the hidden join keys come one to a
        message (and entries one or a group to a row: hidden_entries.keep_peer_entries checks
        their sizes), so the rows allowed are the records' times the keys a record can have."""
        method = self.work.agreement(run.run_id).method
        most = most_keys(method.sealed_keys)
        limit = min(self.work.peer_declared(run.run_id), self.config.max_peer_records)
        if method.join.hidden:
            limit, most = limit * most, group_size(method.sealed_keys) if entries else 1
        try:
            chunks = list(
                received_keys(
                    itertools.chain([first], messages), run.run_id, first.digest, limit, most
                )
            )
        except StreamTimeout as error:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"keys: {error}")
        except TransferError as error:
            self._refuse_keys(context, caller, error)
        return chunks

    @contextlib.contextmanager
    def _keys_kept(self, context: grpc.ServicerContext, caller: str, what: str) -> Iterator[None]:
        """Keeping the peer's keys or entries: a bad value, a refusal or our own storage
        failing ends the call with its reason."""
        try:
            yield
        except BlindingError as error:
            self._refuse_keys(context, caller, error)
        except PhaseFailed as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, error.reason, str(error))
        except OSError as error:
            self._unstored(context, what, error)

    def EvaluateScores(
        self, request_iterator: Iterator[pb.SealedScores], context: grpc.ServicerContext
    ) -> Iterator[pb.SealedScores]:
        caller = caller_identity(context) or ""
        first, messages = self._first(request_iterator, context, "encrypted scores")
        if first is None:
            message = "no encrypted scores sent"
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, pb.BAD_CIPHERTEXT, message)
        if not first.HasField("header"):
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_CIPHERTEXT,
                "scores refused: the stream must start with a score header",
            )
        header = first.header
        run = self._sealed_run(context, header.run_id, header.digest, Phase.REVEAL)
        try:
            evaluation = self.work.evaluation_for_peer(run.run_id)
            refused = stream_checks.header_refusal(header, evaluation)
        except PhaseFailed as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, error.reason, str(error))
        if refused is not None:
            reason, message = refused
            log.warning("refused encrypted scores from %s: %s", caller, message)
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, reason, f"scores refused: {message}")
        batches = stream_checks.received_batches(messages, header)
        try:
            ratios = np.array(header.alternative_ratios) if evaluation.alternative else None
            widths = np.array(header.kernel_widths) if evaluation.kernel_features else None
            evaluating = self.work.evaluated(
                evaluation, header.public_key, header.conjugation_key, batches, ratios, widths
            )
            for batch, results in evaluating:
                for index, data in enumerate(results):
                    reply = pb.SealedScores(
                        ciphertext=pb.Ciphertext(batch=batch, index=index, data=data)
                    )
                    self.store.add_counter(run.run_id, "bytes_sent", reply.ByteSize())
                    yield reply
        except StreamTimeout as error:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.TIMED_OUT, f"scores: {error}")
        except (TransferError, ValueError, RuntimeError, TypeError) as error:
            log.warning("refused encrypted scores from %s: %s", caller, error)
            abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                pb.BAD_CIPHERTEXT,
                f"scores refused: {stream_checks.described(error)}",
            )

    def _unstored(self, context: grpc.ServicerContext, what: str, error: OSError) -> None:
        """Our own storage failed (disk full, permissions): logged here, and the sender is
        told why without a path of ours."""
        log.error("could not store %s's %s: %s", caller_identity(context), what, error)
        message = f"the receiver could not store it: {error.strerror or error}"
        abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, pb.STORAGE, message)


def _slots_reason(error: Exception) -> pb.ErrorReason:
    """Why named slots were refused: a phase's own reason, the naming bound, or bad slots."""
    if isinstance(error, PhaseFailed):
        return error.reason
    return pb.NAMING_BOUND if isinstance(error, NamingBoundError) else pb.BAD_MATCHES
