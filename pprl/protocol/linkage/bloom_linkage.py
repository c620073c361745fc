"""Algorithm 1 on the Bloom-filter release: each party trains its classifier on its own
records' filters (a record against its corrupted copy, and against others' copies), scores
every pair of its own and the peer's filters, keeps its best `top_k` per own record, assigns
one-to-one, and the linkage is the pairs both parties accepted, as with the reference release.

Candidates are every pair: exact, with pair completeness 1 by construction, at the cost of
one product per attribute over all pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pprl.protocol.data.combined import base_names
from pprl.protocol.linkage import matching
from pprl.protocol.linkage.bloom_candidates import Packed, candidate_keys, score_keys
from pprl.protocol.linkage.matching import _ranked
from pprl.protocol.model import classifier, training
from pprl.protocol.model.classifier import Model
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.bloom import (
    BloomKey,
    BloomParams,
    Unpacked,
    block_features,
    encode,
    pair_features,
    unpack,
)

if TYPE_CHECKING:
    from pprl.protocol.method_settings import MethodParams

Columns = Mapping[str, Sequence[str]]
_BLOCK_BYTES = 64 << 20
_SIMILARITY_ROWS = 512


def rows(filters: Unpacked, index: np.ndarray | slice) -> Unpacked:
    return Unpacked(filters.bits[index], filters.counts[index])


def similarity(a: Unpacked, b: Unpacked) -> np.ndarray:
    """(len(a), len(b)): the sum over attributes of Dice similarities, for hard negatives."""
    entries = a.bits.shape[1]
    out = np.empty((len(a), len(b)), dtype=np.float32)
    for start in range(0, len(a), _SIMILARITY_ROWS):
        block = block_features(rows(a, slice(start, start + _SIMILARITY_ROWS)), b)
        out[start : start + _SIMILARITY_ROWS] = entries - block[:, :, :entries].sum(axis=-1)
    return out


def training_features(
    own: Unpacked,
    corrupted: Unpacked,
    rng: np.random.Generator,
    negatives_per_positive: int,
    hard_negatives: int,
) -> tuple[np.ndarray, np.ndarray]:
    """X (positives, then negatives) and y, as training.training_features builds them for the
    reference release; a negative whose filters equal the positive's is dropped."""
    n = len(own)
    near = similarity(own, corrupted) if hard_negatives else None
    partners = training.negative_partners(near, n, rng, negatives_per_positive, hard_negatives)
    mine, others = np.repeat(np.arange(n), partners.shape[1]), partners.reshape(-1)
    same = (own.bits[mine] == corrupted.bits[others]).all(axis=(1, 2))
    mine, others = mine[~same], others[~same]
    positives = pair_features(own, corrupted)
    negatives = pair_features(rows(own, mine), rows(corrupted, others))
    labels = np.zeros(n + len(negatives), dtype=np.int8)
    labels[:n] = 1
    return np.concatenate([positives, negatives]), labels


@dataclass(frozen=True)
class BloomAgreement:
    """What both parties fix before encoding: key, filter parameters, attributes and their
    kinds, and the method (classifier, training, top_k, assignment)."""

    key: BloomKey
    params: BloomParams
    attributes: tuple[str, ...]
    kinds: Mapping[str, str]
    method: MethodParams
    scales: Mapping[str, float] = field(default_factory=dict)  # quantities' and places'

    def encode(self, columns: Columns) -> np.ndarray:
        return encode(self.key, self.params, columns, self.attributes, self.kinds, self.scales)


def train(
    agreement: BloomAgreement, columns: Columns, rng: np.random.Generator
) -> tuple[Model, int]:
    """A party's classifier from its own records only, and its training pair count."""
    method = agreement.method
    own, corrupted = training.corrupt_sample(
        columns,
        base_names(agreement.attributes),
        size=method.training_records,
        rng=rng,
        corruption=method.error_model,
        kinds=agreement.kinds,
        scales=agreement.scales,
    )
    x, y = training_features(
        unpack(agreement.encode(own)),
        unpack(agreement.encode(corrupted)),
        rng,
        method.negatives_per_positive,
        method.hard_negatives,
    )
    model = classifier.train(
        x, y, method.classifier, method.c, method.class_weight, method.saturation
    )
    return model, len(y)


