"""Which coordinator drives each run here.

Every coordinator shares the one configured identity, so its certificate cannot tell two of
them apart; each draws a random driver id per process instead and sends it with every
Advance call. Two coordinators started at the same instant would otherwise both drive one
run, each waiting out the other's phases, and both report it as theirs.

A run is its driver's while a call of the driver is open (DRIVING: another coordinator is
refused at once), and for DRIVER_LEASE_SECONDS after the driver's last call ended or its
last hold (HOLDING: between two of its calls, or while it waits for the other party to
finish a phase; another coordinator waits, as for a busy phase). A call the driver cut off
(it was stopped or killed) holds nothing: a coordinator started again takes the run over
at once. A driver gives its runs up when it exits.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from pprl.party.wire_types import DRIVER_LEASE_SECONDS


class Call(Protocol):
    """An open call: gRPC's servicer context has this."""

    def is_active(self) -> bool: ...


class Claim(enum.Enum):
    GRANTED = "granted"
    DRIVING = "driving"  # another driver has a call open on the run
    HOLDING = "holding"  # another driver holds the run between its calls


@dataclass
class _Lease:
    driver: str
    calls: list[Call] = field(default_factory=list)
    until: float = 0.0  # the clock's reading until which the run stays held without a call


class Drivers:
    """Driver leases by run id; thread-safe."""

    def __init__(
        self,
        lease_seconds: float = DRIVER_LEASE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lease_seconds = lease_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._leases: dict[str, _Lease] = {}

    def _holder(self, run_id: str) -> _Lease | None:
        """The run's lease while it holds; calls cut off are dropped first."""
        lease = self._leases.get(run_id)
        if lease is None:
            return None
        lease.calls = [call for call in lease.calls if call.is_active()]
        if lease.calls or self._clock() < lease.until:
            return lease
        del self._leases[run_id]
        return None

    def claim(self, run_id: str, driver: str, call: Call) -> Claim:
        """Open `call` of `driver` on `run_id` unless another driver holds the run. An empty
        driver (a call outside any coordinator) is neither refused nor recorded."""
        if not driver:
            return Claim.GRANTED
        with self._lock:
            holder = self._holder(run_id)
            if holder is not None and holder.driver != driver:
                return Claim.DRIVING if holder.calls else Claim.HOLDING
            if holder is None:
                holder = self._leases[run_id] = _Lease(driver)
            holder.calls.append(call)
            return Claim.GRANTED

    def release(self, run_id: str, driver: str, call: Call) -> None:
        """`call`, opened by `claim`, has ended: the lease runs on from now if it ended
        normally, and not at all for it if its caller cut it off."""
        with self._lock:
            lease = self._leases.get(run_id)
            if lease is None or lease.driver != driver or call not in lease.calls:
                return
            lease.calls.remove(call)
            if call.is_active():
                lease.until = self._clock() + self.lease_seconds

    def hold(self, run_id: str, driver: str, release: bool) -> bool:
        """Keep `driver`'s hold on `run_id` for another lease, or give it up (open calls
        still hold it); whether the run is now this driver's."""
        with self._lock:
            holder = self._holder(run_id)
            if holder is None or holder.driver != driver or not driver:
                return False
            if release:
                holder.until = 0.0
                return self._holder(run_id) is not None
            holder.until = self._clock() + self.lease_seconds
            return True

    def held(self, run_id: str) -> bool:
        """Whether some coordinator holds `run_id` now."""
        with self._lock:
            return self._holder(run_id) is not None
