"""The end-of-run summary (pprl.cli.summary, from Coordinator.summary): it names the agreed
method, leaves out an estimate nobody fitted, and says only what is counted at the phase
both parties reached."""

from __future__ import annotations

import json

import pytest

from pprl.cli.summary import print_summary
from pprl.party.coordination.coordinator import Coordinator, Endpoint
from pprl.protocol.method_settings import MethodParams
from pprl.wire.v1 import linkage_pb2 as pb

PARTIES = (Endpoint("alice", "127.0.0.1:1", "alice"), Endpoint("bob", "127.0.0.1:2", "bob"))
SEALED = MethodParams(encoding="sealed", sealed_keys="first+last,first:soundex+last:soundex")


class _Reported(Coordinator):
    """A coordinator whose parties' statuses are given: the summary reads nothing else."""

    def __init__(self, statuses: dict[str, pb.GetStatusResponse]) -> None:
        self.statuses = statuses

    def status(self, party: Endpoint, run_id: str = "") -> pb.GetStatusResponse:
        return self.statuses[party.name]


def _summary(completed: int, method: MethodParams | None = SEALED, **fields) -> dict:
    """The summary of two parties reporting `fields`, both having completed `completed`."""
    statuses = {
        party.name: pb.GetStatusResponse(
            identity=party.identity,
            run_id="r1",
            completed=completed,
            method=json.dumps(method.summary()) if method else "",
            **fields,
        )
        for party in PARTIES
    }
    return _Reported(statuses).summary(PARTIES, "r1")


def test_a_sealed_run_names_its_method_and_has_no_fitted_estimate(capsys) -> None:
    summary = _summary(pb.PHASE_LINK, records=300, own_matches=250, agreed_matches=240)
    method = summary["method"]
    assert method["encoding"] == "sealed" and method["sealed_join"] == "graph"
    assert method["sealed_keys"] == SEALED.sealed_keys
    assert {"sealed_thresholds", "sealed_crypto", "sealed_kernel_features"} <= set(method)
    assert "assignment" in method and "noise_sigma" not in method
    # The slots and buckets named only under the hidden join are not named under the graph.
    assert "sealed_slots" not in method
    assert all("fitted" not in party for party in summary["parties"].values())
    print_summary(summary)
    out = capsys.readouterr().out
    assert "method: encoding sealed\n  sealed_keys first+last,first:soundex+last:soundex;" in out
    assert "alice: 300 records, its classifier accepted 250 pairs, agreed by both: 240" in out
    assert "fitted" not in out


def test_a_release_names_its_noise_and_keeps_its_fitted_estimate(capsys) -> None:
    noisy = MethodParams(noise_sigma=1.5)
    fitted = {"fitted_precision": 0.9, "fitted_recall": 0.8, "fitted_f1": 0.85}
    summary = _summary(pb.PHASE_LINK, noisy, records=300, fitted_error_rate=0.3, **fitted)
    assert summary["method"]["encoding"] == "reference"
    assert summary["method"]["noise_sigma"] == 1.5
    assert summary["parties"]["bob"]["fitted"]["f1"] == pytest.approx(0.85)
    print_summary(summary)
    assert "expected, fitted to its accepted pairs: F1 about 0.85" in capsys.readouterr().out


def test_after_agree_nothing_is_counted_and_no_classifier_is_named(capsys) -> None:
    print_summary(_summary(pb.PHASE_AGREE))
    out = capsys.readouterr().out
    assert "method: encoding sealed" in out
    assert "alice: nothing counted yet (the run has completed AGREE)" in out
    assert "records" not in out and "classifier accepted" not in out
    assert "agreed by both" not in out


def test_after_exchange_the_records_are_counted_and_no_pair_yet(capsys) -> None:
    print_summary(_summary(pb.PHASE_EXCHANGE, records=300))
    out = capsys.readouterr().out
    assert "alice: 300 records\n" in out and "bob: 300 records\n" in out
    assert "classifier accepted" not in out and "agreed by both" not in out


def test_before_agree_no_method_is_named(capsys) -> None:
    summary = _summary(pb.PHASE_UNSPECIFIED, method=None)
    assert "method" not in summary
    print_summary(summary)
    assert "method:" not in capsys.readouterr().out
