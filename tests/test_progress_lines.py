"""The coordinator's progress lines: counts, then rate and time left only while work remains."""

from __future__ import annotations

import io
import time

from pprl.party.coordinator import _Printer
from pprl.wire.v1 import linkage_pb2 as pb


def _line(event: pb.AdvanceResponse, elapsed: float) -> str:
    out = io.StringIO()
    _Printer(out).progress("alice", event, time.monotonic() - elapsed)
    return out.getvalue().strip()


def test_midway_shows_rate_and_time_left() -> None:
    line = _line(pb.AdvanceResponse(done=500, total=2000, unit="records"), elapsed=2.0)
    assert line.startswith("alice  500/2000 records (25%), ")
    rate = float(line.split(", ")[1].split(" ")[0].replace(",", ""))
    left = float(line.split("~")[1].split(" ")[0])
    assert 240 <= rate <= 250  # 500 records in a little over 2 s
    assert 5.9 <= left <= 6.2  # 1,500 records to go at that rate


def test_complete_shows_no_rate() -> None:
    assert _line(pb.AdvanceResponse(done=4, total=4, unit="mapping entries"), 1.0) == (
        "alice  4/4 mapping entries (100%)"
    )


def test_messages_and_finish_lines() -> None:
    assert _line(pb.AdvanceResponse(message="trained"), 1.0) == "alice  trained"
    assert _line(pb.AdvanceResponse(finished=True, seconds=1.234), 1.0) == "alice  done in 1.23 s"
