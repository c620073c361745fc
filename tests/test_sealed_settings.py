"""What sealed linkage's configuration accepts and refuses, named at the file's key, and
what its agreement covers."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pprl.party.config import load_config
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.encodings.registry import DEFAULT_ENCODING, ENCODINGS
from pprl.protocol.method import agreement_description, method_params
from pprl.protocol.method_settings import ENCODING_SETTINGS, SEALED_SETTINGS
from pprl.protocol.sealed import session
from pprl.protocol.sealed.joins import default_join
from pprl.protocol.sealed.kernel_features import FEATURE_MAP
from pprl.protocol.sealed.parameters import CIPHERTEXT_FORM, DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS
from tests.test_config import load_error, minimal, write

RECIPES = ["first:soundex+last:soundex", "first:initial+last"]


def sealed(**method: Any) -> dict[str, Any]:
    data = minimal()
    data["method"] = {"encoding": "sealed", "sealed_keys": RECIPES, **method}
    data["privacy"] = {"max_reidentification": 1.0}
    return data


@pytest.mark.parametrize(
    ("method", "field", "words"),
    [
        ({"noise_sigma": 1.0}, "method.noise_sigma", "does not apply"),
        ({"noise_sigma": "auto"}, "method.noise_sigma", "does not apply"),
        ({"attack_success": 0.3}, "method.attack_success", "does not apply"),
        ({"soft_top_k": 3}, "method.soft_top_k", "does not apply"),
        ({"sealed_keys": ["first+surname"]}, "method.sealed_keys", "no attribute 'surname'"),
        ({"sealed_keys": ["first:metaphone"]}, "method.sealed_keys", "unknown transform"),
        ({"sealed_keys": ["first|nick:soundex"]}, "method.sealed_keys", "no attribute 'nick'"),
        ({"sealed_keys": ["first|first:soundex"]}, "method.sealed_keys", "named twice"),
        ({"sealed_keys": ["?first:soundex"]}, "method.sealed_keys", "only fallback"),
        ({"sealed_keys": ["~?first:soundex", "last"]}, "method.sealed_keys", "marks once each"),
        ({"sealed_thresholds": [1, 2]}, "method.sealed_thresholds", "must start at 0"),
        ({"sealed_thresholds": [0, 2, 1]}, "method.sealed_thresholds", "must rise"),
        ({"sealed_thresholds": ["a"]}, "method.sealed_thresholds", "list of numbers"),
        ({"sealed_crypto": "ckks-4096"}, "method.sealed_crypto", "unknown parameter set"),
        ({"sealed_kernel_features": -1}, "method.sealed_kernel_features", "whole number >= 0"),
        ({"sealed_kernel_features": 1.5}, "method.sealed_kernel_features", "whole number >= 0"),
        ({"sealed_kernel_features": 5000}, "method.sealed_kernel_features", "from 0"),
        ({"sealed_kernel_features": 63}, "method.sealed_kernel_features", "an even whole number"),
        ({"sealed_names_within": -1}, "method.sealed_names_within", "whole number >= 0"),
        (
            {"sealed_names_within": 1, "sealed_join": "graph"},
            "method.sealed_names_within",
            'needs sealed_join = "hidden"',
        ),
        ({"sealed_slots": -1, "sealed_join": "hidden"}, "method.sealed_slots", "whole number >= 0"),
        (
            {"sealed_slots": 1, "sealed_join": "graph"},
            "method.sealed_slots",
            'needs sealed_join = "hidden"',
        ),
        ({"saturation": 0.25}, "method.saturation", "needs saturation = 0.0"),
        ({"feature": "cosine"}, "method.feature", "needs feature = 'projected-cosine-raw-joins'"),
        # Refused here: an rbf model used to fail at MATCH, after the keys had gone out.
        ({"classifier": "rbf"}, "method.classifier", "classifier must be linear or logistic"),
    ],
)
def test_sealed_settings_it_cannot_honour_are_refused_at_their_key(
    tmp_path: Path, method: dict[str, Any], field: str, words: str
) -> None:
    error = load_error(write(tmp_path, sealed(**method)))
    assert error.field == field, error
    assert words in str(error)


def test_without_recipes_the_schema_gives_them_or_the_error_says_to(tmp_path: Path) -> None:
    data = sealed()
    data["method"]["error_model"] = "one-error"  # the built-in data's: no swapped names
    del data["method"]["sealed_keys"]
    method = load_config(write(tmp_path, data)).method
    # Every two names' codes (a middle name's with each other name's holds a changed name):
    # names alone take the hidden join by default.
    # Blanks agree in the first and last names' codes.
    marked = "first:soundex+middle:soundex,=first:soundex+last:soundex,middle:soundex+last:soundex"
    assert method.sealed_join == "hidden"
    # Then the first and last names' first letters, the two names one edit apart, each
    # with the other's code, and the last name one edit apart with the middle name's code.
    neighbours = (
        "first:neighbours+last:soundex,first:soundex+last:neighbours,middle:soundex+last:neighbours"
    )
    assert method.sealed_keys == f"{marked},first:prefix+last:prefix,{neighbours}"
    # By the keys' graph, named, the codes alone.
    data["method"]["sealed_join"] = "graph"
    assert load_config(write(tmp_path, data)).method.sealed_keys == marked
    data["method"]["sealed_join"] = "hiddenn"
    error = load_error(write(tmp_path, data))
    assert error.field == "method.sealed_join" and "graph, hidden" in str(error)
    del data["method"]["sealed_join"]
    data["records"]["attributes"] = ["first"]
    data["reference"]["mapping"] = [["first", "first"]]
    error = load_error(write(tmp_path, data))
    assert error.field == "method.sealed_keys" and "name them in sealed_keys" in str(error)
    # Sealed is the default: a file naming no encoding is told the way to the reference
    # release too, and one naming another encoding may not set sealed keys.
    data["method"] = {}
    error = load_error(write(tmp_path, data))
    assert error.field == "method.sealed_keys" and 'encoding = "reference"' in str(error)
    other = minimal()
    other["method"] = {"encoding": "bloom", "sealed_keys": RECIPES}
    error = load_error(write(tmp_path, other))
    assert error.field == "method.sealed_keys" and 'encoding = "sealed" only' in str(error)


def test_a_kernel_model_is_the_default_beyond_names_or_where_training_swaps_them(
    tmp_path: Path,
) -> None:
    """Names alone trained with the paper's one-error model (the built-in records): a model
    linear in the distances and keys in field order; trained on copies that swap names (the
    register model, the default for records naming their attributes): 64 random features an
    entry and keys read in either order, which together link swapped pairs; any other kind
    among the attributes: 48, which beyond names link as well as 64 (docs/research/sealed.md, "The
    model"); a value the operator names is kept."""
    data = sealed()
    data["method"]["error_model"] = "one-error"
    assert load_config(write(tmp_path, data)).method.sealed_kernel_features == 0
    del data["method"]["sealed_keys"]
    data["method"]["sealed_join"] = "hidden"
    one_error = load_config(write(tmp_path, data)).method
    assert one_error.error_model == "one-error" and "~" not in one_error.sealed_keys
    del data["method"]["error_model"]
    registers = load_config(write(tmp_path, data)).method
    assert registers.error_model == "registers"
    assert registers.sealed_kernel_features == session.KERNEL_FEATURES_NAMES == 64
    recipes = registers.sealed_keys.split(",")
    # Those with the first name, which a swap moves; the middle and last names' in order.
    assert len(recipes) == 7
    assert {r for r in recipes if r.startswith("~")} == {
        "~first:soundex+middle:soundex",
        "~=first:soundex+last:soundex",
        "~first:prefix+last:prefix",
    }
    # Blanks agree in the first and last names' codes alone: a middle name is often blank.
    # Only the first and last names' first letters: beside the names one edit apart the
    # middle name's add nothing.
    assert "middle:soundex+last:soundex" in recipes
    assert not any(":prefix" in r and "middle" in r for r in recipes)
    # The first and last names one edit apart, each with the other's code, and the last
    # name one edit apart with the middle name's code (not the first name with it).
    assert recipes[-3:] == [
        "first:neighbours+last:soundex",
        "first:soundex+last:neighbours",
        "middle:soundex+last:neighbours",
    ]
    assert "first:neighbours+middle:soundex" not in recipes
    # A register model without swaps keeps the names' order and the linear model.
    data["method"]["error_model"] = "variants"
    variants = load_config(write(tmp_path, data)).method
    assert variants.sealed_kernel_features == 0 and "~" not in variants.sealed_keys
    data = sealed()
    data["records"]["attributes"] = ["first", "middle", "last", "dob"]
    data["records"]["kinds"] = {"dob": "date"}
    data["reference"]["mapping"] = [["first", "first"], ["last", "last"], ["dob", "first"]]
    beyond = load_config(write(tmp_path, data)).method
    assert beyond.sealed_kernel_features == session.KERNEL_FEATURES_BEYOND_NAMES == 48
    assert beyond.kernel_features == 48
    data["method"]["sealed_kernel_features"] = 0
    assert load_config(write(tmp_path, data)).method.sealed_kernel_features == 0


def test_the_default_recipes_follow_the_schema() -> None:
    """FEBRL4's ten fields: every recipe needs the date of birth or both names, and another
    attribute, or one name and two numbers; a state (a category) is too common to key on."""
    kinds = {"given_name": "name", "surname": "name", "postcode": "number", "suburb": "text"}
    kinds |= {"state": "category", "date_of_birth": "date", "street_number": "number"}
    recipes = session.default_recipes(kinds, "registers").split(",")
    # Any name's code with the date, whichever field holds it (swapped names).
    assert "date_of_birth+given_name|surname:soundex" in recipes
    # One name with two numbers, never with free text: a street name joins look-alikes.
    assert "given_name|surname:soundex+postcode+street_number" in recipes
    assert not any(r.startswith("given_name|surname:soundex+suburb") for r in recipes)
    assert "date_of_birth:year+given_name:soundex+surname:soundex" in recipes
    assert "given_name:soundex+surname:soundex+postcode" in recipes
    assert not any("state" in recipe for recipe in recipes)
    assert all("+" in recipe for recipe in recipes)
    # A row no other recipe keys (its date blank) is found by both names' codes, and by
    # nothing looser: the fallback has no prefixed twin.
    assert recipes[-1] == "?given_name:soundex+surname:soundex"
    assert sum(r.startswith("?") for r in recipes) == 1
    # Each other recipe reading a name's code has a twin reading its first letters; no other.
    coded = [r for r in recipes[:-1] if ":soundex" in r]
    prefixed = [r for r in recipes if ":prefix" in r]
    assert prefixed == [r.replace(":soundex", ":prefix") for r in coded]
    assert len(recipes) == len(set(recipes))
    # With an identifier keyed alone, no twins: it joins the pairs a typo hides.
    keyed = session.default_recipes(kinds | {"ssn": "identifier"}, "registers").split(",")
    assert not any(":prefix" in recipe for recipe in keyed)
    # Names alone take the hidden join by default, and with it both names' first letters
    # besides their codes, and each name one edit apart with the other's code; by the keys'
    # graph these would leak more (docs/research/sealed.md).
    names = {"given_name": "name", "surname": "name"}
    assert default_join(names) == "hidden" and default_join(kinds) == "graph"
    neighbours = "given_name:neighbours+surname:soundex,given_name:soundex+surname:neighbours"
    assert session.default_recipes(names, "one-error") == (
        f"=given_name:soundex+surname:soundex,given_name:prefix+surname:prefix,{neighbours}"
    )
    assert session.default_recipes(names, "one-error", hidden=False) == (
        "=given_name:soundex+surname:soundex"
    )
    # Training that swaps names reads them in either order; the recipes beyond names keep
    # theirs (any name's code with the date already reads either field).
    assert session.default_recipes(names, "registers") == (
        f"~=given_name:soundex+surname:soundex,~given_name:prefix+surname:prefix,{neighbours}"
    )
    assert "~" not in session.default_recipes(kinds, "registers")


def test_an_identifier_is_keyed_alone_and_read_as_a_number() -> None:
    """A social security number declared "identifier": one key on it alone (two records that
    share one name one person), and the combinations a number is in besides."""
    from pprl.protocol.data.kinds import KINDS, BadValue

    kinds = {"given_name": "name", "surname": "name", "date_of_birth": "date"}
    recipes = session.default_recipes(kinds | {"ssn": "identifier"}, "registers").split(",")
    assert recipes[0] == "ssn" and "date_of_birth+ssn" in recipes
    assert "ssn" not in session.default_recipes(kinds | {"ssn": "number"}, "registers").split(",")
    assert KINDS["identifier"].read("401-22-33", "") == "4012233"
    with pytest.raises(BadValue):
        KINDS["identifier"].read("40A", "")


def test_the_digest_covers_the_recipes_thresholds_and_parameters() -> None:
    base = method_params(encoding="sealed", sealed_keys="first+last")
    digests = {
        base.to_dict().__repr__(),
        method_params(encoding="sealed", sealed_keys="first+last:initial").to_dict().__repr__(),
        method_params(encoding="sealed", sealed_keys="first+last", sealed_thresholds="0,1")
        .to_dict()
        .__repr__(),
        method_params(encoding="sealed", sealed_keys="first+last", sealed_kernel_features=64)
        .to_dict()
        .__repr__(),
    }
    assert len(digests) == 4
    # Another encoding's description holds none of them: earlier digests stay what they were.
    assert not any(key.startswith("sealed_") for key in method_params().to_dict())


def test_the_digest_says_how_random_features_are_made_only_when_they_are() -> None:
    """A pprl that made the kernel's random features otherwise would score other numbers with
    the same parameters: the description names the map, and only with random features, so
    every other digest stays what it was."""
    reference = ReferenceSet("ref.csv", {"first": ["ANN", "BOB"], "last": ["LEE", "KAY"]})
    mapping = [("first", "first"), ("last", "last")]
    with_features = method_params(
        encoding="sealed", sealed_keys="first+last", sealed_kernel_features=64
    )
    described = agreement_description(reference, mapping, with_features)
    assert described["kernel_features"] == FEATURE_MAP
    linear = method_params(encoding="sealed", sealed_keys="first+last", sealed_kernel_features=0)
    assert "kernel_features" not in agreement_description(reference, mapping, linear)


def test_the_digest_says_how_ciphertexts_are_written_only_when_sealed() -> None:
    """A party that wrote its ciphertexts as SEAL compresses them could not be read by one that
    packs their coefficients: the sealed description names the form, so the two fail AGREE;
    a description of another encoding, and its digest, stay what they were."""
    reference = ReferenceSet("ref.csv", {"first": ["ANN", "BOB"], "last": ["LEE", "KAY"]})
    mapping = [("first", "first"), ("last", "last")]
    sealed = method_params(encoding="sealed", sealed_keys="first+last")
    assert agreement_description(reference, mapping, sealed)["ciphertexts"] == CIPHERTEXT_FORM
    reference_release = method_params(encoding="reference")
    assert "ciphertexts" not in agreement_description(reference, mapping, reference_release)


def test_ties_break_the_same_way_on_both_sides() -> None:
    """A pair is (own row, peer row) on each side; the party first in the run's order sees it
    as it is, the other reversed: both must draw the same tie for it."""
    pairs = session.np.array([[0, 1], [0, 2], [3, 1], [3, 2]])
    buckets = session.np.array([2, 2, 2, 2])
    mine = session.one_to_one(pairs, buckets, True, "digest")
    theirs = session.one_to_one(pairs[:, ::-1].copy(), buckets, False, "digest")
    assert len(mine) == 2
    assert sorted(zip(mine.rows_a, mine.rows_b, strict=True)) == sorted(
        zip(theirs.rows_b, theirs.rows_a, strict=True)
    )


def test_a_score_header_with_widths_no_kernel_can_have_is_refused() -> None:
    """An evaluator that agreed on random features takes one kernel width per entry, each a
    cap a kernel model can have over its divisor; anything else is refused before any work."""
    from pprl.party.phases.sealed.evaluation import Evaluation
    from pprl.party.phases.sealed.stream_checks import KERNEL_WIDTHS, header_refusal
    from pprl.party.phases.sealed.stream_shape import ScoreShape
    from pprl.protocol.sealed.layout import layout
    from pprl.wire.v1 import linkage_pb2 as pb

    pairs = np.array([[0, 0], [1, 1]])
    ckks = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
    placed = layout(pairs, ckks.slots, 1)
    units = np.zeros((2, 2, 4), dtype=np.float32)
    sha = session.candidates_sha256(pairs)
    live = np.ones(2 * 17, dtype=bool)
    evaluation = Evaluation(
        placed, ScoreShape(2 * 17 + 1, 11), units, ckks, sha, False, 2, 16, "digest", (), live
    )
    header = pb.ScoreHeader(batches=placed.batches, coordinates=2 * 17 + 1, candidates_sha256=sha)
    for widths in ([0.1], [0.1, 0.0], [0.1, KERNEL_WIDTHS[1] * 2], [0.1, float("nan")]):
        del header.kernel_widths[:]
        header.kernel_widths.extend(widths)
        refusal = header_refusal(header, evaluation)
        assert refusal is not None and refusal[0] == pb.BAD_CIPHERTEXT, widths
        assert "kernel widths" in refusal[1]
    del header.kernel_widths[:]
    header.kernel_widths.extend([0.1, KERNEL_WIDTHS[0]])
    # The widths pass; what is refused next is the header's (empty) public key.
    refusal = header_refusal(header, evaluation)
    assert refusal is not None and "public key" in refusal[1]


def test_the_keys_poor_linkage_suggests_are_a_line_the_configuration_reads(
    tmp_path: Path,
) -> None:
    """TRAIN's stop names the recipes that add the names' prefixes: pasted into [method]
    they load, and add a prefix recipe beside each Soundex one."""
    from pprl.protocol.expectation import ExpectedQuality, poor_linkage_words
    from pprl.protocol.sealed.recipes import with_prefixes

    agreed = session.recipes(",".join(RECIPES), ["first", "middle", "last"])
    wider = with_prefixes(agreed)
    words = poor_linkage_words(ExpectedQuality(0.9, 0.5, 100), 0.9, False, 0.6, wider)
    line = re.search(r"sealed_keys = \[[^\]]*\]", words)
    assert line is not None, words
    data = sealed()
    data["method"]["sealed_keys"] = tomllib.loads(line.group(0))["sealed_keys"]
    loaded = load_config(write(tmp_path, data)).method.sealed_keys.split(",")
    assert loaded == list(wider) and any(":prefix" in recipe for recipe in loaded)


def test_naming_within_buckets_is_read_and_agreed_and_leaves_the_default_digest(
    tmp_path: Path,
) -> None:
    """Rows naming slots below their best is agreed (the peer's evaluator resolves them), so
    it enters the digest; at its default, 0, every earlier agreement keeps its digest."""
    default = load_config(write(tmp_path, sealed())).method
    assert default.sealed_names_within == 0
    assert "sealed_names_within" not in default.to_dict()
    within = load_config(write(tmp_path, sealed(sealed_names_within=1))).method
    assert within.sealed_names_within == 1
    assert within.to_dict()["sealed_names_within"] == 1
    reference = ReferenceSet("ref.csv", {"first": ["ANN", "BOB"], "last": ["LEE", "KAY"]})
    mapping = [("first", "first"), ("last", "last")]
    described = agreement_description(reference, mapping, within)
    assert described != agreement_description(reference, mapping, default)


def test_every_encoding_is_named_in_the_settings_and_every_name_has_its_code() -> None:
    """The settings say which encoding reads which of them by its name (method_settings,
    below the encodings); the registry holds each one's code by the same name."""
    assert list(ENCODINGS) == list(ENCODING_SETTINGS)
    assert [name for name, encoding in ENCODINGS.items() if encoding.sealed] == [DEFAULT_ENCODING]
    assert [name for name, encoding in ENCODINGS.items() if encoding.keyed] == [
        "bloom",
        "bloom-distances",
    ]
    assert ENCODINGS["sealed"].settings == SEALED_SETTINGS
