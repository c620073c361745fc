"""Which coordinator drives a run: the daemon's leases by driver id, on a clock the test
moves and with calls the test cuts off."""

from __future__ import annotations

from pprl.party.service.drivers import Claim, Drivers


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Call:
    def __init__(self) -> None:
        self.active = True

    def is_active(self) -> bool:
        return self.active


def test_an_open_call_drives_the_run_and_a_finished_one_holds_it_for_a_lease() -> None:
    clock = _Clock()
    drivers = Drivers(lease_seconds=10, clock=clock)
    first = _Call()
    assert drivers.claim("r", "x", first) is Claim.GRANTED and drivers.held("r")
    clock.now += 1000  # a call open for any time keeps the run
    assert drivers.claim("r", "y", _Call()) is Claim.DRIVING
    again = _Call()
    assert drivers.claim("r", "x", again) is Claim.GRANTED  # the same driver (a resumed call)
    drivers.release("r", "x", first)
    drivers.release("r", "x", again)
    clock.now += 9
    assert drivers.claim("r", "y", _Call()) is Claim.HOLDING
    assert drivers.hold("r", "x", release=False)  # x waits for its other party: renewed
    clock.now += 9
    assert drivers.claim("r", "y", _Call()) is Claim.HOLDING
    clock.now += 2  # a lease after x's last word: lapsed, y takes over
    assert not drivers.held("r")
    assert drivers.claim("r", "y", _Call()) is Claim.GRANTED
    assert not drivers.hold("r", "x", release=False)


def test_a_call_its_coordinator_cut_off_holds_nothing() -> None:
    """A coordinator killed mid-phase: the next one takes the run over at once."""
    drivers = Drivers(lease_seconds=10, clock=_Clock())
    call = _Call()
    assert drivers.claim("r", "x", call) is Claim.GRANTED
    call.active = False
    assert not drivers.held("r")  # dropped before the server even closed the call
    drivers.release("r", "x", call)
    assert drivers.claim("r", "y", _Call()) is Claim.GRANTED


def test_a_release_frees_the_run_at_once_unless_a_call_is_still_open() -> None:
    drivers = Drivers(lease_seconds=10, clock=_Clock())
    call = _Call()
    assert drivers.claim("r", "x", call) is Claim.GRANTED
    assert drivers.hold("r", "x", release=True)  # its call is still open: kept
    drivers.release("r", "x", call)
    assert drivers.held("r")  # the finished call's lease
    assert not drivers.hold("r", "x", release=True)
    assert not drivers.held("r") and drivers.claim("r", "y", _Call()) is Claim.GRANTED


def test_a_call_without_a_driver_is_neither_refused_nor_recorded() -> None:
    drivers = Drivers(lease_seconds=10, clock=_Clock())
    assert drivers.claim("r", "", _Call()) is Claim.GRANTED
    assert not drivers.held("r")
    assert drivers.claim("r", "x", _Call()) is Claim.GRANTED
    assert drivers.claim("r", "", _Call()) is Claim.GRANTED  # outside any coordinator
    assert not drivers.hold("r", "", release=False)
