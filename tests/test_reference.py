"""Reference set loading, mapping checks and the agreement digest both parties compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pprl.files.reference import load_reference
from pprl.protocol.data.reference import (
    DEFAULT_MAPPING,
    ReferenceSet,
    reference_overlap,
    typed_reference,
    validate_mapping,
)
from pprl.protocol.errors import InputError
from pprl.protocol.method import agreement_description, agreement_digest, explain_mismatch
from pprl.protocol.method_settings import MethodParams

REFERENCE = "first,last\nAda,Lovelace\n grace , hopper\nAlan,Turing\nAda,Lovelace\n"
ATTRIBUTES = ("first", "middle", "last")
# Pins the canonical encoding and the default method: if this changes, peers running older code
# will no longer agree (as they must not, when they would train or select differently).
GOLDEN_DIGEST = "3e71f702379c80701206e741d3d3e85b2d954ee3735b646d468e98d34b50e330"


def write(tmp_path: Path, text: str | bytes, name: str = "reference.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def refusal(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_reference(path)
    assert path.name in str(caught.value)
    return caught.value


def reference(tmp_path: Path, text: str = REFERENCE, name: str = "reference.csv") -> ReferenceSet:
    return load_reference(write(tmp_path, text, name))


def digest(ref: ReferenceSet, mapping=DEFAULT_MAPPING, params: MethodParams | None = None) -> str:
    return agreement_digest(ref, mapping, params or MethodParams())


def test_load_normalises_and_keeps_duplicates(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    assert ref.columns == {
        "first": ["ADA", "GRACE", "ALAN", "ADA"],
        "last": ["LOVELACE", "HOPPER", "TURING", "LOVELACE"],
    }
    assert len(ref) == 4


def test_load_accepts_bom_and_empty_values(tmp_path: Path) -> None:
    ref = load_reference(write(tmp_path, b"\xef\xbb\xbffirst,last\nada,\n,hopper\n"))
    assert ref.columns == {"first": ["ADA", ""], "last": ["", "HOPPER"]}


def test_missing_file(tmp_path: Path) -> None:
    assert "no such file" in str(refusal(tmp_path / "absent.csv"))


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, b"first,last\nada,x\nb\xc3,y\n"))
    assert error.row == 3
    assert "row 3" in str(error)


def test_empty_file(tmp_path: Path) -> None:
    assert "no header" in str(refusal(write(tmp_path, "")))


def test_header_only(tmp_path: Path) -> None:
    assert "no data rows" in str(refusal(write(tmp_path, "first,last\n")))


def test_ragged_row(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "first,last\na,b\nc,d,e\n"))
    assert error.row == 3
    assert "row 3" in str(error)


def test_all_empty_column(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "first,last\na,\nb, \n"))
    assert error.field == "last"
    assert "field 'last'" in str(error)


def test_empty_header_name(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "first,,last\na,b,c\n"))
    assert error.row == 1
    assert "column 2" in str(error)


def test_repeated_header_name(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "first,last,first\na,b,c\n"))
    assert (error.row, error.field) == (1, "first")


def test_validate_mapping_accepts_default(tmp_path: Path) -> None:
    validate_mapping(DEFAULT_MAPPING, ATTRIBUTES, reference(tmp_path))


def test_validate_mapping_unknown_attribute(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        validate_mapping([("nick", "first")], ATTRIBUTES, reference(tmp_path))
    assert caught.value.field == "nick"
    assert "first, middle, last" in str(caught.value)


def test_validate_mapping_unknown_column(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    with pytest.raises(InputError) as caught:
        validate_mapping([("middle", "middle")], ATTRIBUTES, ref)
    assert caught.value.field == "middle"
    assert "reference.csv" in str(caught.value)
    assert "columns: first, last" in str(caught.value)


def test_validate_mapping_empty_and_repeated(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    with pytest.raises(InputError, match="empty"):
        validate_mapping([], ATTRIBUTES, ref)
    with pytest.raises(InputError, match="more than once"):
        validate_mapping([("first", "first"), ("first", "first")], ATTRIBUTES, ref)


def test_description_holds_no_reference_values(tmp_path: Path) -> None:
    description = agreement_description(reference(tmp_path), DEFAULT_MAPPING, MethodParams())
    assert description["reference"]["columns"] == ["first", "last"]
    assert description["reference"]["rows"] == 4
    assert description["mapping"] == [list(entry) for entry in DEFAULT_MAPPING]
    assert description["params"]["classifier"] == "linear"
    assert description["version"] == 2
    assert description["kinds"] == {"first": "name", "last": "name", "middle": "name"}
    encoded = json.dumps(description)
    assert "LOVELACE" not in encoded
    assert "HOPPER" not in encoded


def test_digest_is_pinned(tmp_path: Path) -> None:
    assert digest(reference(tmp_path)) == GOLDEN_DIGEST


def test_digest_is_stable_across_processes(tmp_path: Path) -> None:
    path = write(tmp_path, REFERENCE)
    code = (
        "import sys\n"
        "from pprl.protocol.method import agreement_digest\n"
        "from pprl.protocol.method_settings import MethodParams\n"
        "from pprl.files.reference import load_reference\n"
        "from pprl.protocol.data.reference import DEFAULT_MAPPING\n"
        "ref = load_reference(sys.argv[1])\n"
        "print(agreement_digest(ref, DEFAULT_MAPPING, MethodParams()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True, env=env
    )
    assert result.stdout.strip() == digest(load_reference(path))


def test_digest_ignores_path_and_column_order(tmp_path: Path) -> None:
    other = reference(
        tmp_path, "last,first\nLovelace,Ada\nhopper,grace\nTuring,Alan\nLovelace,Ada\n"
    )
    assert digest(other) == digest(reference(tmp_path))


@pytest.mark.parametrize(
    "changed",
    [
        "first,last\nAda,Lovelace\nGrace,Hoper\nAlan,Turing\nAda,Lovelace\n",
        "first,last\nGrace,Hopper\nAda,Lovelace\nAlan,Turing\nAda,Lovelace\n",
        "first,last\nAda,Lovelace\nGrace,Hopper\nAlan,Turing\n",
    ],
    ids=["value", "row order", "row count"],
)
def test_digest_changes_with_reference(tmp_path: Path, changed: str) -> None:
    assert digest(reference(tmp_path, changed, "changed.csv")) != digest(reference(tmp_path))


def test_digest_changes_with_mapping_and_params(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    base = digest(ref)
    assert digest(ref, DEFAULT_MAPPING[:3]) != base
    assert digest(ref, DEFAULT_MAPPING[::-1]) != base
    assert digest(ref, params=MethodParams(classifier="rbf", c=0.01)) != base
    assert digest(ref, params=MethodParams(clamp=200)) != base
    assert digest(ref, params=MethodParams(c=100)) == base


def test_overlap_counts_distinct_non_empty_values(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    attributes = {
        "first": ["ADA", "ADA", "BOB", ""],
        "middle": ["", "TURING", "ALAN", "HOPPER"],
        "last": ["SMITH", "JONES", "LOVELACE", ""],
    }
    assert reference_overlap(attributes, ref, DEFAULT_MAPPING) == {
        "first->first": 1,
        "last->last": 1,
        "middle->first": 1,
        "middle->last": 2,
    }


def test_overlap_zero_when_disjoint(tmp_path: Path) -> None:
    attributes = {"first": ["BOB"], "middle": [""], "last": ["SMITH"]}
    overlap = reference_overlap(attributes, reference(tmp_path), DEFAULT_MAPPING)
    assert sum(overlap.values()) == 0


def test_overlap_with_empty_values_in_reference(tmp_path: Path) -> None:
    ref = reference(tmp_path, "first,last\nada,\n,hopper\n", "gaps.csv")
    attributes = {"first": ["ADA", ""], "middle": ["", ""], "last": ["", "X"]}
    overlap = reference_overlap(attributes, ref, DEFAULT_MAPPING)
    assert overlap == {"first->first": 1, "last->last": 0, "middle->first": 0, "middle->last": 0}


def test_explain_mismatch_names_each_difference(tmp_path: Path) -> None:
    big = reference(tmp_path)
    small = reference(tmp_path, "first,last\nAda,Lovelace\n", "small.csv")
    ours = agreement_description(big, DEFAULT_MAPPING, MethodParams())
    theirs = agreement_description(small, DEFAULT_MAPPING[:2], MethodParams(classifier="rbf"))
    text = explain_mismatch(ours, theirs)
    assert "\n" not in text
    assert "reference rows differ: ours 4, peer 1" in text
    assert "reference values differ" in text
    assert "mapping differs: ours first->first, last->last, middle->first, middle->last" in text
    assert "params.classifier differs: ours 'linear', peer 'rbf'" in text
    assert "columns" not in text


def test_explain_mismatch_values_only_and_missing_keys(tmp_path: Path) -> None:
    ours = agreement_description(reference(tmp_path), DEFAULT_MAPPING, MethodParams())
    changed = "first,last\nAda,Lovelace\nGrace,Hoper\nAlan,Turing\nAda,Lovelace\n"
    theirs = agreement_description(
        reference(tmp_path, changed, "b.csv"), DEFAULT_MAPPING, MethodParams()
    )
    assert explain_mismatch(ours, theirs).startswith("reference values differ: ours sha256 ")
    del theirs["version"]
    assert "version differs: ours 2, peer (missing)" in explain_mismatch(ours, theirs)
    assert explain_mismatch(ours, ours) == "the agreement descriptions are identical"


def test_digest_changes_with_an_attribute_kind(tmp_path: Path) -> None:
    ref = reference(tmp_path)
    mapping = [("first", "first"), ("last", "last")]
    names = agreement_digest(ref, mapping, MethodParams())
    assert agreement_digest(ref, mapping, MethodParams(), {"first": "name"}) == names
    assert agreement_digest(ref, mapping, MethodParams(), {"last": "text"}) != names


def test_a_date_column_is_read_as_iso_dates_and_bad_ones_are_named(tmp_path: Path) -> None:
    path = tmp_path / "dates.csv"
    path.write_text("first,dob\nAda,1815-12-10\nAlan,1912-06-23\n", encoding="utf-8")
    typed = typed_reference(load_reference(path), [("born", "dob")], {"born": "date"})
    assert typed.columns["dob"] == ["18151210", "19120623"]
    path.write_text("first,dob\nAda,1815-12-10\nAlan,23/06/1912\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        typed_reference(load_reference(path), [("born", "dob")], {"born": "date"})
    assert (caught.value.row, caught.value.field) == (3, "dob")
    assert "YYYY" in str(caught.value) or "%Y-%m-%d" in str(caught.value)


def test_a_column_mapped_from_two_kinds_is_refused(tmp_path: Path) -> None:
    mapping = [("first", "first"), ("code", "first")]
    with pytest.raises(InputError, match="kinds 'name' and 'number'"):
        typed_reference(reference(tmp_path), mapping, {"code": "number"})


def test_a_name_column_mapped_from_a_number_is_refused_at_its_row(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        typed_reference(reference(tmp_path), [("zip", "first")], {"zip": "number"})
    assert caught.value.row == 2 and caught.value.field == "first"
    assert "not a number" in str(caught.value)


def test_digest_covers_a_quantity_scale_and_only_when_a_quantity_is_mapped(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "first,height\nAda,165\nAlan,178.5\nGrace,160.25\n", "q.csv")
    ref = load_reference(path)
    mapping = [("first", "first"), ("height", "height")]
    kinds = {"height": "quantity"}

    def with_scale(scale: float) -> str:
        return agreement_digest(ref, mapping, MethodParams(), kinds, {"height": scale})

    assert with_scale(0.5) == with_scale(0.5) != with_scale(1.0)
    assert with_scale(1) == with_scale(1.0)  # as the TOML file may write it either way
    described = agreement_description(ref, mapping, MethodParams(), kinds, {"height": 0.5})
    assert described["scales"] == {"height": 0.5}
    other = agreement_description(ref, mapping, MethodParams(), kinds, {"height": 2.0})
    assert "scales.height differs: ours 0.5, peer 2.0" in explain_mismatch(described, other)
    # Without a quantity there is no scales entry at all: older descriptions are unchanged.
    names = [("first", "first"), ("last", "last")]
    plain = reference(tmp_path)
    assert "scales" not in agreement_description(plain, names, MethodParams(), {}, {})
    assert agreement_digest(plain, DEFAULT_MAPPING, MethodParams(), {}, {}) == GOLDEN_DIGEST
    texts = {"first": "text"}
    assert agreement_digest(plain, names, MethodParams(), texts, {}) == agreement_digest(
        plain, names, MethodParams(), texts
    )


def test_a_quantity_column_is_read_as_quantities_and_bad_cells_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, "first,height\nAda,165.0\nAlan,+178.50\n", "q.csv")
    mapping, kinds, scales = [("h", "height")], {"h": "quantity"}, {"h": 0.5}
    typed = typed_reference(load_reference(path), mapping, kinds, scales)
    assert typed.columns["height"] == ["165", "178.5"]
    for cell, words in (('"178,5"', "not a decimal number"), ("", "a blank cell")):
        write(tmp_path, f"first,height\nAda,165\nAlan,{cell}\nGrace,160\n", "q.csv")
        with pytest.raises(InputError) as caught:
            typed_reference(load_reference(path), mapping, kinds, scales)
        assert (caught.value.row, caught.value.field, caught.value.path) == (3, "height", str(path))
        assert words in str(caught.value) and "quantity" in str(caught.value)


def test_a_coordinates_column_is_read_as_points_and_bad_cells_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, 'first,home\nAda,"48.85660, 2.3522"\nAlan,51.5074 -0.1278\n', "c.csv")
    mapping, kinds, scales = [("h", "home")], {"h": "coordinates"}, {"h": 50.0}
    typed = typed_reference(load_reference(path), mapping, kinds, scales)
    assert typed.columns["home"] == ["48.8566,2.3522", "51.5074,-0.1278"]
    for cell, words in (("91 0", "latitude 91, outside -90 to 90"), ("", "a blank cell")):
        write(tmp_path, f"first,home\nAda,48.8 2.3\nAlan,{cell}\nGrace,48.9 2.4\n", "c.csv")
        with pytest.raises(InputError) as caught:
            typed_reference(load_reference(path), mapping, kinds, scales)
        assert (caught.value.row, caught.value.field, caught.value.path) == (3, "home", str(path))
        assert words in str(caught.value) and "coordinates" in str(caught.value)
    described = agreement_description(
        load_reference(write(tmp_path, "first,home\nAda,48.8 2.3\nAlan,48.9 2.4\n", "c.csv")),
        [("first", "first"), ("h", "home")],
        MethodParams(),
        kinds,
        scales,
    )
    assert described["kinds"]["h"] == "coordinates" and described["scales"] == {"h": 50.0}


def test_a_column_mapped_from_quantities_of_two_scales_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "first,height\nAda,165\nAlan,178.5\n", "q.csv")
    mapping = [("h1", "height"), ("h2", "height")]
    kinds = {"h1": "quantity", "h2": "quantity"}
    same = typed_reference(load_reference(path), mapping, kinds, {"h1": 0.5, "h2": 0.5})
    assert same.columns["height"] == ["165", "178.5"]
    with pytest.raises(InputError, match=r"scales 0\.5 and 1\.0") as caught:
        typed_reference(load_reference(path), mapping, kinds, {"h1": 0.5, "h2": 1.0})
    assert caught.value.field == "height"
