"""The Bloom-filter release: keyed filters per attribute, Dice features, linkage and the
peer's dictionary attack with the key."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pprl.protocol.data import synthetic
from pprl.protocol.linkage.bloom_linkage import BloomAgreement, link_in_process, training_features
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.privacy.bloom_audit import audit_filters
from pprl.protocol.vectors.bloom import (
    MIN_KEY_BYTES,
    BloomKey,
    BloomKeyError,
    BloomParams,
    block_features,
    encode,
    pair_features,
    qgrams,
    unpack,
)

KEY = BloomKey(bytes(range(32)))
PARAMS = BloomParams(bits=1024, hashes=10)
ATTRIBUTES = ("first", "middle", "last")


def _dice_of_grams(a: str, b: str, q: int = 2) -> float:
    x, y = set(qgrams(a, q)), set(qgrams(b, q))
    return 2 * len(x & y) / (len(x) + len(y))


def test_qgrams_are_padded_and_distinct() -> None:
    assert len(qgrams("ANNA", 2)) == 5  # \x02A AN NN NA A\x02
    assert len(qgrams("AAAA", 2)) == 3  # \x02A AA A\x02
    assert qgrams("AB", 1) == ["A", "B"]


@pytest.mark.parametrize("length", [0, 8, MIN_KEY_BYTES - 1])
def test_a_short_key_is_refused(length: int) -> None:
    with pytest.raises(BloomKeyError, match=f"at least {MIN_KEY_BYTES} bytes, got {length}"):
        BloomKey(b"k" * length)


def test_the_commitment_tells_keys_apart_and_repr_hides_the_secret() -> None:
    assert KEY.commitment() == BloomKey(bytes(range(32))).commitment()
    assert KEY.commitment() != BloomKey(bytes(range(1, 33))).commitment()
    assert bytes(range(32)).hex() not in repr(KEY) and "\\x00" not in repr(KEY)


@pytest.mark.parametrize(
    "kwargs", [{"bits": 1000}, {"bits": 32}, {"hashes": 0}, {"hashes": 17}, {"q": 0}]
)
def test_bad_parameters_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="bloom"):
        BloomParams(**kwargs)


def test_filters_depend_on_key_attribute_and_value_only() -> None:
    columns = {"first": ["ANNA", "ANNA", ""], "last": ["ANNA", "SMITH", "SMITH"]}
    filters = encode(KEY, PARAMS, columns, ("first", "last"))
    assert filters.shape == (3, 2, PARAMS.bits // 8) and filters.dtype == np.uint8
    assert np.array_equal(filters[0, 0], filters[1, 0])  # same value, same filter
    assert not filters[2, 0].any()  # a missing value is the empty filter
    assert not np.array_equal(filters[0, 0], filters[0, 1])  # same value, another attribute
    again = encode(BloomKey(bytes(range(32))), PARAMS, columns, ("first", "last"))
    assert np.array_equal(filters, again)
    other = encode(BloomKey(bytes(range(1, 33))), PARAMS, columns, ("first", "last"))
    assert not np.array_equal(filters[0, 0], other[0, 0])


def test_a_combined_filter_does_not_see_a_swap() -> None:
    columns = {"first": ["JOHN", "SMITH"], "last": ["SMITH", "JOHN"]}
    filters = encode(KEY, PARAMS, columns, ("first", "last", "first+last"))
    assert not np.array_equal(filters[0, 0], filters[1, 0])
    assert np.array_equal(filters[0, 2], filters[1, 2])


def test_dice_distance_follows_the_qgrams() -> None:
    pairs = [("CATHERINE", "KATHERINE"), ("SMITH", "SMYTH"), ("JOHN", "JOHN"), ("AB", "XYZW")]
    a = unpack(encode(KEY, PARAMS, {"first": [x for x, _ in pairs]}, ("first",)))
    b = unpack(encode(KEY, PARAMS, {"first": [y for _, y in pairs]}, ("first",)))
    features = pair_features(a, b)
    assert features.shape == (4, 3)
    expected = [1 - _dice_of_grams(x, y) for x, y in pairs]
    # 1,024 bits and 30-100 set: a few collisions move Dice by a little.
    np.testing.assert_allclose(features[:, 0], expected, atol=0.1)
    assert features[2, 0] == 0.0
    assert not features[:, 1:].any()


def test_missing_values_read_as_the_reference_release_reads_them() -> None:
    a = unpack(encode(KEY, PARAMS, {"first": ["ANNA", "", ""]}, ("first",)))
    b = unpack(encode(KEY, PARAMS, {"first": ["", "ANNA", ""]}, ("first",)))
    features = pair_features(a, b)
    np.testing.assert_array_equal(features, [[1, 1, 0], [1, 1, 0], [1, 0, 1]])


def test_block_features_are_the_pair_features_of_every_pair() -> None:
    data = synthetic.generate(40, seed=3)
    columns_a = {n: [getattr(p, n) for p in data.alice] for n in ATTRIBUTES}
    columns_b = {n: [getattr(p, n) for p in data.bob] for n in ATTRIBUTES}
    a = unpack(encode(KEY, PARAMS, columns_a, ATTRIBUTES))
    b = unpack(encode(KEY, PARAMS, columns_b, ATTRIBUTES))
    block = block_features(a, b)
    i, j = np.meshgrid(np.arange(40), np.arange(40), indexing="ij")
    from pprl.protocol.linkage.bloom_linkage import rows

    aligned = pair_features(rows(a, i.ravel()), rows(b, j.ravel()))
    np.testing.assert_allclose(block.reshape(-1, 9), aligned, atol=1e-6)


def test_training_pairs_drop_negatives_that_look_like_the_positive() -> None:
    own = unpack(encode(KEY, PARAMS, {"first": ["ANNA", "ANNA", "BOB", "EVE"]}, ("first",)))
    x, y = training_features(own, own, np.random.default_rng(0), 3, 1)
    assert y[:4].tolist() == [1, 1, 1, 1] and not x[:4, 0].any()
    negatives = x[y == 0]
    # Each ANNA's hard negative is the other ANNA, identical: both are dropped, as is any
    # random draw of them.
    assert len(negatives) <= 4 * 3 - 2
    assert (negatives[:, 0] > 0.5).all()


def _columns(people: list[synthetic.Person]) -> dict[str, list[str]]:
    return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}


def test_two_parties_link_generated_records() -> None:
    data = synthetic.generate(400, seed=21, overlap=0.8)
    agreement = BloomAgreement(
        KEY,
        PARAMS,
        (*ATTRIBUTES, "first+middle+last"),
        {},
        method_params(training_records=400),
    )
    rngs = (np.random.default_rng(1), np.random.default_rng(2))
    linkage = link_in_process(agreement, _columns(data.alice), _columns(data.bob), rngs)
    ids = {(data.alice[i].id, data.bob[j].id) for i, j in linkage.agreed}
    quality = linkage_quality(ids, set(data.truth))
    assert quality.precision >= 0.97 and quality.recall >= 0.95, quality
    assert linkage.agreed <= linkage.alice and linkage.agreed <= linkage.bob


def test_the_peer_with_the_key_reads_every_listed_name_and_without_it_none() -> None:
    data = synthetic.generate(300, seed=4)
    columns = _columns(data.alice)
    census = synthetic.census_names()
    # The records' own names and the 3,000 commonest of each census list, not all 91,907: the
    # attack reads what is listed whatever the list's length, at a thirtieth of the cost.
    held = {value for values in columns.values() for value in values if value}
    names = sorted(held | {*census.first.names[:3000], *census.last.names[:3000]})
    filters = encode(KEY, PARAMS, columns, ATTRIBUTES)
    agreement = BloomAgreement(KEY, PARAMS, ATTRIBUTES, {}, method_params())
    report = audit_filters(agreement, filters, columns, names)
    assert [a.attribute for a in report.attributes] == list(ATTRIBUTES)
    for audit in report.attributes:
        assert audit.in_dictionary == 1.0  # generated names are census names
        assert audit.result.exact_rate == 1.0
    assert report.record_reidentified == 1.0
    stranger = BloomKey(b"another key, not the parties'!!!")
    blind = audit_filters(dataclasses.replace(agreement, key=stranger), filters, columns, names)
    assert blind.record_exact == 0.0 and blind.record_reidentified < 0.05


def test_the_key_holder_attacks_a_surnames_first_part_without_needing_it_to_re_identify() -> None:
    """A first-part entry is attacked for the part it holds and counts towards exposure; a
    record's names are first and last, so re-identifying it does not need the part."""
    data = synthetic.generate(200, seed=4)
    columns = {name: [getattr(p, name) for p in data.alice] for name in ("first", "last")}
    columns["last"][0] = "GARCIA LOPEZ"  # the part GARCIA is listed, the whole is not
    census = synthetic.census_names()
    held = {value for values in columns.values() for value in values if value} - {"GARCIA LOPEZ"}
    names = sorted(held | {*census.first.names[:2000], *census.last.names[:2000], "GARCIA"})
    plain, parted = ("first", "last"), ("first", "last", "last:first-part")
    reports = {}
    for attributes in (plain, parted):
        filters = encode(KEY, PARAMS, columns, attributes)
        agreement = BloomAgreement(KEY, PARAMS, attributes, {}, method_params())
        reports[attributes] = audit_filters(agreement, filters, columns, names)
    part = reports[parted].attributes[2]
    assert [a.attribute for a in reports[parted].attributes] == list(parted)
    assert part.result.exact_rate == 1.0  # every first part read, GARCIA among them
    assert reports[parted].record_reidentified == reports[plain].record_reidentified < 1.0
    assert reports[parted].record_exposed == 1.0
