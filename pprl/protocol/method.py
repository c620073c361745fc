"""The method both parties run, from their choices, and the agreement digest that proves they
share it.

`method_params` is the one place where defaults depend on each other (noise changes the best
feature and whether mined hard negatives help), so the daemon's configuration, the benchmarks
and the tests all get the same method from the same choices; the settings themselves,
`MethodParams`, are plain values in pprl.protocol.method_settings, below the encodings that
read them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pprl.protocol.data.error_model import MODEL_NAMES, ONE_ERROR
from pprl.protocol.data.kinds import DEFAULT_KIND
from pprl.protocol.data.reference import MappingEntry, ReferenceSet
from pprl.protocol.encodings.base import Encoding
from pprl.protocol.encodings.registry import encoding_named
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage.matching import ASSIGNMENTS, GREEDY, OPTIMAL
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.classifier import CLASS_WEIGHTS, DEFAULT_C, TRAINERS, check_saturation
from pprl.protocol.model.features import FEATURES, PROJECTED
from pprl.protocol.sealed.kernel_features import FEATURE_MAP
from pprl.protocol.sealed.parameters import CIPHERTEXT_FORM
from pprl.protocol.vectors.release import RELEASES

DESCRIPTION_VERSION = 2
# The description's entry for the commitment to the parties' Bloom-filter key (never the key).
BLOOM_KEY_COMMITMENT = "bloom_key"
# The quantile of non-matching distances each entry saturates at, for multi-error models.
DEFAULT_SATURATION = 0.25
# The log-odds (of a logistic regression on the other fields) from which a pair links even
# though its address disagrees, for multi-error models without noise: about 400 to 1. On
# European-style registers where a tenth of the true pairs moved, 3 let through namesakes
# and 6 none; under the gate's noise it linked no more movers and is off
# (docs/research/error-model.md).
DEFAULT_MOVER_ODDS = 6.0

_LABELS = {
    "reference.columns": "reference columns",
    "reference.rows": "reference rows",
    "reference.sha256": "reference values",
    "bloom_key": "Bloom-filter keys ([privacy] bloom_key)",
}


def method_params(
    *,
    noise_sigma: float = 0.0,
    feature: str | None = None,
    hard_negatives: int | None = None,
    classifier: str | None = None,
    c: float | None = None,
    saturation: float | None = None,
    mover_odds: float | None = None,
    **rest: Any,
) -> MethodParams:
    """The method for these choices, with the defaults that depend on them filled in.

    Under noise the paper's cosine stops separating matches from non-matches; projecting onto
    the reference set's leading components measured best (docs/research/privacy.md). Under noise a
    record's nearest others look closer than its own noisy copy, so mined hard negatives
    teach the model the wrong sign: none by default. Errors of several kinds per record (any
    error model but one-error) leave some entries of true matches as far apart as strangers':
    capped distances let the model accept the entries that agree (docs/research/results.md), so such
    models default to DEFAULT_SATURATION and to a logistic regression, which ranks the many
    pairs such a model accepts better than the SVM (classifier.train). Projected features
    need only the projected coordinates, so they are what is released by default (the same
    features, far fewer bytes, less for a peer to attack: docs/research/privacy.md). Register
    models without noise also let a pair whose address disagrees link when its other fields
    make it near certain (DEFAULT_MOVER_ODDS; docs/research/error-model.md). `rest` takes any other
    MethodParams field.
    """
    defaults = MethodParams()
    noisy = noise_sigma > 0
    encoding = encoding_named(rest.get("encoding", defaults.encoding))
    feature = _fixed(encoding, "feature", feature)
    saturation = _fixed(encoding, "saturation", saturation)
    mover_odds = _fixed(encoding, "mover_odds", mover_odds)
    if "release" in encoding.fixed:
        rest["release"] = _fixed(encoding, "release", rest.get("release"))
    if feature is None:
        feature = "projected-cosine" if noisy else defaults.feature
    if feature not in FEATURES:
        raise SettingError(f"unknown feature {feature!r}; expected one of {', '.join(FEATURES)}")
    class_weight = rest.get("class_weight", defaults.class_weight)
    if class_weight not in CLASS_WEIGHTS:
        raise SettingError(
            f"unknown class_weight {class_weight!r}; expected one of {CLASS_WEIGHTS}"
        )
    model = rest.get("error_model", defaults.error_model)
    if model not in MODEL_NAMES:
        raise SettingError(
            f"unknown error_model {model!r}; expected one of {', '.join(MODEL_NAMES)}"
        )
    negatives = rest.get("negatives_per_positive", defaults.negatives_per_positive)
    several_errors = model != ONE_ERROR
    if classifier is None:
        classifier = default_classifier(model)
    if classifier not in TRAINERS:
        raise SettingError(f"unknown classifier {classifier!r}; expected one of {TRAINERS}")
    if encoding.trainers is not None and classifier not in encoding.trainers:
        raise SettingError(
            f'encoding "{encoding.name}" evaluates each decision as a linear form under '
            f"encryption: classifier must be {' or '.join(encoding.trainers)}, not {classifier!r}",
            setting="classifier",
        )
    if hard_negatives is None:
        hard_negatives = 0 if noisy else min(defaults.hard_negatives, negatives)
    if saturation is None:
        saturation = DEFAULT_SATURATION if several_errors and not noisy else 0.0
    check_saturation(saturation)
    if mover_odds is None:
        mover_odds = DEFAULT_MOVER_ODDS if several_errors and not noisy else 0.0
    if not (mover_odds >= 0 and mover_odds < float("inf")):
        raise SettingError(f"must be a number >= 0, got {mover_odds}", setting="mover_odds")
    assignment = rest.pop("assignment", None) or default_assignment(model, noisy)
    if assignment not in ASSIGNMENTS:
        raise SettingError(f"unknown assignment {assignment!r}; expected one of {ASSIGNMENTS}")
    encoding.check(noise_sigma, rest.get("soft_top_k", 0), rest)
    release = rest.pop("release", None)
    if release is None:
        release = "projected" if feature in PROJECTED else defaults.release
    if release not in RELEASES:
        raise SettingError(f"unknown release {release!r}; expected one of {', '.join(RELEASES)}")
    if release == "projected" and feature not in PROJECTED:
        raise SettingError(
            f'"projected" sends only what features {_quoted(PROJECTED)} use, not {feature!r}',
            setting="release",
        )
    if hard_negatives > negatives:
        raise SettingError(
            f"must not exceed negatives_per_positive ({negatives}), got {hard_negatives}",
            setting="hard_negatives",
        )
    components = rest.get("projected_components", 0)
    if isinstance(components, bool) or not isinstance(components, int) or components < 0:
        raise SettingError(
            f"must be a whole number >= 0, got {components!r}", setting="projected_components"
        )
    if components and feature not in PROJECTED:
        raise SettingError(
            f"only features {_quoted(PROJECTED)} keep components, not {feature!r}",
            setting="projected_components",
        )
    return MethodParams(
        assignment=assignment,
        release=release,
        feature=feature,
        noise_sigma=float(noise_sigma),
        classifier=classifier,
        c=DEFAULT_C[classifier] if c is None else float(c),
        hard_negatives=hard_negatives,
        saturation=float(saturation),
        mover_odds=float(mover_odds),
        **rest,
    )


def _fixed(encoding: Encoding, key: str, given: Any) -> Any:
    """The value `encoding` needs for `key`, refusing another one given."""
    if key not in encoding.fixed:
        return given
    needed = encoding.fixed[key]
    if given is not None and given != needed:
        raise SettingError(
            f'encoding "{encoding.name}" needs {key} = {needed!r}, not {given!r}', setting=key
        )
    return needed


def default_classifier(error_model: str) -> str:
    """The paper's linear SVM for its one-error training; a logistic regression otherwise."""
    return "linear" if error_model == ONE_ERROR else "logistic"


