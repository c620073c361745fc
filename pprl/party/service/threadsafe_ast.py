"""One thread at a time through `ast.parse` in the daemon.

CPython 3.11 keeps the depth of its AST-to-object conversion in state shared by every thread,
so two threads converting at once can fail with "SystemError: AST constructor recursion
depth mismatch" (CPython issue gh-106905; 3.12 keeps it per call). A daemon's threads do it
often: NumPy reads every .npy and .npz header with `ast.literal_eval`, and a phase thread
loads its artifacts while the peer service's threads load theirs (seen once in the test suite:
EXCHANGE failed INTERNAL while the peer's keys were being kept). `ast.literal_eval` and
3.11's traceback carets call the module's `parse`, so wrapping it serialises them all.
"""

from __future__ import annotations

import ast
import sys
import threading
from typing import Any

LOCK = threading.Lock()
_UNLOCKED = ast.parse


def _parse(*args: Any, **kwargs: Any) -> Any:
    with LOCK:
        return _UNLOCKED(*args, **kwargs)


def install() -> bool:
    """Wrap `ast.parse` where the interpreter needs it; True when it did."""
    if sys.version_info >= (3, 12) or ast.parse is _parse:
        return False
    ast.parse = _parse
    return True
