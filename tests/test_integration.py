"""Two daemons and the coordinator as separate processes, over loopback with real certificates."""

from __future__ import annotations

import csv
import json
import re
import signal

import pytest

from pprl.party.coordination.coordinator import Coordinator
from pprl.party.local import PARTIES, evaluate, read_truth, start_daemon, stop_daemon
from pprl.party.service.wire_log import read_wire_log
from pprl.party.storage.artifacts import PEER_MATCHES_CSV
from pprl.party.storage.state import run_dir
from tests.conftest import coordinate

pytestmark = pytest.mark.integration

PHASES = ["agree", "smash", "train", "exchange", "match", "reveal", "link"]


def _truth(deployment):
    return read_truth(deployment.workdir / "data" / "truth.csv")


def _summary(deployment, name, *extra):
    path = deployment.workdir / f"{name}.json"
    result = coordinate(deployment, "--json", str(path), *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(path.read_text()), result


@pytest.mark.parametrize(
    ("encoding", "sent_at_least", "words"),
    [
        # The default: a 382 KB public key and the encrypted vectors at the least.
        (None, 300_000, "under encryption"),
        # Each party's smashed tensor at the least: 300 records x 4 entries x 1000 rows.
        ("reference", 300 * 4 * 1000, "peer confirmed the checksum ("),
    ],
)
def test_full_run_links_generated_data(deploy, encoding, sent_at_least, words):
    deployment = deploy(size=300, overlap=0.9, encoding=encoding)
    summary, result = _summary(deployment, "run")
    assert list(summary["phases"]) == PHASES
    assert "[5/7] MATCH" in result.stdout
    assert words in result.stdout
    agreed_line = f"agreed by both: {summary['parties']['alice']['agreed_matches']:,}"
    assert agreed_line in result.stdout
    quality = evaluate(deployment, summary["run_id"], _truth(deployment))
    assert quality["linkage"]["f1"] >= 0.95
    for party in PARTIES:
        assert quality[party]["recall"] >= 0.93
        assert summary["bytes_sent"][party] >= sent_at_least
        assert summary["parties"][party]["records"] == 300
        # Candidates only: fewer than all 90,000 pairs, at least the pairs it kept.
        kept = summary["parties"][party]["own_matches"]
        assert kept <= summary["parties"][party]["scored_pairs"] < 300 * 300
        assert summary["parties"][party]["peak_rss_bytes"] > 20 << 20
    agreed = {p["agreed_matches"] for p in summary["parties"].values()}
    assert agreed == {quality["linkage"]["true_positives"] + quality["linkage"]["false_positives"]}


# The bytes a record value or id is written in; any run of them is where one could be.
TEXT_BYTE = rb"[A-Za-z0-9' .-]"
TEXT = re.compile(TEXT_BYTE + rb"+")


def _text_runs(payload: bytes, shortest: int) -> str:
    """The payload's runs of TEXT bytes at least `shortest` long, joined by a byte no value
    holds: a value is in the payload exactly when it is in this string, which is far shorter
    than megabytes of ciphertext to search once per value."""
    runs = re.findall(TEXT_BYTE + rb"{%d,}" % shortest, payload)
    return "\n".join(run.decode("ascii") for run in runs)


def _values_and_ids(deployment, shortest: int):
    values, ids = set(), set()
    for name in PARTIES:
        path = deployment.workdir / "data" / f"{name}.csv"
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                ids.add(row["id"])
                values |= {row[k] for k in ("first", "middle", "last") if len(row[k]) >= shortest}
    return values, ids


CONTROL = {
    "/pprl.wire.v1.Control/Advance",
    "/pprl.wire.v1.Control/GetStatus",
    "/pprl.wire.v1.Control/Hold",
}
AGREEMENT_AND_MATCHES = {"/pprl.wire.v1.Peer/GetAgreement", "/pprl.wire.v1.Peer/PushMatches"}
SEALED_HIDDEN = ("BlindKeys", "SendEntries", "JoinCounts", "EvaluateScores", "ResolveSlots")


@pytest.mark.parametrize(
    ("encoding", "bulk", "shortest"),
    [
        # The default: blinded keys and ciphertexts, megabytes of random-looking bytes in which
        # a three-letter name turns up by chance; a six-letter one does not. On these names
        # alone, the hidden join: key entries, the join's counts and the named slots' rows.
        (None, {f"/pprl.wire.v1.Peer/{m}" for m in SEALED_HIDDEN}, 6),
        ("reference", {"/pprl.wire.v1.Peer/PushTensor"}, 3),
    ],
)
def test_only_the_encodings_bulk_and_reported_match_ids_cross_the_wire(
    deploy, encoding, bulk, shortest
):
    deployment = deploy(size=200, overlap=0.8, wire_log=True, encoding=encoding)
    summary, _ = _summary(deployment, "run")
    messages = [
        entry
        for name in PARTIES
        for entry in read_wire_log(deployment.workdir / f"{name}.wire.log")
    ]
    methods = {method for _, method, _ in messages}
    assert methods == AGREEMENT_AND_MATCHES | bulk | CONTROL
    values, ids = _values_and_ids(deployment, shortest)
    reported = set()
    for name in PARTIES:
        path = run_dir(deployment.parties[name].state_dir, summary["run_id"]) / PEER_MATCHES_CSV
        with path.open(newline="", encoding="utf-8") as handle:
            # The second column holds the ids the peer sent. The first holds this party's own
            # ids of the peer's pairs, which include pairs this party's classifier rejected
            # and so never sent.
            reported |= {row[1] for row in list(csv.reader(handle))[1:]}
    assert reported and reported < ids
    assert all(TEXT.fullmatch(v.encode()) for v in values | ids)
    seen_reported = set()
    for _, method, payload in messages:
        text = _text_runs(payload, shortest)
        leaked = [v for v in values if v in text]
        assert not leaked, f"record values in a {method} message: {leaked[:5]}"
        carried = {i for i in ids if i in text}
        if method.endswith("PushMatches"):
            assert carried <= reported
            seen_reported |= carried
        else:
            assert not carried, f"record ids in a {method} message: {sorted(carried)[:5]}"
        if method.startswith("/pprl.wire.v1.Control/"):
            assert len(payload) < 4096, "the coordinator never gets bulk data"
    assert seen_reported == reported


def test_restarted_daemon_resumes_without_redoing_finished_phases(deploy):
    deployment = deploy(size=200)
    first, _ = _summary(deployment, "first", "--until", "train")
    assert list(first["parties"]["bob"]["phase_seconds"]) == ["agree", "smash", "train"]
    assert list(first["phases"]) == ["agree", "smash", "train"]
    stop_daemon(deployment, "bob", signal.SIGKILL)
    start_daemon(deployment, "bob")
    coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls)
    try:
        coordinator.wait_ready(60)
    finally:
        coordinator.close()
    second, result = _summary(deployment, "second")
    assert second["run_id"] == first["run_id"]
    assert second["resumed_after"] == "train"
    assert "[2/7]" not in result.stdout and "[4/7] EXCHANGE" in result.stdout
    bob_log = deployment.parties["bob"].log.read_text()
    for phase in ("AGREE", "SMASH", "TRAIN", "MATCH"):
        assert bob_log.count(f"{phase} started") == 1, phase
    quality = evaluate(deployment, second["run_id"], _truth(deployment))
    assert quality["linkage"]["f1"] >= 0.95


