import numpy as np
import pytest

from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.vectors.smashing import smash, smash_values

PAPER_MAPPING = (("first", "first"), ("last", "last"), ("middle", "first"), ("middle", "last"))
PAPER_RS = {"first": ["CHARLIE", "JAY"], "last": ["ADLER", "ADLER"]}


def test_paper_example_1() -> None:
    record = {"first": ["ADA"], "middle": ["IVY"], "last": ["KING"]}
    tensor = smash(record, PAPER_RS, PAPER_MAPPING)
    assert tensor.dtype == np.uint8
    assert tensor.tolist() == [[[6, 3], [5, 5], [7, 2], [5, 5]]]


def test_shape_and_dtype() -> None:
    records = {"first": ["ADA", "BO", ""], "middle": ["IVY", "", "X"], "last": ["KING"] * 3}
    reference = {"first": ["CHARLIE", "JAY", "JAY", "AL"], "last": ["ADLER"] * 4}
    tensor = smash(records, reference, PAPER_MAPPING)
    assert tensor.shape == (3, 4, 4)
    assert tensor.dtype == np.uint8
    # Repeated reference values get the same distances as their first occurrence.
    assert (tensor[:, :, 1] == tensor[:, :, 2]).all()
    # A missing value is MISSING_CODE throughout, never a distance to the empty string.
    assert tensor[2, 0].tolist() == [MISSING_CODE] * 4
    assert tensor[1, 2].tolist() == [MISSING_CODE] * 4 == tensor[1, 3].tolist()
    assert tensor[0, 0].tolist() == [6, 3, 3, 2]


def test_distances_above_cutoff_come_back_as_clamp() -> None:
    long_value = "A" * 400
    distances = smash_values([long_value, "A" * 300], ["B", "A" * 46, "A" * 47, "B" * 254])
    assert distances.dtype == np.uint8
    # 400 - 1 = 399 and 300 - 46 = 254 clamp to 254 (255 is a missing value); 300 - 47 = 253
    # is still exact.
    assert distances.tolist() == [[254, 254, 254, 254], [254, 254, 253, 254]]


def test_smaller_clamp() -> None:
    assert smash_values(["ABCDEFGH", "AB"], ["A"], clamp=5).tolist() == [[5], [1]]


def test_clamp_must_fit_uint8() -> None:
    with pytest.raises(ValueError, match="clamp"):
        smash_values(["A"], ["B"], clamp=256)


def test_empty_records() -> None:
    assert smash_values([], ["A", "B"]).shape == (0, 2)


def test_unknown_attribute_or_column() -> None:
    with pytest.raises(ValueError, match="attribute 'middle'"):
        smash({"first": ["A"]}, PAPER_RS, (("middle", "first"),))
    with pytest.raises(ValueError, match="column 'nick'"):
        smash({"first": ["A"]}, PAPER_RS, (("first", "nick"),))


def test_reference_columns_must_align() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        smash({"first": ["A"]}, {"first": ["A", "B"], "last": ["C"]}, (("first", "first"),))


def test_progress_after_each_mapping_entry() -> None:
    calls: list[tuple[int, int]] = []
    attributes = {"first": ["ADA", "JO"], "last": ["KING", "LEE"]}
    reference = {"first": ["JAY", "CHARLIE"], "last": ["ADLER", "ADLER"]}
    mapping = [("first", "first"), ("last", "last"), ("first", "last")]
    tensor = smash(attributes, reference, mapping, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert tensor.shape == (2, 3, 2)
