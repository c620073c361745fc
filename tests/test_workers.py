"""Sealed linkage's blinding spread over the party's workers: local processes or a real local
Dask cluster (a scheduler and worker processes) blind exactly as the daemon does, in the
same order, and a refused value is named by its place in the whole."""

from __future__ import annotations

import os

import pytest

from pprl.party.phases import workers
from pprl.party.phases.engine import EngineError
from pprl.protocol.sealed import blinding
from pprl.protocol.sealed.blinding import Blinder, BlindingError

CONTEXT = b"agreement digest|run 1"
KEYS = [f"key {n}" for n in range(1000)]


CHUNK = 100  # so that a thousand keys make ten tasks


def test_no_workers_for_one_process_and_none_started_before_a_task() -> None:
    with workers.spreading(None, 1) as spread:
        assert spread is None
    with workers.spreading(None, 2, CHUNK) as spread:
        assert isinstance(spread, workers.Spread)
        assert isinstance(spread.workers, workers.LocalWorkers)
        assert spread.workers._pool is None  # nothing to blind, nothing started
    assert workers.local_count(0) == (os.cpu_count() or 1)


def test_local_workers_blind_as_the_daemon_does() -> None:
    here = Blinder()
    expected = here.blind_keys(CONTEXT, KEYS)
    with workers.spreading(None, 2, CHUNK) as spread:
        spread_blinder = Blinder.from_secret(here.secret(), spread)
        assert spread_blinder.blind_keys(CONTEXT, KEYS) == expected
        # Re-blinding the peer's values, as EXCHANGE does, likewise.
        peer = Blinder().blind_keys(CONTEXT, KEYS)
        assert spread_blinder.reblind(peer) == here.reblind(peer)
        assert spread is not None and spread.workers._pool is not None
        assert spread.tasks == 20 and spread.where() == " in 2 local worker processes"


def test_a_bad_value_in_a_later_chunk_is_named_by_its_place_in_the_whole() -> None:
    values = Blinder().blind_keys(CONTEXT, KEYS)
    values[250] = bytes(blinding.POINT_BYTES)  # small order: blinds to zero
    with (
        workers.spreading(None, 2, CHUNK) as spread,
        pytest.raises(BlindingError, match="value 250: of small order"),
    ):
        Blinder(spread=spread).reblind(values)


def test_a_local_dask_cluster_blinds_as_the_daemon_does() -> None:
    distributed = pytest.importorskip("dask.distributed")
    here = Blinder()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        workers.spreading(cluster.scheduler_address, 0, CHUNK) as spread,
    ):
        assert isinstance(spread, workers.Spread)
        spread_blinder = Blinder.from_secret(here.secret(), spread)
        assert spread_blinder.blind_keys(CONTEXT, KEYS) == here.blind_keys(CONTEXT, KEYS)
        assert spread.workers.count == 2
        assert spread.where() == f" on the Dask cluster at {cluster.scheduler_address}"


def test_an_unreachable_scheduler_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(workers, "CONNECT_SECONDS", 2)
    with (
        workers.spreading("tcp://127.0.0.1:9", 0, CHUNK) as spread,
        pytest.raises(EngineError, match=r"tcp://127\.0\.0\.1:9"),
    ):
        Blinder(spread=spread).blind_keys(CONTEXT, KEYS)
