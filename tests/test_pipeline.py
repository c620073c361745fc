"""The pipeline is the method once: in one process it links as two real daemons do."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.party.config import load_config
from pprl.party.local import PARTIES, Deployment, Privacy
from pprl.party.storage.artifacts import LINKAGE_CSV, PEER_MATCHES_CSV
from pprl.party.storage.state import run_dir
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.data.synthetic import default_reference, generate
from pprl.protocol.method import method_params
from pprl.protocol.vectors.randomness import Randomness
from tests.conftest import coordinate

SEED = 21
DATA = generate(200, seed=4)


def _columns(people: list) -> dict[str, list[str]]:
    return {name: [getattr(p, name) for p in people] for name in ("first", "middle", "last")}


def _in_process(sigma: float, seeds: tuple[int, int]) -> pipeline.Linkage:
    data = DATA
    agreement = Agreement(
        ReferenceSet("built-in", default_reference(120)),
        DEFAULT_MAPPING,
        method_params(noise_sigma=sigma, training_records=200),
    )
    return pipeline.link_in_process(
        agreement,
        _columns(data.alice),
        _columns(data.bob),
        (Randomness(seeds[0], "alice"), Randomness(seeds[1], "bob")),
    )


def test_a_seed_replays_every_draw_and_another_seed_does_not() -> None:
    first, again, other = (
        _in_process(1.0, (3, 4)),
        _in_process(1.0, (3, 4)),
        _in_process(1.0, (5, 6)),
    )
    assert first.agreed == again.agreed and first.alice.pairs == again.alice.pairs
    assert (first.alice.released.tensor == again.alice.released.tensor).all()
    assert (first.alice.released.order != other.alice.released.order).any()
    assert (first.alice.released.tensor != other.alice.released.tensor).any()
    row_a = {p.id: i for i, p in enumerate(DATA.alice)}
    row_b = {p.id: i for i, p in enumerate(DATA.bob)}
    truth = {(row_a[a], row_b[b]) for a, b in DATA.truth}
    for linkage in (first, other):
        assert len(linkage.agreed & truth) >= 0.8 * len(truth)  # noise costs, but it links


def test_parties_share_no_stream_and_unseeded_draws_are_secret() -> None:
    alice, bob = Randomness(7, "alice"), Randomness(7, "bob")
    assert alice.generator("shuffle").random() != bob.generator("shuffle").random()
    assert alice.generator("shuffle").random() != alice.generator("release").random()
    secret = Randomness(None, "alice")
    assert not secret.replayable
    assert secret.generator("shuffle").random() != secret.generator("shuffle").random()
    with pytest.raises(ValueError, match=">= 0"):
        Randomness(-1)


def _seeded(deployment: Deployment) -> None:
    for party in deployment.parties.values():
        with party.config.open("a", encoding="utf-8") as handle:
            handle.write(f"[development]\nseed = {SEED}\n")


def _ids(path: Path) -> set[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row[0], row[1]) for row in list(csv.reader(handle))[1:]}


@pytest.mark.integration
@pytest.mark.parametrize("sigma", [0.0, 1.0], ids=["raw", "noisy"])
def test_two_daemons_link_exactly_what_the_pipeline_links_in_one_process(
    deploy, trial_privacy: Privacy, sigma
) -> None:
    # The gate is not under test: its draws come from a stream of their own, so its trial
    # dictionary and sample leave the released, trained and matched pairs as they are.
    privacy = replace(trial_privacy, noise_sigma=sigma) if sigma else None
    deployment = deploy(
        encoding="reference", size=300, overlap=0.9, configure=_seeded, privacy=privacy
    )
    summary_path = deployment.workdir / "run.json"
    result = coordinate(deployment, "--json", str(summary_path))
    assert result.returncode == 0, result.stderr
    assert f"development seed {SEED}" in result.stdout
    run_id = json.loads(summary_path.read_text())["run_id"]

    config = load_config(deployment.parties["alice"].config)
    records = {name: load_records(deployment.workdir / "data" / f"{name}.csv") for name in PARTIES}
    agreement = Agreement.resolve(
        load_reference(config.reference_path), config.mapping, config.method
    )
    linkage = pipeline.link_in_process(
        agreement,
        records["alice"].attributes,
        records["bob"].attributes,
        (Randomness(SEED, "alice"), Randomness(SEED, "bob")),
    )
    ids_a, ids_b = records["alice"].ids, records["bob"].ids
    expected = {(ids_a[a], ids_b[b]) for a, b in linkage.agreed}
    state = {name: run_dir(deployment.parties[name].state_dir, run_id) for name in PARTIES}
    assert _ids(state["alice"] / LINKAGE_CSV) == expected
    assert len(expected) >= 0.8 * 270  # 90% of 300 are true pairs: a real linkage, not empty
    # Each party's own accepted pairs, as its peer received them (ids of both sides).
    alice_own = {(ids_b[b], ids_a[a]) for a, b in linkage.alice.pairs}
    bob_own = {(ids_a[a], ids_b[b]) for b, a in linkage.bob.pairs}
    assert _ids(state["bob"] / PEER_MATCHES_CSV) == alice_own
    assert _ids(state["alice"] / PEER_MATCHES_CSV) == bob_own


def test_method_params_fill_the_defaults_the_noise_implies_and_refuse_unknown_choices() -> None:
    clean, noisy = method_params(), method_params(noise_sigma=2.0)
    assert (clean.feature, clean.hard_negatives) == ("cosine", 2)
    assert (noisy.feature, noisy.hard_negatives) == ("projected-cosine", 0)
    chosen = method_params(noise_sigma=2.0, feature="centred-cosine", hard_negatives=1)
    assert (chosen.feature, chosen.hard_negatives) == ("centred-cosine", 1)
    assert method_params(negatives_per_positive=1).hard_negatives == 1  # never more than exist
    assert method_params(classifier="rbf").c == 0.01
    for bad, words in [
        ({"feature": "euclid"}, "unknown feature 'euclid'"),
        ({"classifier": "poly"}, "unknown classifier 'poly'"),
        ({"class_weight": "heavy"}, "unknown class_weight 'heavy'"),
    ]:
        with pytest.raises(ValueError, match=words):
            method_params(**bad)


def test_agreement_computes_the_svd_only_for_projected_features() -> None:
    reference = ReferenceSet("built-in", default_reference(80))
    plain = Agreement(reference, DEFAULT_MAPPING, method_params())
    noisy = method_params(noise_sigma=1.0, release="distances")
    projected = Agreement(reference, DEFAULT_MAPPING, noisy)
    assert plain.standardise is None
    assert projected.sigma0 == plain.sigma0 and not projected.statistics.components
    assert projected.standardise is not None and projected.standardise.basis is not None
    assert projected.standardise.basis.shape == (4, 80, 30)  # max(30, sqrt(2R)) components
    # Sending the projected coordinates: the basis goes into the release, the features only
    # read the codes back.
    short = Agreement(reference, DEFAULT_MAPPING, method_params(noise_sigma=1.0))
    assert not short.statistics.components
    assert short.standardise is not None and short.standardise.basis is None
    assert [grid.width for grid in short.releases] == [30] * 4
