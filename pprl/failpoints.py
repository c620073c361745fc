"""Deliberate failures for the fault-injection tests (tests/faults), armed by one environment
variable when a daemon starts; unset, every check here is a dictionary lookup that finds
nothing.

    PPRL_FAILPOINT=kill-after:<phase>   SIGKILL itself once a phase's work is done, before the
                                        phase is recorded as completed (the worst moment)
    PPRL_FAILPOINT=stop-after:<phase>   SIGSTOP itself at the same point (a paused host)
    PPRL_FAILPOINT=kill-mid-stream      SIGKILL itself after sending a tensor header, or
                                        sealed scoring's header (MATCH)
    PPRL_FAILPOINT=disk-full:<file>     writing that artifact fails with ENOSPC
    PPRL_FAILPOINT=stop-after-read:<file>  SIGSTOP itself once AGREE has read that input
                                        (the records), so a test can change the file then
    PPRL_FAILPOINT=tamper-scores        as the evaluator of the peer's sealed scores, return
                                        fresh encryptions of values of its own in place of
                                        its results (what a crafting evaluator sends), so a
                                        test can see the peer's checks catch it
    PPRL_FAILPOINT=name-every-slot      as the scorer under the hidden join, name every slot
                                        to the peer, not its rows' best (what a scorer
                                        learning the keys' graph sends)
    PPRL_FAILPOINT=probe-with-fallback  give each of its rows a fallback recipe's probing
                                        key in place of one of its own keys (what a peer
                                        probing every row of the other side sends)

Several, separated by commas, arm each of them (stop-after:agree,stop-after:train). Each fires
once per process.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import threading

FAILPOINT_ENV = "PPRL_FAILPOINT"
log = logging.getLogger("pprl.party")
_fired: set[str] = set()
_lock = threading.Lock()


def _take(name: str) -> bool:
    """Whether `name` is armed and has not fired yet; marks it fired."""
    if name not in os.environ.get(FAILPOINT_ENV, "").split(","):
        return False
    with _lock:
        if name in _fired:
            return False
        _fired.add(name)
    log.warning("failpoint %s fires", name)
    return True


def after_phase(phase: str) -> None:
    if _take(f"kill-after:{phase}"):
        os.kill(os.getpid(), signal.SIGKILL)
    if _take(f"stop-after:{phase}"):
        os.kill(os.getpid(), signal.SIGSTOP)


def after_read(what: str) -> None:
    if _take(f"stop-after-read:{what}"):
        os.kill(os.getpid(), signal.SIGSTOP)


def mid_stream() -> None:
    if _take("kill-mid-stream"):
        os.kill(os.getpid(), signal.SIGKILL)


def before_write(file_name: str) -> None:
    if _take(f"disk-full:{file_name}"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), file_name)


def tamper_scores() -> bool:
    """Whether this evaluation's results are to be replaced by values of this daemon's own."""
    return _take("tamper-scores")


def name_every_slot() -> bool:
    """Whether this scorer names every slot (a hostile peer, for the tests of its bound)."""
    return _take("name-every-slot")


def probe_with_fallback() -> bool:
    """Whether this party's rows probe with a fallback key they may not hold (a hostile peer,
    for the tests of its bound)."""
    return _take("probe-with-fallback")
