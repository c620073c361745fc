"""How much memory a long-lived daemon keeps: glibc gives each thread that allocates its own
malloc arena, and the gRPC worker threads of a daemon free large numpy buffers into many of
them, where the freed room is rarely returned. benchmarks/soak.py measured it: over 50
consecutive runs of 1,000 records one daemon's resident memory rose from 500 to 845 MB with
glibc's default arenas, and stayed between 496 and 535 MB over 30 runs with two.
"""

from __future__ import annotations

import ctypes
import os

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter behind MALLOC_ARENA_MAX


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas before the server's threads start, unless the operator set
    MALLOC_ARENA_MAX (which then rules). False where the C library has no mallopt."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_ARENA_MAX, arenas))
