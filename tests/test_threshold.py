"""A party's own threshold: MATCH keeps the pairs scoring above it before its one-to-one step,
exactly as scoring every pair would; the configuration refuses what it cannot honour; the
demo's linkage.csv shows it."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

from pprl.party.local import evaluate, read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.linkage import matching
from pprl.protocol.method import method_params
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.vectors.randomness import Randomness
from tests.conftest import coordinate, coordinate_summary
from tests.oracles import pair_list

ATTRIBUTES = ("first", "middle", "last")


@pytest.fixture(scope="module")
def linked():
    data = synthetic.generate(300, 3, errors="registers", overlap=0.8)
    reference = ReferenceSet("built-in", synthetic.default_reference(200))
    agreement = Agreement(reference, DEFAULT_MAPPING, method_params(error_model="registers"))
    alice = {a: [getattr(p, a) for p in data.alice] for a in ATTRIBUTES}
    bob = {a: [getattr(p, a) for p in data.bob] for a in ATTRIBUTES}
    linkage = pipeline.link_in_process(
        agreement, alice, bob, (Randomness(1, "alice"), Randomness(2, "bob"))
    )
    return agreement, linkage


@pytest.mark.parametrize("threshold", [0.0, 1.0, 3.0])
def test_the_cut_before_one_to_one_equals_scoring_every_pair(linked, threshold: float) -> None:
    agreement, linkage = linked
    own, peer = linkage.alice.released.tensor, linkage.bob.released.tensor
    model = linkage.alice.model
    got = pipeline.match(agreement, own, peer, model, threshold=threshold).matches
    selection = matching.Selection(model, agreement.method.top_k)
    every = matching.score_pairs(
        unit_vectors(own, agreement.standardise), unit_vectors(peer, agreement.standardise),
        [selection],
    )[0]  # fmt: skip
    oracle = matching.one_to_one(matching.above(every, threshold), agreement.method.assignment)
    assert pair_list(got) == pair_list(oracle)
    assert np.all(got.scores > threshold)
    if threshold:
        assert len(got) < len(pipeline.match(agreement, own, peer, model).matches)


def test_a_cut_below_zero_is_refused() -> None:
    empty = matching.Matches(np.zeros(0, int), np.zeros(0, int), np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="below 0"):
        matching.above(empty, -1.0)


def _cut(deployment) -> None:
    for setup in deployment.parties.values():
        text = setup.config.read_text()
        setup.config.write_text(text + "[matching]\nthreshold = 1.1\nreview_band = 0.1\n")


@pytest.mark.integration
def test_daemons_keep_pairs_above_the_threshold_and_mark_the_band(deploy) -> None:
    deployment = deploy(encoding="reference", size=200, configure=_cut)
    result = coordinate(deployment)
    assert result.returncode == 0, result.stderr
    # This data's accepted pairs score 0.7 to 1.34 at the classifier's own boundary (0).
    assert "scoring above this party's threshold 1.1" in result.stdout
    (linkage,) = (deployment.workdir / "state" / "alice").rglob("linkage.csv")
    with linkage.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(float(row["alice_score"]) > 1.1 for row in rows)
    for row in rows:
        close = float(row["alice_score"]) <= 1.2
        sharing = (row["alice_records_sharing_values"], row["bob_records_sharing_values"])
        assert bool(row["review"]) == (close or sharing != ("1", "1"))
    assert any(row["review"] == "near the cut" for row in rows)


def _rows(deployment, name: str) -> dict[tuple[str, str], dict[str, str]]:
    (linkage,) = (deployment.workdir / "state" / name).rglob("linkage.csv")
    with linkage.open(newline="") as handle:
        return {(row["alice_id"], row["bob_id"]): row for row in csv.DictReader(handle)}


@pytest.mark.integration
def test_a_finished_run_is_cut_again_without_smashing_training_or_sending_tensors(deploy):
    """`pprl coordinate --run-id RUN --threshold T`: MATCH, REVEAL and LINK again on the kept
    tensors. Raising both parties' cut keeps exactly the earlier agreed pairs that both
    scored above it (greedy one-to-one: a higher cut drops the lowest pairs, nothing else);
    a cut below a party's own threshold is refused and leaves the result as it was."""
    deployment = deploy(encoding="reference", size=200)
    first, summary = coordinate_summary(deployment)
    assert first.returncode == 0, first.stderr
    run_id = summary["run_id"]
    before = {"alice": _rows(deployment, "alice"), "bob": _rows(deployment, "bob")}
    sent = summary["bytes_sent"]

    refused = coordinate(deployment, "--run-id", run_id, "--threshold", "-1")
    assert refused.returncode != 0
    assert "alice refused the threshold -1" in refused.stderr
    assert "never lower it" in refused.stderr
    assert _rows(deployment, "alice") == before["alice"]

    again, recut = coordinate_summary(deployment, "--run-id", run_id, "--threshold", "1.1")
    assert again.returncode == 0, again.stderr
    assert "its result was dropped" in again.stdout
    for phase in ("AGREE", "SMASH", "TRAIN", "EXCHANGE"):
        assert f"] {phase}" not in again.stdout
    assert "[5/7] MATCH" in again.stdout and "[7/7] LINK" in again.stdout
    assert recut["resumed_after"] == "exchange" and recut["completed"] == "link"
    assert {p["threshold"] for p in recut["parties"].values()} == {1.1}
    # REVEAL's ids again, no tensor: each party sent far less than the first time
    for name, total in recut["bytes_sent"].items():
        assert total - sent[name] < sent[name] / 4
    kept = {
        pair
        for pair, row in before["alice"].items()
        if float(row["alice_score"]) > 1.1 and float(before["bob"][pair]["bob_score"]) > 1.1
    }
    assert 0 < len(kept) < len(before["alice"])
    assert set(_rows(deployment, "alice")) == kept == set(_rows(deployment, "bob"))
    # the report beside the result shows the new cut; `pprl report` adds the truth
    (report,) = (deployment.workdir / "state" / "alice").rglob("report.md")
    assert f"{len(kept):,} pairs agreed by both" in report.read_text()
    assert "scoring above 1.1" in report.read_text()
    state = deployment.parties["alice"].state_dir
    truth = deployment.workdir / "data" / "truth.csv"
    written = subprocess.run(
        [sys.executable, "-m", "pprl", "report", "--state-dir", str(state), "--truth", str(truth)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    quality = evaluate(deployment, run_id, read_truth(truth))["linkage"]
    now = f"| 1.10 (now) | {quality['precision']:.3f} | {quality['recall']:.3f} |"
    assert now in report.read_text()


def _sealed_with_band(deployment) -> None:
    for setup in deployment.parties.values():
        text = setup.config.read_text().replace("min_expected_f1 = 0.0", "min_expected_f1 = 0.01")
        setup.config.write_text(text + "[matching]\nreview_band = 0.97\n")


def _csv(path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.integration
def test_a_sealed_run_is_cut_again_on_its_match_probabilities_without_comparing_again(deploy):
    """Sealed linkage (the default) writes each agreed pair's match probability, keeps MATCH's
    pairs with their buckets, and `--threshold P` on the finished run runs REVEAL and LINK
    again: no new encrypted comparison, the pairs kept are the earlier ones at or above P.
    With both parties' review band, review.csv lists the pairs near the cut and those only
    one party accepted."""
    deployment = deploy(size=300, configure=_sealed_with_band)
    first, summary = coordinate_summary(deployment)
    assert first.returncode == 0, first.stderr
    run_id = summary["run_id"]
    (linkage,) = (deployment.workdir / "state" / "alice").rglob("linkage.csv")
    before = _csv(linkage)
    # Why each pair matched, from the keys of the slots Alice named (the hidden join).
    attributes = {"first", "middle", "last"}
    for row in before:
        near = {part.split(":")[0] for part in row["near_fields"].split("; ")}
        assert near and near <= attributes and not near & set(row["other_fields"].split())
    probabilities = sorted({float(row["alice_probability"]) for row in before})
    assert len(probabilities) >= 2 and all(0 < p < 1 for p in probabilities)
    review = _csv(linkage.parent / "review.csv")
    near = {(r["alice_id"], r["bob_id"]) for r in before if r["review"] == "near the cut"}
    assert near and near <= {(r["alice_id"], r["bob_id"]) for r in review}
    # The band is in probability above the cut (0 here): below 0.97 is near it.
    assert all(
        float(r["alice_probability"]) <= 0.97 for r in before if r["review"] == "near the cut"
    )
    # ... and every pair only one party accepted, as each party's own file lists them.
    agreed = {(r["alice_id"], r["bob_id"]) for r in before}
    for name, why in (
        ("own_matches.csv", "only this party"),
        ("peer_matches.csv", "only the peer"),
    ):
        one_side = {(r["alice_id"], r["bob_id"]) for r in _csv(linkage.parent / name)} - agreed
        listed = {(r["alice_id"], r["bob_id"]) for r in review if r["review"] == f"{why} accepted"}
        assert listed == one_side

    refused = coordinate(deployment, "--run-id", run_id, "--threshold", "1")
    assert refused.returncode != 0 and "a match probability, below 1" in refused.stderr

    cut = probabilities[len(probabilities) // 2]
    again, recut = coordinate_summary(deployment, "--run-id", run_id, "--threshold", str(cut))
    assert again.returncode == 0, again.stderr
    assert "[5/7] MATCH" not in again.stdout and "[6/7] REVEAL" in again.stdout
    assert recut["resumed_after"] == "match"
    for name, total in recut["bytes_sent"].items():
        assert total - summary["bytes_sent"][name] < summary["bytes_sent"][name] / 50
    after = _csv(linkage)
    unique = [r for r in before if r["alice_records_sharing_values"] == "1"]
    kept = {(r["alice_id"], r["bob_id"]) for r in after}
    assert kept < {(r["alice_id"], r["bob_id"]) for r in before}
    assert all(float(r["alice_probability"]) >= cut for r in after if r in unique)
    assert (
        not {(r["alice_id"], r["bob_id"]) for r in unique if float(r["alice_probability"]) < cut}
        & kept
    )
    report = (linkage.parent / "report.md").read_text()
    assert f"| {cut:.2f} (now) |" in report or f"{len(after):,} pairs agreed by both" in report
