"""The client side of the peer RPCs: what one daemon sends the other."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import grpc
import numpy as np

from pprl import failpoints
from pprl.party.config import PeerEndpoint
from pprl.party.credentials.tls import MAX_MESSAGE_BYTES, secure_channel
from pprl.party.peering.transfer import (
    key_chunks,
    match_messages,
    slot_messages,
    tensor_messages,
)
from pprl.party.reasons import describe, reason_of
from pprl.party.tls_files import TlsFiles
from pprl.protocol.errors import PprlError
from pprl.protocol.progress import Progress
from pprl.protocol.sealed.layout import Layout
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc

_RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION}
_Reply = TypeVar("_Reply")


# How long AGREE waits for the peer's agreement: its own inputs' checks, or, with automatic
# noise, also its noise choice (the gate's dictionary against the reference set, a few sigmas).
AGREEMENT_WAIT_SECONDS = 120.0
AUTO_NOISE_WAIT_SECONDS = 900.0


class PeerError(PprlError):
    """The peer could not be reached or refused a request; `reason` is the peer's own, or
    PEER_UNAVAILABLE when it gave none."""

    def __init__(self, message: str, reason: pb.ErrorReason = pb.PEER_UNAVAILABLE) -> None:
        super().__init__(message)
        self.reason = reason


class PeerClient:
    def __init__(self, endpoint: PeerEndpoint, tls: TlsFiles) -> None:
        self._channel = secure_channel(endpoint.address, tls, endpoint.identity)
        self._stub = rpc.PeerStub(self._channel)
        self.peer = endpoint.identity
        self.timeout = endpoint.timeout

    def close(self) -> None:
        self._channel.close()

    def _fail(self, action: str, error: grpc.RpcError) -> PeerError:
        reason = reason_of(error) or pb.PEER_UNAVAILABLE
        if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and not reason_of(error):
            # gRPC's own refusal of a message over MAX_MESSAGE_BYTES, on either side: no
            # setting helps, and the peer did not go away.
            return PeerError(
                f"{action} {self.peer}: a message over gRPC's limit of "
                f"{MAX_MESSAGE_BYTES >> 20} MiB ({describe(error)}); a message that grows with "
                "the files must go in chunks: a software fault, please report it",
                pb.MESSAGE_TOO_LARGE,
            )
        if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED and not reason_of(error):
            return PeerError(
                f"{action} {self.peer}: no answer within {self.timeout:g} s "
                "([peer] or [[peers]] timeout_seconds)",
                pb.TIMED_OUT,
            )
        return PeerError(f"{action} {self.peer}: {describe(error)}", reason)

    def _reached(self, action: str) -> None:
        """Waits, up to [peer] timeout_seconds, until the channel is connected. A stream cannot
        be sent again as `_answer` asks a request again, and a channel that saw the peer down
        fails calls at once until its reconnect backoff ends: the first stream of a phase
        resumed right after the peer restarted would fail though the peer was listening."""
        ready = grpc.channel_ready_future(self._channel)
        try:
            ready.result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            ready.cancel()
            raise PeerError(
                f"{action} {self.peer}: not reachable within {self.timeout:g} s "
                "([peer] or [[peers]] timeout_seconds)"
            ) from None

    def _answer(self, action: str, call: Callable[[], _Reply]) -> _Reply:
        """`call`, an idempotent request, made again while the peer cannot be reached, for up
        to [peer] timeout_seconds. A channel that saw the peer down retries its connection only
        after a backoff and fails calls at once meanwhile, so the first call of a phase resumed
        after the peer's restart was refused though the peer was listening again
        (tests/faults/test_sealed_faults.py, on a loaded machine)."""
        unreachable_since: float | None = None
        while True:
            try:
                return call()
            except grpc.RpcError as error:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if error.code() != grpc.StatusCode.UNAVAILABLE or now - unreachable_since > (
                    self.timeout
                ):
                    raise self._fail(action, error) from None
            time.sleep(0.2)

    def agreement(
        self, run_id: str, wait_seconds: float = AGREEMENT_WAIT_SECONDS
    ) -> tuple[pb.GetAgreementResponse, int]:
        """The peer's agreement; waits up to `wait_seconds` while the peer is still computing
        its own, but no longer than [peer] timeout_seconds while it cannot be reached at all
        (a peer that died in AGREE fails the phase in that time, and the run resumes)."""
        deadline = time.monotonic() + wait_seconds
        unreachable_since: float | None = None
        request = pb.GetAgreementRequest(run_id=run_id)
        while True:
            try:
                reply = self._stub.GetAgreement(request, timeout=min(30.0, self.timeout))
                return reply, request.ByteSize()
            except grpc.RpcError as error:
                now = time.monotonic()
                if error.code() == grpc.StatusCode.UNAVAILABLE:
                    unreachable_since = unreachable_since or now
                else:
                    unreachable_since = None
                gone = unreachable_since is not None and now - unreachable_since > self.timeout
                if error.code() not in _RETRYABLE or now > deadline or gone:
                    raise self._fail("getting the agreement of", error) from None
            time.sleep(0.2)

    def push_tensor(
        self,
        run_id: str,
        digest: str,
        path: Path,
        shape: tuple[int, ...],
        sha256_hex: str,
        progress: Progress | None = None,
    ) -> tuple[pb.PushTensorResponse, int]:
        """Stream the tensor file; `progress(bytes sent, total bytes)` after each chunk."""
        self._reached("sending the smashed tensor to")
        sent = 0
        total = math.prod(shape)

        def counted():
            nonlocal sent
            payload = 0
            for message in tensor_messages(run_id, digest, path, shape, sha256_hex):
                sent += message.ByteSize()
                yield message
                if message.HasField("header"):
                    failpoints.mid_stream()
                if progress is not None and message.HasField("chunk"):
                    payload += len(message.chunk.data)
                    progress(payload, total)

        try:
            # At least 1 MB/s, plus the time a peer may take to answer at all.
            receipt = self._stub.PushTensor(counted(), timeout=self.timeout + total / 1e6)
        except grpc.RpcError as error:
            raise self._fail("sending the smashed tensor to", error) from None
        if receipt.sha256.hex() != sha256_hex:
            raise PeerError(f"{self.peer} stored a tensor with a different checksum", pb.DATA_LOSS)
        return receipt, sent

    def blind_keys(
        self, run_id: str, digest: str, counts: np.ndarray, values: bytes
    ) -> tuple[bytes, int]:
        """Sealed linkage: the own keys, blinded once, to the peer in chunks of rows; back,
        the same keys blinded again by the peer, in order. Returns them and the bytes sent."""
        self._reached("sending blinded keys to")
        chunks = list(key_chunks(run_id, digest, counts, values))
        # Returned only once the peer has answered every chunk, so all of them were sent.
        sent = sum(chunk.ByteSize() for chunk in chunks)
        back = []
        try:
            replies = self._stub.BlindKeys(iter(chunks), timeout=self.timeout + len(values) / 1e5)
            for reply, chunk in zip(replies, chunks, strict=False):
                if list(reply.counts) != list(chunk.counts) or reply.first_row != chunk.first_row:
                    raise PeerError(
                        f"{self.peer} returned keys for other rows than were sent",
                        pb.BAD_CIPHERTEXT,
                    )
                back.append(reply.values)
        except grpc.RpcError as error:
            raise self._fail("sending blinded keys to", error) from None
        if len(back) != len(chunks):
            raise PeerError(
                f"{self.peer} returned {len(back)} chunks of keys for {len(chunks)} sent",
                pb.BAD_CIPHERTEXT,
            )
        return b"".join(back), sent

    def evaluate_scores(
        self,
        run_id: str,
        digest: str,
        public: bytes,
        conjugation: bytes,
        placed: Layout,
        coordinates: int,
        candidates_sha256: bytes,
        batches: Iterator[list[bytes]],
        per_batch: Sequence[int],
        consume: Callable[[int, list[bytes]], None],
        progress: Progress | None = None,
        ratios: np.ndarray | None = None,
        widths: np.ndarray | None = None,
    ) -> int:
        """Sealed linkage: the own encrypted vectors to the peer batch by batch; back, per
        batch, `per_batch[batch]` evaluated ciphertexts (its rounds x thresholds), refused
        unless exactly that many, each batch handed to `consume` as soon as it is whole (none
        is kept). Returns the bytes sent."""
        self._reached("scoring under encryption with")
        sent = 0
        header = pb.ScoreHeader(
            run_id=run_id,
            digest=digest,
            public_key=public,
            conjugation_key=conjugation,
            batches=placed.batches,
            coordinates=coordinates,
            candidates_sha256=candidates_sha256,
            alternative_ratios=[] if ratios is None else [float(r) for r in ratios],
            kernel_widths=[] if widths is None else [float(w) for w in widths],
        )

        def requests() -> Iterator[pb.SealedScores]:
            nonlocal sent
            first = pb.SealedScores(header=header)
            sent += first.ByteSize()
            yield first
            failpoints.mid_stream()
            for batch, ciphertexts in enumerate(batches):
                for index, data in enumerate(ciphertexts):
                    message = pb.SealedScores(
                        ciphertext=pb.Ciphertext(batch=batch, index=index, data=data)
                    )
                    sent += message.ByteSize()
                    yield message

        # The peer's work is about rounds x coordinates plaintext products per batch, a few
        # milliseconds each; at least ten times that.
        work = placed.batches * coordinates * (placed.rounds + 3) * 0.03
        results: dict[int, list[bytes]] = {}
        done = [False] * placed.batches
        call = self._stub.EvaluateScores(requests(), timeout=self.timeout + work)
        try:
            for reply in call:
                if not reply.HasField("ciphertext") or reply.ciphertext.batch >= placed.batches:
                    raise PeerError(
                        f"{self.peer} returned a score for no batch that was sent",
                        pb.BAD_CIPHERTEXT,
                    )
                batch = reply.ciphertext.batch
                held = results.setdefault(batch, [])
                if done[batch] or reply.ciphertext.index != len(held):
                    raise PeerError(f"{self.peer} returned scores out of order", pb.BAD_CIPHERTEXT)
                held.append(reply.ciphertext.data)
                if len(held) == per_batch[batch]:
                    consume(batch, results.pop(batch))
                    done[batch] = True
                    if progress is not None:
                        progress(sum(done), placed.batches)
        except grpc.RpcError as error:
            raise self._fail("scoring under encryption with", error) from None
        except BaseException:
            call.cancel()  # a batch refused here (unreadable, out of order): stop the stream
            raise
        short = [b for b, whole in enumerate(done) if not whole]
        if short:
            got = len(results.get(short[0], []))
            raise PeerError(
                f"{self.peer} returned {got} scores for batch {short[0]} where "
                f"{per_batch[short[0]]} were due",
                pb.BAD_CIPHERTEXT,
            )
        return sent

    def send_entries(self, run_id: str, digest: str, counts: np.ndarray, values: bytes) -> int:
        """Hidden join: the own key entries, blinded once, shuffled, each a row of one value
        or a grouped recipe's padded values (`counts`); the peer keeps them. Returns the
        bytes sent."""
        self._reached("sending key entries to")
        entries = len(counts)
        chunks = list(key_chunks(run_id, digest, counts, values))
        try:
            receipt = self._stub.SendEntries(iter(chunks), timeout=self.timeout + len(values) / 1e5)
        except grpc.RpcError as error:
            raise self._fail("sending key entries to", error) from None
        if receipt.entries != entries:
            raise PeerError(
                f"{self.peer} kept {receipt.entries:,} key entries of {entries:,} sent",
                pb.BAD_CIPHERTEXT,
            )
        return sum(chunk.ByteSize() for chunk in chunks)

    def join_counts(self, run_id: str, digest: str, entries: int, peer_rows: int) -> np.ndarray:
        """Hidden join: per own entry, how many of the peer's rows hold its key; refused
        unless one per entry sent, none above the peer's rows."""
        request = pb.JoinCountsRequest(run_id=run_id, digest=digest)
        answered = self._answer(
            "asking the join's counts of",
            lambda: [
                c for m in self._stub.JoinCounts(request, timeout=self.timeout) for c in m.counts
            ],
        )
        counts = np.asarray(answered, dtype=np.int64)
        if len(counts) != entries or (len(counts) and int(counts.max()) > peer_rows):
            raise PeerError(
                f"{self.peer} returned {len(counts):,} counts for {entries:,} key entries, or "
                f"a count above its {peer_rows:,} rows",
                pb.BAD_CIPHERTEXT,
            )
        return counts

    def resolve_slots(
        self, run_id: str, digest: str, entries: np.ndarray, slots: np.ndarray, peer_rows: int
    ) -> np.ndarray:
        """Hidden join: the peer's row in each named slot; refused unless one per slot, each
        one of the peer's rows."""
        messages = slot_messages(run_id, digest, entries.tolist(), slots.tolist())
        answered = self._answer(
            "asking the rows of the named slots of",
            lambda: [
                r
                for m in self._stub.ResolveSlots(iter(messages), timeout=self.timeout)
                for r in m.rows
            ],
        )
        rows = np.asarray(answered, dtype=np.int64)
        if len(rows) != len(entries) or (len(rows) and int(rows.max()) >= peer_rows):
            raise PeerError(
                f"{self.peer} returned {len(rows):,} rows for {len(entries):,} named slots, or "
                f"a row beyond its {peer_rows:,}",
                pb.BAD_CIPHERTEXT,
            )
        return rows

    def push_matches(self, match_set: pb.PushMatchesRequest) -> tuple[pb.PushMatchesResponse, int]:
        """The own match set, in messages of a bounded size (transfer.match_messages); the
        same set sent again is confirmed, so it is sent again while the peer cannot be
        reached (`_answer`), as the hidden join's requests are."""
        messages = match_messages(match_set)
        receipt = self._answer(
            "sending matches to",
            lambda: self._stub.PushMatches(iter(messages), timeout=self.timeout),
        )
        return receipt, sum(message.ByteSize() for message in messages)
