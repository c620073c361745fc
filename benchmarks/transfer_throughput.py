"""Throughput of the smashed-tensor transfer over mutual TLS on loopback, in MB/s (10^6 B/s).

    .venv/bin/python benchmarks/transfer_throughput.py --records 50000 --repeats 5

A receiver process serves PushTensor over mutual TLS with development certificates. Two
receivers are timed in the same run on the same tensor file:
- "daemon": what a party does, receive_tensor: per-chunk and whole SHA-256 checks, chunks
  written to a temporary file renamed into place;
- "daemon, tmpfs": the same, writing to /dev/shm: what the transfer does when the disk is
  not the limit (the daemon's state directory is on disk, and it fsyncs the file);
- "discard": the messages are read and dropped, the ceiling gRPC with TLS allows.
A plain write of the same bytes to the disk, with fsync, is timed too.
The sender is the daemon's own tensor_messages (reads the file chunk by chunk, hashes each).
Prints a Markdown table for docs/research/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent import futures
from pathlib import Path

import grpc
import numpy as np

from pprl.party.credentials.certs import make_development_pki
from pprl.party.credentials.tls import CHANNEL_OPTIONS, TlsFiles, secure_channel, server_credentials
from pprl.party.local import free_port
from pprl.party.peering.transfer import Expected, receive_tensor, tensor_messages
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc

ENTRIES, REFERENCE_ROWS = 4, 2000
RUN_ID, DIGEST = "bench", "0" * 64
MODES = ("daemon", "tmpfs", "discard")
LABELS = {"daemon": "daemon (to disk)", "tmpfs": "daemon, tmpfs", "discard": "discard"}


class Receiver(rpc.PeerServicer):
    def __init__(self, mode: str, dest: Path) -> None:
        self.mode = mode
        self.dest = Path("/dev/shm") / f"pprl-bench-{os.getpid()}.u8" if mode == "tmpfs" else dest

    def PushTensor(self, request_iterator, context):
        if self.mode == "discard":
            received = sum(len(m.chunk.data) for m in request_iterator)
            return pb.PushTensorResponse(bytes_received=received)
        expected = Expected(RUN_ID, DIGEST, ENTRIES, REFERENCE_ROWS)
        shape, sha = receive_tensor(request_iterator, expected, self.dest)
        self.dest.unlink()
        return pb.PushTensorResponse(sha256=bytes.fromhex(sha), bytes_received=int(np.prod(shape)))


def serve(mode: str, port: int, certs: Path) -> None:
    tls = TlsFiles(certs / "bob.pem", certs / "bob.key", certs / "ca.pem")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=CHANNEL_OPTIONS)
    rpc.add_PeerServicer_to_server(Receiver(mode, certs / "received.u8"), server)
    server.add_secure_port(f"127.0.0.1:{port}", server_credentials(tls))
    server.start()
    server.wait_for_termination()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def measure(mode: str, records: int, repeats: int, work: Path) -> list[float]:
    certs = work / "certs"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", mode, "--port", str(port), "--certs", str(certs)]
    )
    tensor = work / "tensor.u8"
    shape = (records, ENTRIES, REFERENCE_ROWS)
    sha = _sha256(tensor)
    tls = TlsFiles(certs / "alice.pem", certs / "alice.key", certs / "ca.pem")
    rates = []
    try:
        with secure_channel(f"127.0.0.1:{port}", tls, "bob") as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            stub = rpc.PeerStub(channel)
            for _ in range(repeats):
                began = time.perf_counter()
                receipt = stub.PushTensor(tensor_messages(RUN_ID, DIGEST, tensor, shape, sha))
                seconds = time.perf_counter() - began
                assert receipt.bytes_received == tensor.stat().st_size
                rates.append(tensor.stat().st_size / seconds / 1e6)
    finally:
        server.terminate()
        server.wait()
    return rates


def disk_rates(tensor: Path, repeats: int) -> list[float]:
    """MB/s of copying the tensor to a new file on the same disk and fsyncing it."""
    rates = []
    for _ in range(repeats):
        copy = tensor.with_suffix(".copy")
        began = time.perf_counter()
        with tensor.open("rb") as source, copy.open("wb") as out:
            while block := source.read(4 << 20):
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        rates.append(tensor.stat().st_size / (time.perf_counter() - began) / 1e6)
        copy.unlink()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--serve", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--certs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, Path(args.certs))
        return
    with tempfile.TemporaryDirectory(prefix="pprl-transfer-") as tmp:
        work = Path(tmp)
        make_development_pki(work / "certs", ["alice", "bob"])
        size = args.records * ENTRIES * REFERENCE_ROWS
        rng = np.random.default_rng(0)
        rng.integers(0, 20, size=size, dtype=np.uint8).tofile(work / "tensor.u8")
        results = {LABELS[m]: measure(m, args.records, args.repeats, work) for m in MODES}
        results["plain write + fsync"] = disk_rates(work / "tensor.u8", args.repeats)
    print(
        f"tensor {args.records:,} x {ENTRIES} x {REFERENCE_ROWS} = {size / 1e6:,.0f} MB; "
        f"{os.cpu_count()} CPUs; {platform.processor() or platform.machine()}; "
        f"Python {platform.python_version()}, grpcio {grpc.__version__}"
    )
    print("| receiver | median MB/s | min | max | repeats |")
    print("|---|---|---|---|---|")
    for mode, rates in results.items():
        print(
            f"| {mode} | {statistics.median(rates):.0f} | {min(rates):.0f} | {max(rates):.0f} "
            f"| {len(rates)} |"
        )


if __name__ == "__main__":
    main()
