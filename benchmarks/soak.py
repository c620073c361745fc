"""Load and soak check: consecutive runs on one pair of daemons, and a burst of concurrent
Status calls during one of them. Reports, per run, each daemon's resident memory, open file
descriptors and state-directory size, so growth shows; writes the rows as JSON.

    python benchmarks/soak.py --runs 50 --records 1000 --status-calls 200 --json soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from pathlib import Path

import grpc

from pprl.party.coordination.coordinator import Coordinator
from pprl.party.credentials.tls import secure_channel
from pprl.party.local import (
    DEFAULT_REFERENCE_ROWS,
    PARTIES,
    generated_deployment,
    start_daemon,
    stop_daemon,
)
from pprl.wire.v1 import linkage_pb2 as pb
from pprl.wire.v1 import linkage_pb2_grpc as rpc


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _status_burst(deployment, calls: int) -> dict[str, float]:
    """`calls` GetStatus calls at once against alice, each on its own channel; latencies."""
    tls = deployment.coordinator_tls
    address = f"127.0.0.1:{deployment.parties['alice'].port}"
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(calls)

    def call() -> None:
        with secure_channel(address, tls, "alice") as channel:
            stub = rpc.ControlStub(channel)
            start.wait()
            began = time.perf_counter()
            try:
                stub.GetStatus(pb.GetStatusRequest(), timeout=30)
                with lock:
                    latencies.append(time.perf_counter() - began)
            except grpc.RpcError as error:
                with lock:
                    failures.append(error.code().name)

    threads = [threading.Thread(target=call) for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies.sort()
    return {
        "calls": calls,
        "failed": len(failures),
        "median_s": statistics.median(latencies) if latencies else float("nan"),
        "max_s": latencies[-1] if latencies else float("nan"),
    }


def _soak(deployment, runs: int, status_calls: int, quiet) -> tuple[list[dict], dict]:
    """`runs` new runs one after another, a Status burst during the middle one; a row a run."""
    coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls, out=quiet)
    rows = []
    burst: dict[str, float] = {}
    try:
        coordinator.wait_ready(60)
        for index in range(runs):
            began = time.perf_counter()
            if index == runs // 2:
                worker = threading.Thread(
                    target=lambda: burst.update(_status_burst(deployment, status_calls))
                )
                worker.start()
                summary = coordinator.run(new=True)
                worker.join()
            else:
                summary = coordinator.run(new=True)
            row = {"run": index + 1, "seconds": round(time.perf_counter() - began, 2)}
            row["agreed_matches"] = summary["parties"]["alice"]["agreed_matches"]
            for name in PARTIES:
                pid = deployment.processes[name].pid
                row[f"{name}_rss_mb"] = round(_rss_bytes(pid) / 1e6, 1)
                row[f"{name}_fds"] = _fds(pid)
                row[f"{name}_state_mb"] = round(
                    _tree_bytes(deployment.parties[name].state_dir) / 1e6, 2
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        coordinator.close()
    return rows, burst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--status-calls", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="pprl-soak-"))
    deployment = generated_deployment(workdir, args.records, 7, DEFAULT_REFERENCE_ROWS, overlap=0.9)
    for name in PARTIES:
        start_daemon(deployment, name)
    try:
        with open(os.devnull, "w", encoding="utf-8") as quiet:
            rows, burst = _soak(deployment, args.runs, args.status_calls, quiet)
    finally:
        for name in PARTIES:
            stop_daemon(deployment, name)
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "runs": args.runs,
        "records": args.records,
        "status_burst": burst,
        "rows": rows,
    }
    print(json.dumps({"status_burst": burst}))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
