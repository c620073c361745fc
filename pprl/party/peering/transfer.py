"""Smashed tensors on the wire: a header, then checksummed chunks read from and written to disk.

Neither side holds the tensor in memory: the sender reads its file chunk by chunk, the
receiver writes each checked chunk to a temporary file that is renamed into place only when
the whole tensor has arrived intact, so a bad transfer leaves nothing behind. The receiver
hashes and writes in a second thread while the next chunk arrives, a few chunks at most
apart, so memory stays at a few chunks.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from google.protobuf.message import Message

from pprl.files.atomic import atomic_file
from pprl.party.config import MAX_RECORDS
from pprl.party.credentials.tls import CHUNK_BYTES
from pprl.protocol.errors import PprlError
from pprl.wire.v1 import linkage_pb2 as pb

DTYPE = "uint8"


class TransferError(PprlError, ValueError):
    """A tensor stream that does not match what was declared or agreed."""


class KeyBoundError(TransferError):
    """Keys beyond what an honest peer of the agreed recipes and declared rows can send."""


class NamingBoundError(TransferError):
    """Slots named beyond what an honest scorer of the declared rows names."""


@dataclass(frozen=True)
class Expected:
    """What the receiver already knows from the agreement: only the record count is new."""

    run_id: str
    digest: str
    mapping_entries: int
    width: int  # coordinates per value: reference rows, or projected components
    max_rows: int = MAX_RECORDS  # [limits] max_peer_records


def tensor_messages(
    run_id: str,
    digest: str,
    path: Path,
    shape: tuple[int, ...],
    sha256_hex: str,
) -> Iterator[pb.PushTensorRequest]:
    total = math.prod(shape)
    header = pb.TensorHeader(
        run_id=run_id,
        digest=digest,
        shape=list(shape),
        dtype=DTYPE,
        total_bytes=total,
        chunk_count=math.ceil(total / CHUNK_BYTES),
        sha256=bytes.fromhex(sha256_hex),
    )
    yield pb.PushTensorRequest(header=header)
    with path.open("rb") as handle:
        index = 0
        while data := handle.read(CHUNK_BYTES):
            chunk = pb.TensorChunk(index=index, data=data, sha256=hashlib.sha256(data).digest())
            yield pb.PushTensorRequest(chunk=chunk)
            index += 1


def _check_header(header: pb.TensorHeader, expected: Expected) -> tuple[int, int, int]:
    if header.run_id != expected.run_id:
        raise TransferError(
            f"tensor for run {header.run_id!r}, but the current run is {expected.run_id!r}"
        )
    if header.digest != expected.digest:
        raise TransferError("tensor made under a different agreement digest")
    if header.dtype != DTYPE:
        raise TransferError(f"dtype {header.dtype!r}, expected {DTYPE!r}")
    shape = tuple(header.shape)
    wanted = (expected.mapping_entries, expected.width)
    if len(shape) != 3 or shape[1:] != wanted or not 0 < shape[0] <= expected.max_rows:
        raise TransferError(f"shape {shape}, expected (records, {wanted[0]}, {wanted[1]})")
    total = math.prod(shape)
    if header.total_bytes != total:
        raise TransferError(f"total_bytes {header.total_bytes} does not match shape {shape}")
    if header.chunk_count != math.ceil(total / CHUNK_BYTES):
        raise TransferError(f"chunk_count {header.chunk_count} does not fit {total} bytes")
    if len(header.sha256) != 32:
        raise TransferError("header sha256 must be 32 bytes")
    return shape


class _Sink:
    """Checks each chunk's SHA-256, feeds the whole-tensor hash and writes the chunk, in its
    own thread (hashlib and file writes release the GIL, so this overlaps the network)."""

    def __init__(self, out, depth: int = 8) -> None:
        self.out = out
        self.whole = hashlib.sha256()
        self.error: TransferError | None = None
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._thread = threading.Thread(target=self._work, name="tensor-sink", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            index, data, digest = item
            if self.error is not None:
                continue  # drain, so the receiving thread never blocks on a full queue
            if hashlib.sha256(data).digest() != digest:
                self.error = TransferError(f"chunk {index} fails its checksum")
                continue
            self.whole.update(data)
            self.out.write(data)

    def put(self, index: int, data: bytes, digest: bytes) -> None:
        if self.error is not None:
            raise self.error
        self._queue.put((index, data, digest))

    def finish(self) -> bytes:
        """The whole tensor's digest once every chunk is written; raises the first error."""
        self.abandon()
        if self.error is not None:
            raise self.error
        return self.whole.digest()

    def abandon(self) -> None:
        """Stop after the queued chunks (finish, or give up after an error)."""
        self._queue.put(None)
        self._thread.join()