def default_assignment(error_model: str, noisy: bool = False) -> str:
    """Greedy in the paper's setting (one-error training, exact distances), where true pairs
    stand out; otherwise the optimal assignment: saturated distances, and noise, leave many
    accepted pairs per record with equal or close scores, and the total score chooses among
    them better than first-come (docs/research/results.md, docs/research/privacy.md)."""
    return GREEDY if error_model == ONE_ERROR and not noisy else OPTIMAL


def _quoted(names: Sequence[str]) -> str:
    return " and ".join(f'"{name}"' for name in names)


def agreement_description(
    reference: ReferenceSet,
    mapping: Sequence[MappingEntry],
    params: MethodParams,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
    bloom_key: str | None = None,
) -> dict[str, Any]:
    """What the digest covers: a hash of the reference values, never the values; column order
    in the file does not matter, row order does. Each mapped attribute's kind decides how
    both parties normalise and compare it, and the scale of a quantity or of coordinates its
    distances (for coordinates also the stated tolerance), so both are covered too. Scales
    appear only when a quantity or coordinates are mapped, so every description without one
    (and its digest) stays what it was before quantities existed."""
    description = {
        "kinds": {a: (kinds or {}).get(a, DEFAULT_KIND) for a, _ in mapping},
        "reference": {
            "columns": sorted(reference.columns),
            "rows": len(reference),
            "sha256": reference_sha256(reference),
        },
        "mapping": [[attribute, column] for attribute, column in mapping],
        "params": params.to_dict(),
        "version": DESCRIPTION_VERSION,
    }
    if params.kernel_features:
        # How the random features are made: a party whose pprl makes them otherwise would
        # score other numbers, so its digest differs (absent without them: other digests stay).
        description["kernel_features"] = FEATURE_MAP
    if params.sealed:
        # How ciphertexts are written: a party writing them otherwise fails AGREE, not MATCH.
        description["ciphertexts"] = CIPHERTEXT_FORM
    given = scales or {}
    if mapped_scales := {a: float(given[a]) for a, _ in mapping if a in given}:
        description["scales"] = mapped_scales
    if params.keyed:
        # Two keys that differ give filters that cannot be compared: the commitment tells,
        # and the key itself never leaves the party.
        description[BLOOM_KEY_COMMITMENT] = bloom_key
    return description


