"""What AGREE fixes for every later phase: the reference set typed by the mapped kinds, the
mapping, the method with its encoding, the noise in edits and the features' centring and
basis, and the description both parties' digests are taken of."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from pprl.protocol.data.combined import combined_kinds, with_combined
from pprl.protocol.data.distances import Metric
from pprl.protocol.data.kinds import KINDS, SCALED_KINDS, check_scale
from pprl.protocol.data.reference import MappingEntry, ReferenceSet, typed_reference
from pprl.protocol.encodings.distances import Distances
from pprl.protocol.encodings.registry import encoding_named
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage import bloom_linkage
from pprl.protocol.method import agreement_description, description_digest, reference_sha256
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import PROJECTED, RAW_JOINS, Standardise
from pprl.protocol.privacy import noise
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.bloom import BloomKey
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.release import (
    ArrayStore,
    ProjectedRelease,
    ReferenceStatistics,
    Release,
    length_constants,
    projected_release,
    raw_joins,
    reference_statistics,
    standardise,
)
from pprl.protocol.vectors.smashing import Encoder, Entry

Columns = Mapping[str, Sequence[str]]


class Agreement:
    """What AGREE fixes for every later phase: reference set, mapping and method, with the
    noise resolved into edits and the features' centring and basis. The reference set's
    statistics (an R x R distance table per column) are computed on first use only, and the
    SVD that projected features need waits for the first phase that uses the features, so
    AGREE and `pprl audit` never pay for it."""

    def __init__(
        self,
        reference: ReferenceSet,
        mapping: Sequence[MappingEntry],
        method: MethodParams,
        kinds: Mapping[str, str] | None = None,
        scales: Mapping[str, float] | None = None,
        store: ArrayStore | None = None,
        bloom_key: BloomKey | None = None,
    ) -> None:
        self.mapping = tuple(mapping)
        self.method = method
        self._given = (reference, dict(kinds or {}), dict(scales or {}))
        self.encoding = encoding_named(method.encoding)
        if self.encoding.keyed and bloom_key is None:
            raise SettingError(f"encoding {method.encoding!r} needs the key both parties hold")
        self.bloom_key = bloom_key
        # Keeps the reference set's figures (statistics, principal directions) between runs.
        self._store = store
        # Each mapped attribute's kind (default: name), and each quantity's and coordinates'
        # scale; both parties must agree on them.
        self.kinds = combined_kinds(self.mapping, kinds or {})
        self.scales = quantity_scales(self.kinds, scales or {})
        typed = typed_reference(reference, self.mapping, self.kinds, self.scales)
        columns = with_combined(typed.columns, [column for _, column in self.mapping])
        lists = {name: list(values) for name, values in columns.items()}
        self.reference = ReferenceSet(typed.path, lists, typed.lines)

    @classmethod
    def resolve(
        cls,
        reference: ReferenceSet,
        mapping: Sequence[MappingEntry],
        method: MethodParams,
        attack_success: float | None = None,
        kinds: Mapping[str, str] | None = None,
        scales: Mapping[str, float] | None = None,
        store: ArrayStore | None = None,
        bloom_key: BloomKey | None = None,
    ) -> Agreement:
        """The agreement, with sigma solved from a target attack success when one is given
        (FedSim appendix A); raises noise.CalibrationError when no sigma reaches it."""
        agreement = cls(reference, mapping, method, kinds, scales, store, bloom_key)
        if attack_success is None:
            return agreement
        return agreement.with_noise(noise.sigma_for_success(attack_success, agreement.sigma0))

    def with_noise(self, sigma: float) -> Agreement:
        """The same agreement at another noise scale, reusing the reference statistics."""
        reference, kinds, scales = self._given
        noisy = dataclasses.replace(self.method, noise_sigma=float(sigma))
        other = Agreement(
            reference, self.mapping, noisy, kinds, scales, self._store, self.bloom_key
        )
        for cached in ("statistics", "_components"):  # same reference set, same figures
            if cached in self.__dict__:
                other.__dict__[cached] = self.__dict__[cached]
        return other

    def share_statistics(self) -> None:
        """Compute now the reference figures that do not depend on the noise (the distance
        statistics, and the SVD projected features need), so that every agreement derived
        from this one by with_noise shares them instead of computing them again."""
        computed = [self.statistics]
        if self.method.feature in PROJECTED:
            computed.append(self._components)

    @cached_property
    def statistics(self) -> ReferenceStatistics:
        """Centre, spread and sigma0; without the principal components."""
        return reference_statistics(
            self.reference.columns,
            self.mapping,
            with_components=False,
            kinds=self.kinds,
            scales=self.scales,
            store=self._store,
            metric=self.metric,
        )

    @property
    def sigma0(self) -> float:
        return self.statistics.sigma0

    @cached_property
    def release(self) -> Release:
        """The noise in edits; the distances' byte grid when the release sends distances."""
        return Release(noise=self.method.noise_sigma * self.sigma0)

    @cached_property
    def _components(self) -> ReferenceStatistics:
        return reference_statistics(
            self.reference.columns,
            self.mapping,
            kinds=self.kinds,
            scales=self.scales,
            store=self._store,
            metric=self.metric,
            kept=self.method.projected_components,
        )

    @cached_property
    def releases(self) -> tuple[Encoder, ...]:
        """What encodes each mapping entry's values for the peer."""
        if self.method.release != "projected":
            return (self.release,) * len(self.mapping)
        statistics, noise = self._components, self.release.noise
        by_column = {
            column: projected_release(
                noise,
                statistics.centre[column],
                statistics.components[column],
                statistics.projections[column],
            )
            for _, column in self.mapping
        }
        return tuple(by_column[column] for _, column in self.mapping)

    @cached_property
    def metric(self) -> Metric | None:
        """The encoding's distance when it replaces the kinds' own (the filters' Hamming
        distance); None for the kinds' own distances."""
        return self.encoding.metric(self)

    @property
    def bloom_attributes(self) -> tuple[str, ...]:
        """One filter per mapped attribute (the reference columns play no part)."""
        return tuple(dict.fromkeys(attribute for attribute, _ in self.mapping))

    def bloom_agreement(self) -> bloom_linkage.BloomAgreement:
        """What the Bloom release's own functions take."""
        assert self.bloom_key is not None  # __init__ refuses bloom without a key
        return bloom_linkage.BloomAgreement(
            self.bloom_key,
            self.method.bloom,
            self.bloom_attributes,
            self.kinds,
            self.method,
            self.scales,
        )

    @property
    def width(self) -> int:
        """Bytes per value on the wire: R distances, k projected coordinates, or a filter."""
        return self.encoding.wire_shape(self.mapping, self.method, len(self.reference))[1]

    @cached_property
    def standardise(self) -> Standardise | None:
        if self.method.release == "projected":
            # Codes read back into projected coordinates: (code - centre) / scale.
            grids = [release for release in self.releases if isinstance(release, ProjectedRelease)]
            centre = np.stack([-grid.low / grid.step for grid in grids]).astype(np.float32)
            scale = np.stack([1.0 / grid.step for grid in grids]).astype(np.float32)
            constant = self._length_constants()
            if self.method.feature == RAW_JOINS:
                centre, constant = raw_joins(self.mapping, grids, centre, constant)
            return Standardise(centre, scale, None, constant)
        if self.method.feature not in PROJECTED:
            return standardise(self.statistics, self.mapping, self.release, self.method.feature)
        return standardise(
            self._components,
            self.mapping,
            self.release,
            self.method.feature,
            self._length_constants(),
        )

    def _length_constants(self) -> np.ndarray | None:
        """The projected features' constant coordinates (release.length_constants): under
        noise, 1 - cosine then also reads how far apart the two vectors are."""
        return length_constants(self._components, self.mapping, self.release.noise)

    def _key_commitment(self) -> str | None:
        return None if self.bloom_key is None else self.bloom_key.commitment()

    def description(self) -> dict[str, Any]:
        return agreement_description(
            self.reference,
            self.mapping,
            self.method,
            self.kinds,
            self.scales,
            self._key_commitment(),
        )

    def digest(self) -> str:
        return description_digest(self.description())

    def noise_labels(self) -> list[str]:
        """Per mapping entry, everything its keyed noise must differ by: the reference
        values, the entry and how it is compared, the noise and what is released."""
        shared = f"{reference_sha256(self.reference)}|{self.release.noise!r}|{self.method.release}"
        if self.metric is not None:  # other distances: draws unrelated to the edit release's
            shared += f"|{self.metric.identity}"
        return [
            f"{shared}|{attribute}->{column}|{self.kinds[attribute]}|{self.scales.get(attribute)}"
            for attribute, column in self.mapping
        ]

    def entries(self, keyed: bool = False) -> tuple[Entry, ...]:
        """Each mapping entry as it is smashed: its kind, scale, release and distance, and,
        for keyed noise, its label."""
        labels = self.noise_labels() if keyed else [""] * len(self.mapping)
        return tuple(
            Entry(
                attribute,
                column,
                KINDS[self.kinds[attribute]],
                self.scales.get(attribute),
                release,
                label,
                self.metric,
            )
            for (attribute, column), release, label in zip(
                self.mapping, self.releases, labels, strict=True
            )
        )

    def smash(
        self,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None = None,
        key: NoiseKey | None = None,
    ) -> np.ndarray:
        """Records encoded as agreed, with the agreed noise: keyed by `key` when given (the
        same release in every run), else drawn from `rng`."""
        return self.encoding.smash(self, attributes, rng, progress, key)

    def noise_words(self) -> str:
        """What is released and its noise, in the encoding's words."""
        return self.encoding.noise_words(self)

    @property
    def sensitivity(self) -> tuple[int, float, str]:
        """What one edit of one value moves: the released coordinates one attribute spans,
        by how much each at most, and in what unit (edits, or bits between Bloom filters,
        where one edit removes and adds at most q q-grams of `hashes` bits each)."""
        per_attribute = max(sum(1 for a, _ in self.mapping if a == b) for b, _ in self.mapping)
        coordinates = per_attribute * len(self.reference)
        if not isinstance(self.encoding, Distances):
            raise TypeError(f"encoding {self.encoding.name!r} releases no distances")
        return coordinates, self.encoding.change_per_edit(self.method), self.encoding.unit


def quantity_scales(kinds: Mapping[str, str], scales: Mapping[str, float]) -> dict[str, float]:
    """The scale of every quantity and coordinates attribute among `kinds` (for coordinates in
    metres, the stated tolerance), refusing one without a scale, and a scale given for another
    kind, a mistake better told than ignored."""
    for attribute, kind in kinds.items():
        if KINDS[kind].scaled and attribute not in scales:
            raise SettingError(
                f"attribute {attribute!r} is {KINDS[kind].described} and needs a scale"
            )
    for attribute, scale in scales.items():
        if kinds.get(attribute, "quantity") not in SCALED_KINDS:
            raise SettingError(f"attribute {attribute!r} has a scale but is a {kinds[attribute]}")
        check_scale(attribute, scale)
    return {a: float(scales[a]) for a, kind in kinds.items() if kind in SCALED_KINDS}
