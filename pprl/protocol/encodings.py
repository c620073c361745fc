"""What a party encodes its records as for the peer, one object per variant.

An encoding decides what the agreement checks, the wire's shape, how records are smashed,
how the privacy gate attacks the release, how the party trains and matches, and the words
it prints. `ENCODINGS` is the registry that `[method] encoding` names; a new encoding is one
class here (or in its own module) and one line in the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pprl.protocol.data.combined import with_combined
from pprl.protocol.data.distances import Metric
from pprl.protocol.gate import Attack, audit_distances
from pprl.protocol.linkage import bloom_linkage, candidates, matching, plans
from pprl.protocol.model.classifier import Model
from pprl.protocol.own_training import fit, training_sample
from pprl.protocol.privacy import bloom_audit, noise
from pprl.protocol.privacy.audit import AuditReport
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.bloom import BloomParams, FilterDistance
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.release import released_width
from pprl.protocol.vectors.smashing import smash

if TYPE_CHECKING:
    from pprl.protocol.agreement import Agreement
    from pprl.protocol.method import MethodParams

Columns = Mapping[str, Sequence[str]]
Runner = Callable[[plans.Plan, Progress | None], plans.Outcome]


class Encoding(ABC):
    """One way of encoding records for the peer (see the module's docstring)."""

    name: ClassVar[str]
    # Whether it needs the key both parties hold ([privacy] bloom_key).
    keyed: ClassVar[bool] = False
    # Whether its release takes noise, which the gate then chooses.
    takes_noise: ClassVar[bool] = True
    # [method] keys that make no sense for it: refused rather than ignored.
    refused_keys: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        """Refuse method settings this encoding cannot honour (a ValueError that says why)."""

    def metric(self, agreement: Agreement) -> Metric | None:
        """The distance that replaces the kinds' own; None for the kinds' own."""
        return None

    @abstractmethod
    def wire_shape(
        self, mapping: Sequence[tuple[str, str]], method: MethodParams, reference_rows: int
    ) -> tuple[int, int]:
        """Values per record and bytes per value on the wire."""

    @abstractmethod
    def smash(
        self,
        agreement: Agreement,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        """The records encoded as agreed: the tensor the peer receives."""

    @abstractmethod
    def audit(self, agreement: Agreement, attack: Attack) -> AuditReport:
        """The peer's strongest attack on the attacked rows of a released tensor."""

    @abstractmethod
    def train(
        self, agreement: Agreement, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        """A classifier from the party's own records only, and its pair count."""

    @abstractmethod
    def match(
        self,
        agreement: Agreement,
        own: candidates.TensorRows,
        peer: candidates.TensorRows,
        model: Model,
        run: Runner,
        progress: Progress | None,
    ) -> matching.Matched:
        """The one-to-one pairs the party's own classifier accepts."""

    @abstractmethod
    def noise_words(self, agreement: Agreement) -> str:
        """What the release is and how much noise it carries, for the operator."""

    @abstractmethod
    def match_words(self, where: str) -> str:
        """What MATCH says it is doing; `where` the candidate blocks run."""


class Distances(Encoding):
    """Each value's edit distances to the reference set's values (the paper's smashing),
    released as distances or projected coordinates, with the agreed noise."""

    name = "reference"
    # One edit of one value moves each distance by at most this much, in this unit.
    unit: ClassVar[str] = "edits"

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        """Every distance setting applies; method_params checks each."""

    def change_per_edit(self, method: MethodParams) -> float:
        return 1.0

    def wire_shape(
        self, mapping: Sequence[tuple[str, str]], method: MethodParams, reference_rows: int
    ) -> tuple[int, int]:
        return len(mapping), released_width(method.release, reference_rows)

    def smash(
        self,
        agreement: Agreement,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        return smash(
            with_combined(attributes, [attribute for attribute, _ in agreement.mapping]),
            agreement.reference.columns,
            agreement.mapping,
            agreement.method.clamp,
            progress=progress,
            release=agreement.releases,
            rng=rng,
            kinds=agreement.kinds,
            scales=agreement.scales,
            key=key,
            labels=agreement.noise_labels() if key is not None else (),
            metric=agreement.metric,
        )

    def audit(self, agreement: Agreement, attack: Attack) -> AuditReport:
        return audit_distances(agreement, attack)

    def train(
        self, agreement: Agreement, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        return fit(agreement, training_sample(agreement, attributes, rng), rng)

    def match(
        self,
        agreement: Agreement,
        own: candidates.TensorRows,
        peer: candidates.TensorRows,
        model: Model,
        run: Runner,
        progress: Progress | None,
    ) -> matching.Matched:
        """Algorithm 3 on candidates: the pairs scoring all pairs would keep (best `top_k`
        per own row), then the agreed one-to-one assignment."""
        selection = matching.Selection(model, agreement.method.top_k)
        outcome = candidates.accepted_pairs(
            own, peer, selection, run=run, progress=progress, standardise=agreement.standardise
        )
        assigned = matching.one_to_one(outcome.matches, agreement.method.assignment)
        return matching.Matched(assigned, outcome.candidates)

    def match_words(self, where: str) -> str:
        return f"grouping distinct vectors; blocks run {where}"

    def noise_words(self, agreement: Agreement) -> str:
        """sigma, its units, tau and epsilon, over the coordinates one attribute spans."""
        coordinates, change, unit = agreement.sensitivity
        return noise.describe(
            agreement.method.noise_sigma, agreement.sigma0, coordinates, unit=unit, change=change
        )


class FilterDistances(Distances):
    """The records' keyed Bloom filters' Hamming distances to the reference values' filters,
    released (and noised) as the reference release's distances are."""

    name = "bloom-distances"
    keyed = True
    unit = "bits"

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        _filter_params(settings)

    def metric(self, agreement: Agreement) -> Metric | None:
        assert agreement.bloom_key is not None  # the agreement refuses it without a key
        return FilterDistance(agreement.bloom_key, agreement.method.bloom)

    def change_per_edit(self, method: MethodParams) -> float:
        """One edit removes and adds at most q q-grams of `hashes` bits each."""
        return 2.0 * method.bloom_q * method.bloom_hashes


class Filters(Encoding):
    """Keyed q-gram Bloom filters, one per mapped attribute, sent as they are: no noise, and
    a peer who holds the key can attack them with a dictionary."""

    name = "bloom"
    keyed = True
    takes_noise = False
    refused_keys = ("noise_sigma", "attack_success", "feature", "release", "soft_top_k")

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        if noise_sigma:
            raise ValueError(
                'encoding "bloom" sends the filters themselves, which take no noise '
                '(noise_sigma must be 0); encoding "bloom-distances" releases their noisy '
                "distances to the reference set's filters instead"
            )
        if soft_top_k:
            raise ValueError(
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
        agreement: Agreement,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        return agreement.bloom_agreement().encode(attributes)

    def audit(self, agreement: Agreement, attack: Attack) -> AuditReport:
        """The peer holds the key: it encodes the dictionary as this party encoded its names."""
        filters = agreement.bloom_agreement()
        return bloom_audit.audit_filters(
            filters,
            attack.tensor[attack.rows],
            with_combined(attack.truth, filters.attributes),
            attack.dictionary.names,
        )

    def train(
        self, agreement: Agreement, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        return bloom_linkage.train(agreement.bloom_agreement(), attributes, rng)

    def match(
        self,
        agreement: Agreement,
        own: candidates.TensorRows,
        peer: candidates.TensorRows,
        model: Model,
        run: Runner,
        progress: Progress | None,
    ) -> matching.Matched:
        """The candidates a linear model's exact bound allows, or every pair."""
        return bloom_linkage.match_filters(
            np.asarray(own[0 : own.shape[0]]),
            np.asarray(peer[0 : peer.shape[0]]),
            model,
            agreement.method,
            progress=progress,
        )

    def match_words(self, where: str) -> str:
        return "comparing distinct filters for candidates"

    def noise_words(self, agreement: Agreement) -> str:
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


ENCODINGS: dict[str, Encoding] = {
    encoding.name: encoding for encoding in (Distances(), Filters(), FilterDistances())
}
DEFAULT_ENCODING = Distances.name


def encoding_named(name: str) -> Encoding:
    """The registry's entry, or a ValueError that lists the names."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown encoding {name!r}; expected one of {', '.join(ENCODINGS)}"
        ) from None
