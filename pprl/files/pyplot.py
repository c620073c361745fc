"""matplotlib, an optional extra (pprl[plots]), set up to write files on a server."""

from __future__ import annotations

from typing import Any

from pprl.protocol.errors import PprlError


class PlotsUnavailable(PprlError):
    """matplotlib is not installed; the numbers are written anyway."""


def pyplot() -> Any:
    """matplotlib.pyplot drawing to files only (no display on a server)."""
    try:
        import matplotlib  # lazy: an optional extra, loaded only to draw
    except ImportError:
        raise PlotsUnavailable(
            "figures need matplotlib: pip install 'pprl[plots]' (the tables are written anyway)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg"): pyplot takes its backend on import

    return plt