class StreamTimeout(TransferError):
    """The sender stopped sending in the middle of a stream."""


_END = object()


def idle_limited(messages: Iterator, seconds: float) -> Iterator:
    """The messages of a stream, read in a helper thread, failing once none arrives for
    `seconds`: a peer that opens a stream and goes quiet must not hold a worker for ever.

    The helper stays blocked on the stream until gRPC ends the call, which the caller's
    refusal does.
    """
    arrived: queue.Queue = queue.Queue(maxsize=4)

    def read() -> None:
        try:
            for message in messages:
                arrived.put(message)
        except BaseException as error:  # the call was cancelled or ended
            arrived.put(error)
        else:
            arrived.put(_END)

    threading.Thread(target=read, name="stream-reader", daemon=True).start()
    while True:
        try:
            item = arrived.get(timeout=seconds)
        except queue.Empty:
            raise StreamTimeout(f"no message for {seconds:g} s") from None
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


def receive_tensor(
    messages: Iterator[pb.PushTensorRequest], expected: Expected, dest: Path
) -> tuple[tuple[int, ...], str]:
    """Check and store a pushed tensor; returns (shape, sha256 hex). Nothing is stored on error."""
    first = next(messages, None)
    if first is None or first.WhichOneof("body") != "header":
        raise TransferError("the stream must start with a tensor header")
    header = first.header
    shape = _check_header(header, expected)
    received = 0
    with atomic_file(dest) as tmp, tmp.open("wb") as out:
        sink = _Sink(out)
        try:
            for index, message in enumerate(messages):
                if message.WhichOneof("body") != "chunk":
                    raise TransferError(f"message {index + 1} is not a chunk")
                chunk = message.chunk
                if chunk.index != index:
                    raise TransferError(f"chunk {chunk.index} arrived where chunk {index} was due")
                if index >= header.chunk_count or len(chunk.data) > CHUNK_BYTES:
                    raise TransferError(f"chunk {index} goes beyond the declared size")
                received += len(chunk.data)
                if received > header.total_bytes:
                    raise TransferError(f"chunk {index} goes beyond the declared size")
                sink.put(index, chunk.data, chunk.sha256)
        except BaseException:
            sink.abandon()
            raise
        whole = sink.finish()
        if received != header.total_bytes:
            raise TransferError(f"received {received} bytes of {header.total_bytes}")
        if whole != header.sha256:
            raise TransferError("the tensor fails its whole-payload checksum")
        out.flush()
    return shape, whole.hex()


# Sealed linkage's blinded keys: at most this many to a message (4 MiB of values).
KEYS_PER_CHUNK = CHUNK_BYTES // 32


def key_chunks(
    run_id: str, digest: str, counts: Sequence[int] | np.ndarray, values: bytes
) -> Iterator[pb.BlindedKeys]:
    """A party's blinded keys as messages of whole rows, at most KEYS_PER_CHUNK keys (or rows)
    each; the last one says so (an empty one when there are no rows)."""
    rows = [int(c) for c in counts]
    row = offset = 0
    while True:
        end, keys = row, 0
        while end < len(rows) and end - row < KEYS_PER_CHUNK:
            if keys + rows[end] > KEYS_PER_CHUNK and end > row:
                break
            keys += rows[end]
            end += 1
        size = keys * 32
        yield pb.BlindedKeys(
            run_id=run_id,
            digest=digest,
            first_row=row,
            counts=rows[row:end],
            values=values[offset : offset + size],
            last=end >= len(rows),
        )
        row, offset = end, offset + size
        if row >= len(rows):
            return


def received_keys(
    messages: Iterator[pb.BlindedKeys],
    run_id: str,
    digest: str,
    max_rows: int,
    most_per_row: int | None = None,
) -> Iterator[pb.BlindedKeys]:
    """The peer's key chunks, each checked against the run and the rows before it as it
    arrives; a TransferError names the first that does not fit (a KeyBoundError: more rows
    than `max_rows`, or a row with more keys than `most_per_row`). Ends after the chunk marked
    last."""
    row = 0
    for number, chunk in enumerate(messages):
        where = f"key chunk {number}"
        if chunk.run_id != run_id or chunk.digest != digest:
            raise TransferError(f"{where} belongs to another run or agreement")
        if chunk.first_row != row:
            raise TransferError(f"{where} starts at row {chunk.first_row}, not {row}")
        row += len(chunk.counts)
        if row > max_rows:
            raise KeyBoundError(f"more than {max_rows:,} rows of keys")
        if most_per_row is not None and any(n > most_per_row for n in chunk.counts):
            raise KeyBoundError(
                f"{where} holds a row of more keys than an honest row of the agreed recipes "
                f"({most_per_row:,})"
            )
        if len(chunk.values) != 32 * sum(chunk.counts):
            raise TransferError(
                f"{where}: {len(chunk.values):,} bytes for {sum(chunk.counts):,} keys of 32 bytes"
            )
        yield chunk
        if chunk.last:
            return
    raise TransferError("the keys ended before a chunk marked last")