def test_a_finished_run_is_not_resumed_but_a_new_one_starts(deploy):
    deployment = deploy(size=100)
    first, _ = _summary(deployment, "first")
    second, _ = _summary(deployment, "second")
    assert second["run_id"] != first["run_id"] and second["resumed_after"] is None


def _scored_pairs(rows_a, rows_b, scores) -> dict[tuple[int, int], float]:
    return {
        (a, b): s for a, b, s in zip(rows_a.tolist(), rows_b.tolist(), scores.tolist(), strict=True)
    }


def test_sealed_blinding_on_a_dask_cluster_links_as_in_the_daemon(deploy):
    """Daemons configured with a scheduler (a real local cluster: a scheduler and two worker
    processes) blind their keys there in chunks; the run links as well as in the daemon
    (test_full_run_links_generated_data's bar on the same data)."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        address = cluster.scheduler_address

        def configure(deployment):
            for party in deployment.parties.values():
                with party.config.open("a", encoding="utf-8") as handle:
                    handle.write(f'[matching]\nscheduler = "{address}"\nchunk_values = 200\n')

        deployment = deploy(size=300, overlap=0.9, configure=configure)
        summary, result = _summary(deployment, "run")
        with distributed.Client(address) as client:
            prefixes = client.run_on_scheduler(
                lambda dask_scheduler: list(dask_scheduler.task_prefixes)
            )
    assert result.stdout.count(f"blinded on the Dask cluster at {address}") == 2
    assert "blinded_chunk" in prefixes
    quality = evaluate(deployment, summary["run_id"], _truth(deployment))
    assert quality["linkage"]["f1"] >= 0.95


def test_matching_on_a_dask_cluster_gives_the_in_process_pairs(deploy):
    """Daemons configured with a scheduler send their blocks there; the pairs they keep are
    those the in-process engine finds from the same tensors and model."""
    import numpy as np

    from pprl.protocol.linkage import candidates, matching
    from pprl.protocol.model.classifier import Model

    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0"
    ) as cluster:

        def configure(deployment):
            for party in deployment.parties.values():
                with party.config.open("a", encoding="utf-8") as handle:
                    handle.write(f'[matching]\nscheduler = "{cluster.scheduler_address}"\n')

        deployment = deploy(size=300, overlap=0.9, configure=configure, encoding="reference")
        summary, result = _summary(deployment, "run")
        assert f"blocks run on {cluster.scheduler_address}" in result.stdout
    for name in PARTIES:
        state = run_dir(deployment.parties[name].state_dir, summary["run_id"])
        own = np.fromfile(state / "own_tensor.u8", dtype=np.uint8).reshape(300, 4, -1)
        peer = np.fromfile(state / "peer_tensor.u8", dtype=np.uint8).reshape(300, 4, -1)
        model = Model.from_bytes((state / "model.npz").read_bytes())
        local = candidates.accepted_pairs(own, peer, matching.Selection(model))
        expected = matching.one_to_one(local.matches)
        # Same pairs; the greedy order of exact score ties may differ with BLAS threading.
        with np.load(state / "own_matches.npz") as kept:
            got = _scored_pairs(kept["own"], kept["peer"], kept["scores"])
        want = _scored_pairs(expected.rows_a, expected.rows_b, expected.scores)
        assert got.keys() == want.keys()
        np.testing.assert_allclose([got[k] for k in want], list(want.values()), atol=1e-3)
        assert len(expected) > 250
