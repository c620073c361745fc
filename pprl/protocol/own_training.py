"""A classifier from a party's own records only (Algorithm 2), for the encodings that
release distances: own records and their corrupted copies, both released as the party
releases its tensor, labelled by who is whose copy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.combined import base_names, parts
from pprl.protocol.data.error_model import ADDRESS, roles_of
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model import classifier, training

Columns = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class TrainingSample:
    """Own records, their corrupted copies, and both released as the party releases its
    tensor (with independent noise), so the model learns the features it will meet."""

    own: dict[str, list[str]]
    corrupted: dict[str, list[str]]
    own_tensor: np.ndarray
    corrupted_tensor: np.ndarray


def training_sample(
    agreement: AgreementView,
    attributes: Columns,
    rng: np.random.Generator,
    *,
    size: int | None = None,
    corruption: str | None = None,
    errors_per_record: int = 1,
) -> TrainingSample:
    """A sample of own records and their corrupted copies, released (Algorithm 2); the
    corruption is the agreed error model unless one is given."""
    names = base_names(attribute for attribute, _ in agreement.mapping)
    own, corrupted = training.corrupt_sample(
        attributes,
        names,
        size=agreement.method.training_records if size is None else size,
        rng=rng,
        corruption=agreement.method.error_model if corruption is None else corruption,
        errors_per_record=errors_per_record,
        kinds=agreement.kinds,
        scales=agreement.scales,
    )
    return TrainingSample(
        own, corrupted, agreement.smash(own, rng), agreement.smash(corrupted, rng)
    )


def training_pairs(
    agreement: AgreementView,
    sample: TrainingSample,
    rng: np.random.Generator,
    *,
    method: MethodParams | None = None,
    similarity: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Labelled pair features of a training sample: each record with its own copy (1), and
    with others' copies, random or nearest (0). `method` overrides the agreed training
    parameters (the benchmarks' variants); `similarity` may be shared by several fits."""
    method = method or agreement.method
    return training.training_features(
        sample.own_tensor,
        sample.corrupted_tensor,
        rng,
        method.negatives_per_positive,
        method.hard_negatives,
        similarity,
        standardise=agreement.standardise,
    )


def fit(
    agreement: AgreementView,
    sample: TrainingSample,
    rng: np.random.Generator,
    *,
    method: MethodParams | None = None,
    similarity: np.ndarray | None = None,
) -> tuple[classifier.Model, int]:
    """The classifier trained on a training sample's pairs, and the pair count."""
    method = method or agreement.method
    x, y = training_pairs(agreement, sample, rng, method=method, similarity=similarity)
    model = classifier.train(
        x,
        y,
        method.classifier,
        method.c,
        method.class_weight,
        method.saturation,
        lenient=mover_groups(agreement, method),
        lenient_odds=method.mover_odds,
        kernel=method.kernel_features > 0,
    )
    return model, len(y)


def mover_groups(
    agreement: AgreementView, method: MethodParams | None = None
) -> tuple[tuple[int, ...], ...]:
    """The groups of entries a movers' alternative leaves out (classifier.train gives a model
    one alternative per group): the address entries, when the method asks for it
    (`mover_odds` > 0) and the classifier is linear; none otherwise. The one place that
    decides it, so the daemon's words and sealed scoring's evaluator agree with training."""
    method = method or agreement.method
    address = address_entries(agreement)
    if not address or method.mover_odds <= 0 or method.classifier == "rbf":
        return ()
    return (address,)


def address_entries(agreement: AgreementView) -> tuple[int, ...]:
    """The mapping entries that compare parts of an address only (by the attributes' names,
    as the error model's movers: street, postcode, town, ...): a person who moves changes
    them all at once, so they are the group a lenient alternative leaves out. None when
    every entry is one (nothing would be left to link on)."""
    entries = tuple(
        m
        for m, (attribute, _) in enumerate(agreement.mapping)
        if all(role == ADDRESS for role in roles_of(parts(attribute)))
    )
    return entries if len(entries) < len(agreement.mapping) else ()