# The most bytes of pairs one PushMatches message carries: far under the gRPC limit
# (MAX_MESSAGE_BYTES) whatever the ids; the pairs' count grows with the files (400,000 a
# side sent 6.9 MB in one message, over the 5 MB limit, before they were chunked).
MATCHES_MESSAGE_BYTES = 1 << 20


def _match_header(message: pb.PushMatchesRequest) -> pb.PushMatchesRequest:
    """A PushMatches message naming `message`'s run, digest and band, with no pairs yet."""
    return pb.PushMatchesRequest(
        run_id=message.run_id, digest=message.digest, review_band=message.review_band
    )


# The fields every message of a stream names as its first does, by what a refusal calls them.
_RUN = {"run_id": "run", "digest": "digest"}


def _same_as_first(kind: str, message: Message, first: Message, fields: dict[str, str]) -> None:
    """Refuses a stream's message that names another run, digest, ... than its first
    (`fields`: what each field is called in the refusal)."""
    differs = [
        what for name, what in fields.items() if getattr(message, name) != getattr(first, name)
    ]
    if differs:
        raise TransferError(
            f"a {kind} message names another {' and '.join(differs)} than the first"
        )


def match_messages(
    match_set: pb.PushMatchesRequest, limit: int = MATCHES_MESSAGE_BYTES
) -> list[pb.PushMatchesRequest]:
    """`match_set` as PushMatches messages of at most `limit` bytes of pairs each (one at
    least, so that an empty set still names its run), each naming the run, digest and band."""
    messages = [_match_header(match_set)]
    size = 0
    for pair in match_set.pairs:
        # A repeated field's element costs its size, its length's varint and its tag.
        cost = pair.ByteSize() + 6
        if size and size + cost > limit:
            messages.append(_match_header(match_set))
            size = 0
        messages[-1].pairs.append(pair)
        size += cost
    return messages


def joined_matches(
    messages: Iterator[pb.PushMatchesRequest], max_pairs: int
) -> pb.PushMatchesRequest:
    """The match set PushMatches' messages carry, checked to name one run, digest and band
    throughout and to hold at most `max_pairs` pairs (each must name another of the
    receiver's rows), so that a peer streaming pairs without end is refused, not stored."""
    joined: pb.PushMatchesRequest | None = None
    for message in messages:
        if joined is None:
            joined = _match_header(message)
        else:
            _same_as_first("matches", message, joined, {**_RUN, "review_band": "review band"})
        if len(joined.pairs) + len(message.pairs) > max_pairs:
            raise TransferError(
                f"more than {max_pairs:,} pairs: each must name another of the receiver's rows"
            )
        joined.pairs.extend(message.pairs)
    if joined is None:
        raise TransferError("no matches message")
    return joined


# Numbers per message of the hidden join's counts, named slots and rows: at most ten bytes
# each as varints, so that a message stays near 1 MiB however large the files.
NUMBERS_PER_MESSAGE = 100_000


def number_chunks(values: Sequence[int], size: int = NUMBERS_PER_MESSAGE) -> list[list[int]]:
    """`values` in order, `size` to a chunk; one empty chunk for none, so that a stream of
    them always names its run."""
    return [list(values[start : start + size]) for start in range(0, len(values), size)] or [[]]


def slot_messages(
    run_id: str, digest: str, entries: Sequence[int], slots: Sequence[int]
) -> list[pb.ResolveSlotsRequest]:
    """The named slots as ResolveSlots messages (entries and slots side by side)."""
    return [
        pb.ResolveSlotsRequest(run_id=run_id, digest=digest, entries=e, slots=s)
        for e, s in zip(number_chunks(entries), number_chunks(slots), strict=False)
    ]


def joined_slots(
    first: pb.ResolveSlotsRequest, rest: Iterator[pb.ResolveSlotsRequest], max_slots: int
) -> tuple[list[int], list[int]]:
    """The entries and slots ResolveSlots' messages name, each message naming the first's run
    and digest; past `max_slots` a NamingBoundError, before the rest is read."""
    entries: list[int] = []
    slots: list[int] = []
    for message in itertools.chain([first], rest):
        _same_as_first("slots", message, first, _RUN)
        entries.extend(message.entries)
        slots.extend(message.slots)
        if max(len(entries), len(slots)) > max_slots:
            raise NamingBoundError(
                f"more than {max_slots:,} slots named, more than the peer's rows need"
            )
    return entries, slots
