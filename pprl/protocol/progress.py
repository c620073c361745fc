"""How long work takes: the callback long loops report through, and the rate people read."""

from __future__ import annotations

from collections.abc import Callable

# progress(done, total) after each piece of a long loop (blocks, rows, mapping entries).
Progress = Callable[[int, int], None]


def rate_text(done: int, total: int, seconds: float, unit: str) -> str:
    """`1,234 rows/s, ~5 s left`; the time left only while work remains, nothing before any
    is done (no rate to tell yet). A rate under 10 keeps two significant figures: a batch
    of encrypted scores takes seconds, and "0 batches/s" told nothing."""
    if done <= 0 or seconds <= 0:
        return ""
    rate = done / seconds
    text = f"{rate:,.0f} {unit}/s" if rate >= 10 else f"{rate:.2g} {unit}/s"
    if done < total:
        text += f", ~{(total - done) / rate:,.0f} s left"
    return text
