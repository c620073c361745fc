"""Where a party's or the coordinator's TLS files are: its own module, not the daemon's config,
so the coordinator starts without the daemon's imports (a third of a second each time)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsFiles:
    """A certificate, its key, and the CA both sides trust."""

    cert: Path
    key: Path
    ca: Path