def reference_sha256(reference: ReferenceSet) -> str:
    """The digest's hash of the reference values, shown by `pprl reference` so that two
    operators can compare their sets by eye before a run."""
    return hashlib.sha256(_canonical(reference.columns)).hexdigest()


def agreement_digest(
    reference: ReferenceSet,
    mapping: Sequence[MappingEntry],
    params: MethodParams,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, float] | None = None,
    bloom_key: str | None = None,
) -> str:
    """Equal digests mean both parties would compute comparable features."""
    return description_digest(
        agreement_description(reference, mapping, params, kinds, scales, bloom_key)
    )


def description_digest(description: Mapping[str, Any]) -> str:
    """The digest of a description as it stands (with automatic noise, after choosing it)."""
    return hashlib.sha256(_canonical(description)).hexdigest()


# Marks a description whose noise is chosen at AGREE (noise_sigma = "auto"); absent otherwise,
# so every other description and digest stays what it was.
AUTO_NOISE_KEY = "noise"


def with_auto_noise(description: Mapping[str, Any]) -> dict[str, Any]:
    return {**description, AUTO_NOISE_KEY: "auto"}


def without_sigma(description: Mapping[str, Any]) -> dict[str, Any]:
    """What two automatic-noise proposals must share: everything but the proposed sigma."""
    params = {k: v for k, v in description["params"].items() if k != "noise_sigma"}
    return {**description, "params": params}


def _canonical(value: object) -> bytes:
    """One byte string per value, independent of process, platform and hash seed."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def explain_mismatch(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """Tell the operator which agreed input differs, since the digests alone cannot."""
    mine, peer = _flatten(ours), _flatten(theirs)
    keys = list(mine) + [key for key in peer if key not in mine]
    differences = [
        _difference(key, mine.get(key), peer.get(key))
        for key in keys
        if mine.get(key) != peer.get(key)
    ]
    return "; ".join(differences) if differences else "the agreement descriptions are identical"


def _flatten(description: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested keys as dotted paths, so differences can be named precisely."""
    flat: dict[str, Any] = {}
    for key, value in description.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _difference(key: str, ours: Any, theirs: Any) -> str:
    """One difference as 'what differs: ours X, peer Y'."""
    verb = "differ" if key in _LABELS else "differs"
    label = _LABELS.get(key, key)
    return f"{label} {verb}: ours {_show(key, ours)}, peer {_show(key, theirs)}"


def _show(key: str, value: Any) -> str:
    """Values short enough to read on one line."""
    if value is None:
        return "(missing)"
    if key in ("reference.sha256", "bloom_key"):
        return f"sha256 {str(value)[:12]}..."
    if key == "mapping":
        return ", ".join(f"{attribute}->{column}" for attribute, column in value) or "(empty)"
    return repr(value)
