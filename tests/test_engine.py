"""The Dask engine runs the same blocks as the daemon would and gives the same pairs."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.party.phases import engine
from pprl.party.phases.engine import EngineError
from pprl.protocol.linkage import candidates, plans
from pprl.protocol.linkage.candidates import distinct_entries
from pprl.protocol.linkage.matching import Selection
from tests.oracles import pair_list
from tests.test_candidates import _linkage

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("rows_of", ["a", "b"])
def test_dask_blocks_give_the_local_pairs(scheduler: str, rows_of: str) -> None:
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models["linear"], 10, rows_of)
    work = candidates.plan(
        distinct_entries(tensor_a),
        distinct_entries(tensor_b),
        selection,
        block_bytes=4096,
        dense=False,
    )
    assert len(work.blocks) > 5
    local = plans.run_here(work)
    seen = []
    remote = engine.on_dask(scheduler)(work, lambda done, total: seen.append((done, total)))
    # Same pairs and scores; workers may run BLAS on fewer threads, so allow rounding.
    assert sorted(pair_list(remote.matches)) == sorted(pair_list(local.matches))
    np.testing.assert_allclose(
        np.sort(remote.matches.scores), np.sort(local.matches.scores), atol=1e-4
    )
    assert remote.candidates == local.candidates
    assert seen[-1] == (len(tensor_a), len(tensor_a)) and len(seen) == len(work.blocks)


def test_rbf_blocks_on_dask(scheduler: str) -> None:
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models["rbf"], 10)
    got = candidates.accepted_pairs(tensor_a, tensor_b, selection, run=engine.on_dask(scheduler))
    local = candidates.accepted_pairs(tensor_a, tensor_b, selection)
    assert sorted(pair_list(got.matches)) == sorted(pair_list(local.matches))


def test_soft_linkage_blocks_on_dask(scheduler: str) -> None:
    """Every row's best three whatever they score: the product's blocks, sent to workers."""
    tensor_a, tensor_b, _, models = _linkage()
    selection = Selection(models["linear"], 3, threshold=-np.inf)
    got = candidates.accepted_pairs(tensor_a, tensor_b, selection, run=engine.on_dask(scheduler))
    local = candidates.accepted_pairs(tensor_a, tensor_b, selection)
    assert len(local.matches) == 3 * len(tensor_a)
    assert sorted(pair_list(got.matches)) == sorted(pair_list(local.matches))


def test_unreachable_scheduler_is_named() -> None:
    tensor_a, tensor_b, _, models = _linkage()
    work = candidates.plan(
        distinct_entries(tensor_a), distinct_entries(tensor_b), Selection(models["linear"])
    )
    engine.CONNECT_SECONDS, saved = 1, engine.CONNECT_SECONDS
    try:
        with pytest.raises(EngineError, match=r"tcp://127\.0\.0\.1:9"):
            engine.on_dask("tcp://127.0.0.1:9")(work, None)
    finally:
        engine.CONNECT_SECONDS = saved
