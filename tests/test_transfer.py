"""Tensor streams: what the sender emits, and every way the receiver refuses a bad one."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from pprl.party.credentials.tls import CHUNK_BYTES, MAX_MESSAGE_BYTES
from pprl.party.peering.transfer import (
    Expected,
    NamingBoundError,
    TransferError,
    joined_matches,
    joined_slots,
    match_messages,
    number_chunks,
    receive_tensor,
    slot_messages,
    tensor_messages,
)
from pprl.wire.v1 import linkage_pb2 as pb

RUN_ID = "run-2024-0001"
DIGEST = "d" * 64
ENTRIES, ROWS = 4, 1000
# 4.4 MB: more than one CHUNK_BYTES, so the stream has two chunks, the last one short.
BIG_SHAPE = (1100, ENTRIES, ROWS)
SMALL_SHAPE = (3, ENTRIES, ROWS)
EXPECTED = Expected(RUN_ID, DIGEST, ENTRIES, ROWS)


def write_tensor(path: Path, shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, str]:
    tensor = np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)
    path.write_bytes(tensor.tobytes())
    return tensor, hashlib.sha256(tensor.tobytes()).hexdigest()


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, str]:
    path = tmp_path_factory.mktemp("send") / "smashed.bin"
    tensor, sha = write_tensor(path, BIG_SHAPE, seed=1)
    return path, tensor, sha


@pytest.fixture(scope="module")
def big_stream(big: tuple[Path, np.ndarray, str]) -> list[pb.PushTensorRequest]:
    path, _, sha = big
    return list(tensor_messages(RUN_ID, DIGEST, path, BIG_SHAPE, sha))


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    return inbox / "peer_smashed.bin"


def copy(messages: list[pb.PushTensorRequest]) -> list[pb.PushTensorRequest]:
    """Deep copies, so that a test can tamper with them without touching the shared stream."""
    copies = []
    for message in messages:
        clone = pb.PushTensorRequest()
        clone.CopyFrom(message)
        copies.append(clone)
    return copies


def header_for(shape: tuple[int, ...], data: bytes, **changes: object) -> pb.PushTensorRequest:
    total = math.prod(shape)
    fields = {
        "run_id": RUN_ID,
        "digest": DIGEST,
        "shape": list(shape),
        "dtype": "uint8",
        "total_bytes": total,
        "chunk_count": math.ceil(total / CHUNK_BYTES),
        "sha256": hashlib.sha256(data).digest(),
        **changes,
    }
    return pb.PushTensorRequest(header=pb.TensorHeader(**fields))


def chunk(index: int, data: bytes, sha: bytes | None = None) -> pb.PushTensorRequest:
    digest = hashlib.sha256(data).digest() if sha is None else sha
    return pb.PushTensorRequest(chunk=pb.TensorChunk(index=index, data=data, sha256=digest))


def small_stream(
    shape: tuple[int, ...] = SMALL_SHAPE, **changes: object
) -> list[pb.PushTensorRequest]:
    """A hand-made one-chunk stream for `shape`, its header altered by `changes`."""
    data = bytes(range(256)) * (math.prod(shape) // 256) + bytes(math.prod(shape) % 256)
    return [header_for(shape, data, **changes), chunk(0, data)]


def assert_refused(messages: list, dest: Path, match: str) -> None:
    with pytest.raises(TransferError, match=match):
        receive_tensor(iter(messages), EXPECTED, dest)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == [], "a temporary file was left behind"


# --- the sender ---------------------------------------------------------------------------


def test_sender_header_describes_the_file(big, big_stream) -> None:
    path, _, sha = big
    header = big_stream[0].header
    assert big_stream[0].WhichOneof("body") == "header"
    assert header.run_id == RUN_ID
    assert header.digest == DIGEST
    assert tuple(header.shape) == BIG_SHAPE
    assert header.dtype == "uint8"
    assert header.total_bytes == 4_400_000 == path.stat().st_size
    assert header.chunk_count == 2
    assert header.sha256 == bytes.fromhex(sha)


def test_sender_chunks_cover_the_file_in_order(big, big_stream) -> None:
    path, _, _ = big
    chunks = [m.chunk for m in big_stream[1:]]
    assert all(m.WhichOneof("body") == "chunk" for m in big_stream[1:])
    assert [c.index for c in chunks] == [0, 1]
    assert [len(c.data) for c in chunks] == [CHUNK_BYTES, 4_400_000 - CHUNK_BYTES]
    assert all(c.sha256 == hashlib.sha256(c.data).digest() for c in chunks)
    assert b"".join(c.data for c in chunks) == path.read_bytes()


# --- the receiver: accepted -----------------------------------------------------------------


def test_round_trip_of_a_multi_chunk_tensor(big, big_stream, dest: Path) -> None:
    _, tensor, sha = big
    assert len(big_stream) == 3  # header and two chunks
    shape, received_sha = receive_tensor(iter(copy(big_stream)), EXPECTED, dest)
    assert shape == BIG_SHAPE
    assert received_sha == sha
    stored = np.fromfile(dest, dtype=np.uint8).reshape(shape)
    np.testing.assert_array_equal(stored, tensor)
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]


def test_round_trip_of_a_single_chunk_tensor(tmp_path: Path, dest: Path) -> None:
    source = tmp_path / "small.bin"
    tensor, sha = write_tensor(source, SMALL_SHAPE, seed=2)
    messages = tensor_messages(RUN_ID, DIGEST, source, SMALL_SHAPE, sha)
    shape, received_sha = receive_tensor(messages, EXPECTED, dest)
    assert (shape, received_sha) == (SMALL_SHAPE, sha)
    assert dest.read_bytes() == tensor.tobytes()
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]


def test_a_refused_stream_keeps_an_earlier_tensor(big_stream, dest: Path) -> None:
    dest.write_bytes(b"earlier tensor")
    messages = copy(big_stream)
    del messages[-1]
    with pytest.raises(TransferError):
        receive_tensor(iter(messages), EXPECTED, dest)
    assert dest.read_bytes() == b"earlier tensor"
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]


# --- the receiver: refused ------------------------------------------------------------------


def test_refuses_an_empty_stream(dest: Path) -> None:
    assert_refused([], dest, "must start with a tensor header")


def test_refuses_a_stream_without_header(big_stream, dest: Path) -> None:
    assert_refused(copy(big_stream)[1:], dest, "must start with a tensor header")


def test_refuses_a_stale_run_id(dest: Path) -> None:
    assert_refused(small_stream(run_id="run-2023-0042"), dest, "run-2023-0042")


def test_refuses_a_different_agreement_digest(dest: Path) -> None:
    assert_refused(small_stream(digest="e" * 64), dest, "different agreement digest")


@pytest.mark.parametrize("dtype", ["float32", "int8", "", "UINT8"])
def test_refuses_a_wrong_dtype(dest: Path, dtype: str) -> None:
    assert_refused(small_stream(dtype=dtype), dest, "dtype")


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param((3, ENTRIES + 1, ROWS), id="mapping-entries"),
        pytest.param((3, ENTRIES - 1, ROWS), id="fewer-mapping-entries"),
        pytest.param((3, ENTRIES, ROWS - 1), id="reference-rows"),
        pytest.param((3, ROWS, ENTRIES), id="transposed"),
        pytest.param((3 * ENTRIES, ROWS), id="two-dimensional"),
        pytest.param((1, 3, ENTRIES, ROWS), id="four-dimensional"),
    ],
)
def test_refuses_a_wrong_shape(dest: Path, shape: tuple[int, ...]) -> None:
    # total_bytes and chunk_count fit the shape, so only the shape itself is wrong.
    assert_refused(small_stream(shape), dest, r"shape \(")


def test_refuses_zero_records(dest: Path) -> None:
    messages = [header_for((0, ENTRIES, ROWS), b"")]
    assert_refused(messages, dest, r"shape \(0, 4, 1000\)")


@pytest.mark.parametrize("delta", [-1, 1, 3 * ENTRIES * ROWS])
def test_refuses_total_bytes_that_do_not_match_the_shape(dest: Path, delta: int) -> None:
    total = math.prod(SMALL_SHAPE) + delta
    messages = small_stream(total_bytes=total)
    assert_refused(messages, dest, f"total_bytes {total} does not match")


@pytest.mark.parametrize("count", [0, 2, 5])
def test_refuses_a_wrong_chunk_count(dest: Path, count: int) -> None:
    assert_refused(small_stream(chunk_count=count), dest, f"chunk_count {count}")


def test_refuses_a_multi_chunk_stream_declaring_one_chunk_too_many(big_stream, dest) -> None:
    messages = copy(big_stream)
    messages[0].header.chunk_count = 3
    assert_refused(messages, dest, "chunk_count 3")


def test_refuses_a_header_checksum_of_the_wrong_length(dest: Path) -> None:
    assert_refused(small_stream(sha256=b"\x01" * 31), dest, "32 bytes")


def test_refuses_a_chunk_with_a_bad_checksum(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    data = bytearray(messages[2].chunk.data)
    data[-1] ^= 0xFF
    messages[2].chunk.data = bytes(data)
    assert_refused(messages, dest, "chunk 1 fails its checksum")


def test_refuses_chunks_out_of_order(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages[1], messages[2] = messages[2], messages[1]
    assert_refused(messages, dest, "chunk 1 arrived where chunk 0 was due")


def test_refuses_a_repeated_chunk(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages[2] = messages[1]
    assert_refused(messages, dest, "chunk 0 arrived where chunk 1 was due")


def test_refuses_a_stream_missing_its_last_chunk(big_stream, dest: Path) -> None:
    messages = copy(big_stream)[:-1]
    assert_refused(messages, dest, f"received {CHUNK_BYTES} bytes of 4400000")


def test_refuses_a_stream_with_only_a_header(big_stream, dest: Path) -> None:
    assert_refused(copy(big_stream)[:1], dest, "received 0 bytes of 4400000")


def test_refuses_a_truncated_last_chunk(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages[2] = chunk(1, messages[2].chunk.data[:-1])
    assert_refused(messages, dest, f"received {4_400_000 - 1} bytes of 4400000")


def test_refuses_an_extra_chunk(big_stream, dest: Path) -> None:
    messages = [*copy(big_stream), chunk(2, b"\x00" * 16)]
    assert_refused(messages, dest, "chunk 2 goes beyond the declared size")


def test_refuses_a_last_chunk_longer_than_declared(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages[2] = chunk(1, messages[2].chunk.data + b"\x00")
    assert_refused(messages, dest, "chunk 1 goes beyond the declared size")


def test_refuses_a_chunk_larger_than_the_chunk_size(dest: Path) -> None:
    shape = (1050, ENTRIES, ROWS)  # 4.2 MB: two chunks declared
    data = bytes(math.prod(shape))
    messages = [header_for(shape, data), chunk(0, data)]  # all of it in one oversized chunk
    assert_refused(messages, dest, "chunk 0 goes beyond the declared size")


def test_refuses_a_second_header(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages.insert(2, copy(big_stream)[0])
    assert_refused(messages, dest, "message 2 is not a chunk")


def test_refuses_a_whole_payload_checksum_mismatch(big_stream, dest: Path) -> None:
    messages = copy(big_stream)
    messages[0].header.sha256 = hashlib.sha256(b"some other tensor").digest()
    # Every chunk passes its own checksum; only the whole payload does not.
    assert all(m.chunk.sha256 == hashlib.sha256(m.chunk.data).digest() for m in messages[1:])
    assert_refused(messages, dest, "whole-payload checksum")


def test_refuses_chunks_that_pass_their_checksums_but_differ_from_the_sender(
    big_stream, dest: Path
) -> None:
    messages = copy(big_stream)
    data = bytearray(messages[1].chunk.data)
    data[0] ^= 0x01
    messages[1] = chunk(0, bytes(data))  # re-checksummed, as an attacker in the middle would
    assert_refused(messages, dest, "whole-payload checksum")


def test_refuses_a_stream_that_fails_midway(big_stream, dest: Path) -> None:
    """A broken connection (the iterator raises) must leave nothing behind either."""

    def broken() -> Iterator[pb.PushTensorRequest]:
        yield from copy(big_stream)[:2]
        raise ConnectionError("peer went away")

    with pytest.raises(ConnectionError):
        receive_tensor(broken(), EXPECTED, dest)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_a_match_set_goes_in_messages_of_bounded_size_and_joins_back_whole() -> None:
    pairs = [
        pb.MatchedPair(sender_row=i, receiver_row=7 * i, sender_id=f"record-{i:06d}")
        for i in range(5000)
    ]
    match_set = pb.PushMatchesRequest(run_id="r1", digest="d" * 64, pairs=pairs, review_band=0.9)
    messages = match_messages(match_set, limit=10_000)
    assert len(messages) > 10
    assert all(m.ByteSize() <= 10_000 + 200 for m in messages)
    assert all((m.run_id, m.digest, m.review_band) == ("r1", "d" * 64, 0.9) for m in messages)
    assert joined_matches(iter(messages), max_pairs=5000) == match_set
    # 400,000 a side sent 6.9 MB in one message; at the default limit each stays far under
    # gRPC's.
    assert max(m.ByteSize() for m in match_messages(match_set)) < MAX_MESSAGE_BYTES // 4
    # An empty set still names its run.
    empty = match_messages(pb.PushMatchesRequest(run_id="r1", digest="d" * 64))
    assert len(empty) == 1 and joined_matches(iter(empty), max_pairs=0).run_id == "r1"


def test_a_match_stream_past_the_receivers_rows_or_changing_run_is_refused() -> None:
    pair = pb.MatchedPair(sender_row=0, receiver_row=0, sender_id="A")
    one = pb.PushMatchesRequest(run_id="r1", digest="d", pairs=[pair])
    with pytest.raises(TransferError, match="more than 2 pairs"):
        joined_matches(iter([one] * 3), max_pairs=2)
    other = pb.PushMatchesRequest(run_id="r2", digest="d", pairs=[pair])
    with pytest.raises(TransferError, match="another run than the first"):
        joined_matches(iter([one, other]), max_pairs=9)
    with pytest.raises(TransferError, match="no matches message"):
        joined_matches(iter([]), max_pairs=9)


def test_the_hidden_joins_numbers_go_in_bounded_messages_and_join_back_whole() -> None:
    entries, slots = list(range(250_000)), [k % 3 for k in range(250_000)]
    messages = slot_messages("r1", "d", entries, slots)
    assert len(messages) == 3 and max(m.ByteSize() for m in messages) < 1 << 20
    assert joined_slots(messages[0], iter(messages[1:]), 250_000) == (entries, slots)
    assert [len(c) for c in number_chunks(list(range(5)), size=2)] == [2, 2, 1]
    assert number_chunks([]) == [[]]
    with pytest.raises(NamingBoundError, match="more than 249,999 slots"):
        joined_slots(messages[0], iter(messages[1:]), 249_999)
    other = pb.ResolveSlotsRequest(run_id="r1", digest="e", entries=[1], slots=[0])
    with pytest.raises(TransferError, match="another digest than the first"):
        joined_slots(messages[0], iter([other]), 10**6)
