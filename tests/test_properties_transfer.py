"""Property tests (hypothesis) for tensor streams: every tensor round-trips byte for byte, and
every single corruption of a stream is refused without leaving a file behind.

``pprl.party.peering.transfer`` imports CHUNK_BYTES into its own namespace and both
``tensor_messages`` (the sender) and ``receive_tensor`` (the receiver) read that module global
at call time, so patching ``pprl.party.peering.transfer.CHUNK_BYTES`` reaches both; patching
``pprl.party.credentials.tls`` would not.
"""

from __future__ import annotations

import hashlib
import math
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pprl.party.peering import transfer
from pprl.party.peering.transfer import Expected, TransferError, receive_tensor, tensor_messages
from pprl.wire.v1 import linkage_pb2 as pb

RUN_ID = "run-property"
DIGEST = "f" * 64
UINT32 = 2**32 - 1
UINT64 = 2**64 - 1

Shape = tuple[int, int, int]
Messages = list[pb.PushTensorRequest]


@st.composite
def tensors(draw: st.DrawFn, max_records: int = 300) -> tuple[Shape, bytes]:
    """A (records, mapping entries, reference rows) uint8 tensor's shape and raw bytes."""
    shape = (
        draw(st.integers(min_value=1, max_value=max_records)),
        draw(st.integers(min_value=1, max_value=4)),
        draw(st.integers(min_value=1, max_value=50)),
    )
    size = math.prod(shape)
    # Content up to 60 kB is beyond hypothesis' own buffer: a drawn seed, or a drawn short
    # pattern repeated (which shrinks well and gives chunks with equal data).
    if draw(st.booleans()):
        rng = np.random.default_rng(draw(st.integers(min_value=0, max_value=2**32 - 1)))
        content = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
    else:
        pattern = draw(st.binary(min_size=1, max_size=64))
        content = (pattern * (size // len(pattern) + 1))[:size]
    return shape, content


@contextmanager
def stream_of(shape: Shape, content: bytes) -> Iterator[tuple[Messages, Path]]:
    """The sender's messages for ``content`` and an empty inbox directory to receive into."""
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "smashed.bin"
        source.write_bytes(content)
        inbox = Path(directory) / "inbox"
        inbox.mkdir()
        sha = hashlib.sha256(content).hexdigest()
        yield list(tensor_messages(RUN_ID, DIGEST, source, shape, sha)), inbox


def expected_for(shape: Shape) -> Expected:
    return Expected(RUN_ID, DIGEST, shape[1], shape[2])


@settings(max_examples=40, deadline=None)
@given(
    tensor=tensors(),
    chunk_bytes=st.one_of(st.none(), st.integers(min_value=64, max_value=4096)),
)
def test_receive_reproduces_any_tensor_byte_for_byte(
    tensor: tuple[Shape, bytes], chunk_bytes: int | None
) -> None:
    """Round trip with the real 4 MiB chunks (one chunk) or patched small ones (many)."""
    shape, content = tensor
    size = transfer.CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    with (
        mock.patch.object(transfer, "CHUNK_BYTES", size),
        stream_of(shape, content) as (messages, inbox),
    ):
        assert len(messages) == 1 + math.ceil(len(content) / size)
        dest = inbox / "peer_smashed.bin"
        received = receive_tensor(iter(messages), expected_for(shape), dest)
        assert received == (shape, hashlib.sha256(content).hexdigest())
        assert dest.read_bytes() == content
        assert [p.name for p in inbox.iterdir()] == [dest.name]


# --- single corruptions ---------------------------------------------------------------------

Corruption = Callable[[Messages], None]


def _clone(message: pb.PushTensorRequest) -> pb.PushTensorRequest:
    copy = pb.PushTensorRequest()
    copy.CopyFrom(message)
    return copy


def _other_int(data: st.DataObject, old: int, top: int) -> int:
    return data.draw(st.integers(min_value=0, max_value=top).filter(lambda v: v != old))


def _header_corruption(data: st.DataObject, header: pb.TensorHeader) -> tuple[str, Corruption]:
    """Change one header field to another value of its wire type."""
    field = data.draw(
        st.sampled_from(
            ["run_id", "digest", "dtype", "shape", "total_bytes", "chunk_count", "sha256"]
        )
    )
    if field in ("run_id", "digest", "dtype"):
        old_text = getattr(header, field)
        text = data.draw(st.text(max_size=70).map(lambda v: v if v != old_text else v + "x"))
        return f"header.{field}={text!r}", lambda m: setattr(m[0].header, field, text)
    if field == "sha256":
        old_sha = header.sha256
        sha = data.draw(st.binary(max_size=40).map(lambda v: v if v != old_sha else v + b"\0"))
        return f"header.sha256={sha.hex()}", lambda m: setattr(m[0].header, "sha256", sha)
    if field == "total_bytes":
        total = _other_int(data, header.total_bytes, UINT64)
        return f"header.total_bytes={total}", lambda m: setattr(m[0].header, field, total)
    if field == "chunk_count":
        count = _other_int(data, header.chunk_count, UINT32)
        return f"header.chunk_count={count}", lambda m: setattr(m[0].header, field, count)
    shape = list(header.shape)
    how = data.draw(st.sampled_from(["dimension", "append", "remove"]))
    if how == "dimension":
        axis = data.draw(st.integers(min_value=0, max_value=2))
        shape[axis] = _other_int(data, shape[axis], data.draw(st.sampled_from([64, UINT64])))
    elif how == "append":
        shape.append(data.draw(st.integers(min_value=0, max_value=UINT64)))
    else:
        del shape[data.draw(st.integers(min_value=0, max_value=2))]

    def set_shape(messages: Messages) -> None:
        del messages[0].header.shape[:]
        messages[0].header.shape.extend(shape)

    return f"header.shape={shape}", set_shape


def _chunk_corruption(data: st.DataObject, messages: Messages) -> tuple[str, Corruption]:
    """Flip a data byte, drop, duplicate or reorder chunks, or alter a chunk's own fields."""
    n = len(messages) - 1  # chunks
    kinds = ["flip", "drop", "duplicate", "checksum", "index"] + (["reorder"] if n >= 2 else [])
    kind = data.draw(st.sampled_from(kinds))
    i = data.draw(st.integers(min_value=1, max_value=n))  # a chunk's position in the stream
    if kind == "flip":
        position = data.draw(st.integers(min_value=0, max_value=len(messages[i].chunk.data) - 1))
        mask = data.draw(st.integers(min_value=1, max_value=255))

        def flip(m: Messages) -> None:
            flipped = bytearray(m[i].chunk.data)
            flipped[position] ^= mask
            m[i].chunk.data = bytes(flipped)

        return f"flip chunk {i - 1} byte {position} ^ {mask}", flip
    if kind == "drop":
        return f"drop chunk {i - 1}", lambda m: m.pop(i)
    if kind == "duplicate":
        at = data.draw(st.integers(min_value=1, max_value=n + 1))
        return f"duplicate chunk {i - 1} at {at - 1}", lambda m: m.insert(at, _clone(m[i]))
    if kind == "checksum":
        old_sha = messages[i].chunk.sha256
        sha = data.draw(st.binary(max_size=40).map(lambda v: v if v != old_sha else v + b"\0"))
        return f"checksum of chunk {i - 1}={sha.hex()}", lambda m: setattr(
            m[i].chunk, "sha256", sha
        )
    if kind == "index":
        index = _other_int(data, i - 1, UINT32)
        return f"index of chunk {i - 1}={index}", lambda m: setattr(m[i].chunk, "index", index)
    j = data.draw(st.integers(min_value=1, max_value=n).filter(lambda j: j != i))

    def swap(m: Messages) -> None:
        m[i], m[j] = m[j], m[i]

    return f"reorder chunks {i - 1} and {j - 1}", swap


@settings(max_examples=150, deadline=None)
@given(
    tensor=tensors(max_records=20),
    chunk_bytes=st.integers(min_value=16, max_value=256),
    data=st.data(),
)
def test_any_single_corruption_is_refused_and_leaves_nothing(
    tensor: tuple[Shape, bytes], chunk_bytes: int, data: st.DataObject
) -> None:
    """Flip, drop, duplicate, reorder or alter a chunk, or change a header field: the receiver
    raises TransferError and neither the destination nor a temporary file is left."""
    shape, content = tensor
    with (
        mock.patch.object(transfer, "CHUNK_BYTES", chunk_bytes),
        stream_of(shape, content) as (messages, inbox),
    ):
        if data.draw(st.booleans()):
            what, corrupt = _header_corruption(data, messages[0].header)
        else:
            what, corrupt = _chunk_corruption(data, messages)
        event(re.split(r"[ =]", what)[0])
        event("one chunk" if len(messages) == 2 else "several chunks")
        corrupted = [_clone(message) for message in messages]
        corrupt(corrupted)
        assert corrupted != messages, what
        dest = inbox / "peer_smashed.bin"
        with pytest.raises(TransferError):
            receive_tensor(iter(corrupted), expected_for(shape), dest)
        assert list(inbox.iterdir()) == [], f"{what} left a file behind"
