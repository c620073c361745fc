"""Candidates for the Bloom release are exact: matching on them keeps exactly the pairs that
scoring every pair keeps, with missing values, saturated distances and either classifier."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.data import synthetic
from pprl.protocol.linkage.bloom_candidates import Packed, candidate_keys, score_keys
from pprl.protocol.linkage.bloom_linkage import BloomAgreement, match, match_filters, train
from pprl.protocol.method import method_params
from pprl.protocol.vectors.bloom import BloomKey, BloomParams, unpack

ATTRIBUTES = ("first", "middle", "last")


def _columns(people: list[synthetic.Person]) -> dict[str, list[str]]:
    return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}


@pytest.fixture(scope="module")
def data() -> synthetic.SyntheticData:
    return synthetic.generate(500, seed=8, overlap=0.8, missing_rate=0.2, namesakes=0.3)


@pytest.mark.parametrize(
    "choices",
    [
        {},  # linear SVM on one error per record
        {"error_model": "registers"},  # logistic regression on saturated distances
        {"hard_negatives": 0, "negatives_per_positive": 1},
    ],
)
def test_candidates_keep_exactly_what_all_pairs_keep(data, choices) -> None:
    method = method_params(training_records=500, **choices)
    agreement = BloomAgreement(
        BloomKey(b"candidate test key 32 bytes long"),
        BloomParams(),
        (*ATTRIBUTES, "first+last"),
        {},
        method,
    )
    own, peer = agreement.encode(_columns(data.alice)), agreement.encode(_columns(data.bob))
    model, _ = train(agreement, _columns(data.alice), np.random.default_rng(3))
    assert model.kind == "linear"
    matched = match_filters(own, peer, model, method)
    every = match(unpack(own), unpack(peer), model, method)
    assert matched.scored is not None and matched.scored < 500 * 500 / 4, matched.scored
    ours = set(zip(matched.matches.rows_a.tolist(), matched.matches.rows_b.tolist(), strict=True))
    theirs = set(zip(every.rows_a.tolist(), every.rows_b.tolist(), strict=True))
    assert ours == theirs
    assert len(ours) > 300


def test_candidate_features_are_the_block_features(data) -> None:
    agreement = BloomAgreement(
        BloomKey(b"candidate test key 32 bytes long"),
        BloomParams(),
        ATTRIBUTES,
        {},
        method_params(),
    )
    own, peer = (
        agreement.encode(_columns(data.alice[:40])),
        agreement.encode(_columns(data.bob[:30])),
    )
    from pprl.protocol.vectors.bloom import block_features

    keys = np.arange(40 * 30)
    rows_a, rows_b, features = score_keys(Packed.of(own), Packed.of(peer), keys)
    block = block_features(unpack(own), unpack(peer))
    np.testing.assert_array_equal(features, block[rows_a, rows_b])


def test_a_model_without_a_linear_bound_scores_every_pair(data) -> None:
    method = method_params(classifier="rbf", training_records=200)
    agreement = BloomAgreement(
        BloomKey(b"candidate test key 32 bytes long"), BloomParams(), ATTRIBUTES, {}, method
    )
    columns = _columns(data.alice[:200])
    own = agreement.encode(columns)
    model, _ = train(agreement, columns, np.random.default_rng(3))
    assert candidate_keys(Packed.of(own), Packed.of(own), model) is None
    assert match_filters(own, own, model, method).scored is None