def _decisions(features: np.ndarray, model: Model) -> np.ndarray:
    """(rows, n_b) decision values of a block's (rows, n_b, 3A) features."""
    n_rows, n_b, width = features.shape
    if model.kind == "linear" and model.caps is None:
        weights = model.arrays["weights"].astype(np.float32)
        if len(weights) != width:
            weights = classifier.full_weights(weights, width // 3).astype(np.float32)
        return features @ weights + np.float32(model.arrays["bias"])
    return model.decision(features.reshape(-1, width)).reshape(n_rows, n_b)


def match_filters(
    own: np.ndarray,
    peer: np.ndarray,
    model: Model,
    method: MethodParams,
    progress: Progress | None = None,
) -> matching.Matched:
    """Packed (n, attributes, bytes) filters matched: the candidates a linear model's bound
    allows (bloom_candidates), or every pair; best top_k per own row; one-to-one."""
    packed_own, packed_peer = Packed.of(own), Packed.of(peer)
    keys = candidate_keys(packed_own, packed_peer, model)
    if keys is None:
        found = match(unpack(own), unpack(peer), model, method, progress)
        return matching.Matched(found, None)
    rows_a, rows_b, features = score_keys(packed_own, packed_peer, keys)
    scores = _decisions(features[:, None, :], model)[:, 0]
    keep = scores > 0
    accepted = matching.Matches(rows_a[keep], rows_b[keep], scores[keep])
    ranked = _ranked(accepted, "a", method.top_k)
    if progress is not None:
        progress(len(own), len(own))
    return matching.Matched(matching.one_to_one(ranked, method.assignment), len(keys))


def match(
    own: Unpacked,
    peer: Unpacked,
    model: Model,
    method: MethodParams,
    progress: Progress | None = None,
) -> matching.Matches:
    """Every pair scored by the party's own classifier; best top_k per own row; one-to-one."""
    width = 3 * own.bits.shape[1]
    block_rows = max(1, _BLOCK_BYTES // (4 * (width + 1) * max(1, len(peer))))
    selection = matching.Selection(model, method.top_k)
    (found,) = matching.scan(
        len(own),
        len(peer),
        [selection],
        block_rows=block_rows,
        prepare=lambda start, stop: block_features(rows(own, slice(start, stop)), peer),
        score=_decisions,  # type: ignore[arg-type]
        progress=progress,
    )
    return matching.one_to_one(found, method.assignment)


@dataclass(frozen=True)
class BloomLinkage:
    """Each party's accepted pairs (Alice's row, Bob's row) and the pairs both accepted."""

    alice: set[tuple[int, int]]
    bob: set[tuple[int, int]]

    @property
    def agreed(self) -> set[tuple[int, int]]:
        return self.alice & self.bob


def link_in_process(
    agreement: BloomAgreement,
    alice: Columns,
    bob: Columns,
    rngs: tuple[np.random.Generator, np.random.Generator],
) -> BloomLinkage:
    """Both parties' phases in one process, each training on its own records only."""
    filters = [agreement.encode(columns) for columns in (alice, bob)]
    models = [
        train(agreement, columns, rng)[0] for columns, rng in zip((alice, bob), rngs, strict=True)
    ]
    of_alice = match_filters(filters[0], filters[1], models[0], agreement.method).matches
    of_bob = match_filters(filters[1], filters[0], models[1], agreement.method).matches
    return BloomLinkage(
        set(zip(of_alice.rows_a.tolist(), of_alice.rows_b.tolist(), strict=True)),
        set(zip(of_bob.rows_b.tolist(), of_bob.rows_a.tolist(), strict=True)),
    )
