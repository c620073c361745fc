"""Progress lines: counts, then rate and time left only while work remains."""

from __future__ import annotations

import io
import time

from pprl.party.coordination.coordinator import _Printer
from pprl.protocol.progress import rate_text
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


def test_the_pace_is_read_from_the_first_unit_done_not_from_the_phase_start() -> None:
    """A phase that spends 50 s setting up, then 10 s on its first batch (waiting for the
    peer's own setup), then a batch every 2 s: after the third batch, 37 left at 2 s each is
    about 74 s, not the 800 s the phase's start gives nor the 260 s the count's start does,
    and nothing is told at the first batch, whose pace is the setup's."""
    out = io.StringIO()
    printer = _Printer(out)
    phase_start = time.monotonic() - 64.0
    count = ("alice", "batches", 40, phase_start)

    def left() -> float:
        last = out.getvalue().strip().splitlines()[-1]
        return float(last.split("~")[1].split(" ")[0].replace(",", ""))

    printer.progress("alice", pb.AdvanceResponse(done=0, total=40, unit="batches"), phase_start)
    printer.counting[count][0] = (time.monotonic() - 14.0, 0)  # counting began 14 s ago
    printer.progress("alice", pb.AdvanceResponse(done=1, total=40, unit="batches"), phase_start)
    # One batch in 14 s would say ~546 s: no pace is told until the second.
    assert out.getvalue().splitlines()[-1].strip() == "alice  1/40 batches (2%)"
    printer.counting[count][1] = (time.monotonic() - 4.0, 1)  # the first batch came 4 s ago
    printer.progress("alice", pb.AdvanceResponse(done=3, total=40, unit="batches"), phase_start)
    assert 70 <= left() <= 78
    # Another party's count, none seen at 0: read from the phase's start.
    printer.progress("bob", pb.AdvanceResponse(done=3, total=40, unit="batches"), phase_start)
    assert left() > 700


def test_complete_shows_no_rate() -> None:
    assert _line(pb.AdvanceResponse(done=4, total=4, unit="mapping entries"), 1.0) == (
        "alice  4/4 mapping entries (100%)"
    )


def test_messages_and_finish_lines() -> None:
    assert _line(pb.AdvanceResponse(message="trained"), 1.0) == "alice  trained"
    assert _line(pb.AdvanceResponse(finished=True, seconds=1.234), 1.0) == "alice  done in 1.23 s"


def test_rate_text_gives_the_rate_and_the_time_left() -> None:
    assert rate_text(500, 2000, 2.0, "records") == "250 records/s, ~6 s left"
    assert rate_text(3_000_000, 5_000_000, 1.5, "rows") == "2,000,000 rows/s, ~1 s left"
    assert rate_text(10, 1_000_000, 10.0, "rows") == "1 rows/s, ~999,990 s left"
    # Slow units keep two significant figures, never "0 batches/s".
    assert rate_text(1, 40, 1.5, "batches") == "0.67 batches/s, ~58 s left"
    assert rate_text(7, 40, 2.0, "batches") == "3.5 batches/s, ~9 s left"


def test_rate_text_drops_the_time_left_when_done_and_says_nothing_before_any_work() -> None:
    assert rate_text(2000, 2000, 4.0, "rows") == "500 rows/s"
    assert rate_text(0, 2000, 4.0, "rows") == ""
    assert rate_text(5, 2000, 0.0, "rows") == ""
