"""Keyed q-gram Bloom filters: sent as they are, or as noisy distances to the reference set's
filters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.combined import with_combined
from pprl.protocol.data.distances import Metric
from pprl.protocol.encodings.base import Columns, Encoding, Runner
from pprl.protocol.encodings.distances import Distances
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage import bloom_linkage, candidates, matching
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.classifier import Model
from pprl.protocol.privacy import bloom_audit
from pprl.protocol.privacy.audit import AuditReport
from pprl.protocol.progress import Progress
from pprl.protocol.release_attacks import Attack
from pprl.protocol.vectors.bloom import BloomParams, FilterDistance
from pprl.protocol.vectors.keyed_noise import NoiseKey


class FilterDistances(Distances):
    """The records' keyed Bloom filters' Hamming distances to the reference values' filters,
    released (and noised) as the reference release's distances are."""

    name = "bloom-distances"
    unit = "bits"

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        _filter_params(settings)

    def metric(self, agreement: AgreementView) -> Metric | None:
        assert agreement.bloom_key is not None  # the agreement refuses it without a key
        return FilterDistance(agreement.bloom_key, agreement.method.bloom)

    def change_per_edit(self, method: MethodParams) -> float:
        """One edit removes and adds at most q q-grams of `hashes` bits each."""
        return 2.0 * method.bloom_q * method.bloom_hashes


class Filters(Encoding):
    """Keyed q-gram Bloom filters, one per mapped attribute, sent as they are: no noise, and
    a peer who holds the key can attack them with a dictionary."""

    name = "bloom"
    # Its classifier scores the filters' similarities with one linear decision (bloom_linkage).
    fixed: ClassVar[Mapping[str, Any]] = {"mover_odds": 0.0}
    takes_noise = False
    refused_keys = ("noise_sigma", "attack_success", "feature", "release", "soft_top_k")

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        if noise_sigma:
            raise SettingError(
                'encoding "bloom" sends the filters themselves, which take no noise '
                '(noise_sigma must be 0); encoding "bloom-distances" releases their noisy '
                "distances to the reference set's filters instead"
            )
        if soft_top_k:
            raise SettingError(
                'encoding "bloom" does not write soft links (soft_top_k must be 0); '
                '"bloom-distances" does'
            )
        _filter_params(settings)

    def wire_shape(
        self, mapping: Sequence[tuple[str, str]], method: MethodParams, reference_rows: int
    ) -> tuple[int, int]:
        """One filter per mapped attribute; the reference columns play no part."""
        return len(dict.fromkeys(attribute for attribute, _ in mapping)), method.bloom_bits // 8

    def smash(
        self,
        agreement: AgreementView,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        return agreement.bloom_agreement().encode(attributes)

    def audit(self, agreement: AgreementView, attack: Attack) -> AuditReport:
        """The peer holds the key: it encodes the dictionary as this party encoded its names."""
        filters = agreement.bloom_agreement()
        return bloom_audit.audit_filters(
            filters,
            attack.tensor[attack.rows],
            with_combined(attack.truth, filters.attributes),
            attack.dictionary.names,
        )

    def train(
        self, agreement: AgreementView, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        return bloom_linkage.train(agreement.bloom_agreement(), attributes, rng)

    def match(
        self,
        agreement: AgreementView,
        own: candidates.TensorRows,
        peer: candidates.TensorRows,
        model: Model,
        run: Runner,
        progress: Progress | None,
        threshold: float = 0.0,
    ) -> matching.Matched:
        """The candidates a linear model's exact bound allows, or every pair (above 0: the
        filters take no threshold of a party's own)."""
        return bloom_linkage.match_filters(
            np.asarray(own[0 : own.shape[0]]),
            np.asarray(peer[0 : peer.shape[0]]),
            model,
            agreement.method,
            progress=progress,
        )

    def match_words(self, where: str) -> str:
        return "comparing distinct filters for candidates"

    def noise_words(self, agreement: AgreementView) -> str:
        method = agreement.method
        return (
            f"Bloom filters of {method.bloom_bits} bits, {method.bloom_hashes} hashes per "
            f"{method.bloom_q}-gram, no noise"
        )


def _filter_params(settings: Mapping[str, Any]) -> None:
    """The filters' settings, refused when out of range (BloomParams says why)."""
    BloomParams(
        settings.get("bloom_bits", BloomParams.bits),
        settings.get("bloom_hashes", BloomParams.hashes),
        settings.get("bloom_q", BloomParams.q),
    )
