"""One party's side of Algorithm 1 on plain arrays: agree, release, train, match, link.

This is the method once. The daemon wraps these functions with storage, the wire and
progress (pprl.party.work); the benchmarks call them in one process for both parties
(`link_in_process`). Nothing here reads a file or touches the network.

Rows of a released tensor are in a secret random order (`Released.order`), so the tensor's
row order tells the peer nothing about the order, often alphabetical, of the records file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from pprl.protocol import (
    bloom_audit,
    bloom_linkage,
    candidates,
    classifier,
    matching,
    noise,
    plans,
    soft_links,
    training,
)
from pprl.protocol.audit import (
    ATTACKS,
    EXACT_ATTACKS,
    AuditReport,
    Dictionary,
    audit_tensor,
    vector_counts,
)
from pprl.protocol.bloom import BloomKey, FilterDistance
from pprl.protocol.combined import base_names, combined_kinds, is_initial, with_combined
from pprl.protocol.features import Standardise
from pprl.protocol.keyed_noise import NoiseKey
from pprl.protocol.kinds import SCALED_KINDS, check_scale
from pprl.protocol.method import (
    MethodParams,
    agreement_description,
    description_digest,
    reference_sha256,
)
from pprl.protocol.noise_choice import NoiseChoice, choose_sigma
from pprl.protocol.population_attack import Population, attack_population
from pprl.protocol.progress import Progress
from pprl.protocol.randomness import GATE, RELEASE, SHUFFLE, TRAINING, Randomness
from pprl.protocol.reference import MappingEntry, ReferenceSet, typed_reference
from pprl.protocol.release import (
    ArrayStore,
    ProjectedRelease,
    ReferenceStatistics,
    Release,
    length_constants,
    projected_release,
    reference_statistics,
    released_width,
    standardise,
)
from pprl.protocol.smashing import Encoder, smash

Columns = Mapping[str, Sequence[str]]
Runner = Callable[[plans.Plan, Progress | None], plans.Outcome]


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
        if method.keyed and bloom_key is None:
            raise ValueError(f"encoding {method.encoding!r} needs the key both parties hold")
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
        if self.method.feature == "projected-cosine":
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

    @property
    def bloom(self) -> bool:
        """Whether the filters themselves are sent."""
        return self.method.encoding == "bloom"

    @cached_property
    def metric(self) -> FilterDistance | None:
        """The filters' Hamming distance when it replaces the edit distance
        ("bloom-distances"); None for the kinds' own distances."""
        if self.method.encoding != "bloom-distances":
            return None
        assert self.bloom_key is not None  # __init__ refuses it without a key
        return FilterDistance(self.bloom_key, self.method.bloom)

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
    def entries(self) -> int:
        """Values per record on the wire."""
        return len(self.bloom_attributes) if self.bloom else len(self.mapping)

    @property
    def width(self) -> int:
        """Bytes per value on the wire: R distances, k projected coordinates, or a filter."""
        if self.bloom:
            return self.method.bloom_bits // 8
        return released_width(self.method.release, len(self.reference))

    @cached_property
    def standardise(self) -> Standardise | None:
        if self.method.release == "projected":
            # Codes read back into projected coordinates: (code - centre) / scale.
            grids = [release for release in self.releases if isinstance(release, ProjectedRelease)]
            centre = np.stack([-grid.low / grid.step for grid in grids]).astype(np.float32)
            scale = np.stack([1.0 / grid.step for grid in grids]).astype(np.float32)
            return Standardise(centre, scale, None, self._length_constants())
        if self.method.feature != "projected-cosine":
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

    def smash(
        self,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None = None,
        key: NoiseKey | None = None,
    ) -> np.ndarray:
        """Records smashed against the reference set as agreed, with the agreed noise: keyed
        by `key` when given (the same release in every run), else drawn from `rng`. Under
        the Bloom encoding, the records' filters."""
        if self.bloom:
            return self.bloom_agreement().encode(attributes)
        return smash(
            with_combined(attributes, [attribute for attribute, _ in self.mapping]),
            self.reference.columns,
            self.mapping,
            self.method.clamp,
            progress=progress,
            release=self.releases,
            rng=rng,
            kinds=self.kinds,
            scales=self.scales,
            key=key,
            labels=self.noise_labels() if key is not None else (),
            metric=self.metric,
        )

    def noise_words(self) -> str:
        """sigma, its edits, tau and epsilon, over the coordinates one attribute spans."""
        if self.bloom:
            return (
                f"Bloom filters of {self.method.bloom_bits} bits, {self.method.bloom_hashes} "
                f"hashes per {self.method.bloom_q}-gram, no noise"
            )
        coordinates, change, unit = self.sensitivity
        return noise.describe(
            self.method.noise_sigma, self.sigma0, coordinates, unit=unit, change=change
        )

    @property
    def sensitivity(self) -> tuple[int, float, str]:
        """What one edit of one value moves: the released coordinates one attribute spans,
        by how much each at most, and in what unit (edits, or bits between Bloom filters,
        where one edit removes and adds at most q q-grams of `hashes` bits each)."""
        per_attribute = max(sum(1 for a, _ in self.mapping if a == b) for b, _ in self.mapping)
        coordinates = per_attribute * len(self.reference)
        if self.metric is None:
            return coordinates, 1.0, "edits"
        return coordinates, 2.0 * self.method.bloom_q * self.method.bloom_hashes, "bits"


def quantity_scales(kinds: Mapping[str, str], scales: Mapping[str, float]) -> dict[str, float]:
    """The scale of every quantity and coordinates attribute among `kinds` (for coordinates in
    metres, the stated tolerance), refusing one without a scale, and a scale given for another
    kind, a mistake better told than ignored."""
    for attribute, kind in kinds.items():
        if kind in SCALED_KINDS and attribute not in scales:
            article = "a quantity" if kind == "quantity" else kind
            raise ValueError(f"attribute {attribute!r} is {article} and needs a scale")
    for attribute, scale in scales.items():
        if kinds.get(attribute, "quantity") not in SCALED_KINDS:
            raise ValueError(f"attribute {attribute!r} has a scale but is a {kinds[attribute]}")
        check_scale(attribute, scale)
    return {a: float(scales[a]) for a, kind in kinds.items() if kind in SCALED_KINDS}


@dataclass(frozen=True)
class Released:
    """A party's released tensor, its rows in the secret order: row t is record order[t]."""

    order: np.ndarray
    tensor: np.ndarray


def record_pairs(matches: matching.Matches, own: Released, peer: Released) -> set[tuple[int, int]]:
    """Pairs of released rows (own row, peer row) as pairs of the records each side gave."""
    rows_own, rows_peer = own.order[matches.rows_a], peer.order[matches.rows_b]
    return set(zip(rows_own.tolist(), rows_peer.tolist(), strict=True))


def release(
    agreement: Agreement,
    attributes: Columns,
    randomness: Randomness,
    progress: Progress | None = None,
) -> Released:
    """Shuffle the records, then smash them into released codes (with the agreed noise, keyed
    when the party has a noise key)."""
    n = len(next(iter(attributes.values()), []))
    order = randomness.generator(SHUFFLE).permutation(n)
    shuffled = {name: [values[i] for i in order] for name, values in attributes.items()}
    tensor = agreement.smash(
        shuffled, randomness.generator(RELEASE), progress, key=randomness.noise_key
    )
    return Released(order, tensor)


def audit_release(
    agreement: Agreement,
    released: Released,
    attributes: Columns,
    dictionary: Dictionary,
    size: int,
    randomness: Randomness,
    measure: str = "every-name",
    population: Population | None = None,
) -> AuditReport:
    """The peer's dictionary attacks on `size` sampled rows of a release (the privacy gate).

    The dictionary holds names, so only attributes of kind name are attacked
    (`unaudited_attributes` lists the others; a report must say they were not measured)."""
    rows = gate_sample(len(released.order), size, randomness)
    return audit_rows(
        agreement, released, rows, attributes, dictionary, measure, population=population
    )


def audit_rows(
    agreement: Agreement,
    released: Released,
    rows: np.ndarray,
    attributes: Columns,
    dictionary: Dictionary,
    measure: str = "every-name",
    counts: tuple[Mapping[str, np.ndarray], int] | None = None,
    stop_above: float | None = None,
    population: Population | None = None,
) -> AuditReport:
    """The peer's dictionary attacks on the given rows of a release: the report of the
    attacker (audit.ATTACKS) that re-identifies most by `measure`, with every attacker's
    rate (without noise, the uniform one and the prior breaking its ties). `counts` gives,
    per attribute, how often each row's vector occurs in the whole release and that
    release's size, when `released` holds only a sample of it. With `stop_above`, only the
    rate by `measure` is wanted (no per-attribute figures: audit.audit_tensor's `only`), the
    attackers run strongest-first (measured: counts, then prior) and the first whose rate
    exceeds it is returned: enough to know a release fails (its rate is then a lower bound
    of the strongest's), at a fraction of the cost. With a `population` list (the peer's list
    of people), the attacker who combines a record's attributes (population_attack) runs too,
    first when `stop_above` is given."""
    truth = {name: [values[released.order[t]] for t in rows] for name, values in attributes.items()}
    if agreement.bloom:
        # The peer holds the key: it encodes the dictionary as this party encoded its names.
        return bloom_audit.audit_filters(
            agreement.bloom_agreement(),
            released.tensor[rows],
            with_combined(truth, agreement.bloom_attributes),
            dictionary.names,
        )
    entries = attacked_entries(agreement)
    if not entries:
        return AuditReport(len(rows), [], 0.0, 0.0, 0.0)
    dictionary = dictionary.under(agreement.metric)
    mapping = [agreement.mapping[m] for m in entries]
    whole = released.tensor[:, entries, :]
    releases = [agreement.releases[m] for m in entries]
    attackers: tuple[str, ...] = ATTACKS if agreement.release.noise > 0 else EXACT_ATTACKS
    if stop_above is not None:
        attackers = attackers[::-1]
    if counts is None:
        everywhere = vector_counts(whole, mapping)
        counts = ({a: c[rows] for a, c in everywhere.items()}, len(whole))
    reports = []
    if population is not None:
        report = attack_population(
            whole[rows],
            truth,
            mapping,
            releases,
            agreement.reference.columns,
            population,
            metric=agreement.metric,
        )
        reports.append(report)
        if stop_above is not None and report.rate(measure) > stop_above:
            attackers = ()
    for attacker in attackers:
        report = audit_tensor(
            whole[rows],
            truth,
            mapping,
            releases,
            dictionary,
            attacker=attacker,
            counts=counts[0],
            records=counts[1],
            only=None if stop_above is None else measure,
        )
        reports.append(report)
        if stop_above is not None and report.rate(measure) > stop_above:
            break
    rates = {report.attack: report.rate(measure) for report in reports}
    strongest = max(reports, key=lambda report: report.rate(measure))
    return dataclasses.replace(strongest, by_attack=rates)


def gate_sample(n: int, size: int, randomness: Randomness) -> np.ndarray:
    """Sorted indices of the records a gate attacks."""
    return np.sort(randomness.generator(GATE).choice(n, min(size, n), replace=False))


def calibrate_noise(
    agreement: Agreement,
    attributes: Columns,
    records: np.ndarray,
    dictionary: Dictionary,
    randomness: Randomness,
    limit: float,
    measure: str,
    hint: float | None = None,
    population: Population | None = None,
) -> NoiseChoice:
    """The smallest noise at which the gate's attack on `records` (indices into the columns)
    stays within `limit`, each candidate released as the party will release it; `hint` is
    where the search starts (noise_choice.choose_sigma). A candidate that fails is known to
    fail once one attacker exceeds the limit, so its recorded rate may be a lower bound."""
    sample = {name: [values[i] for i in records] for name, values in attributes.items()}
    identity = np.arange(len(records))
    agreement.share_statistics()
    # What the peer counts in the whole release: a distinct value has one vector, whatever
    # the noise, so the counts are those of the values among all the records.
    counts = (
        value_counts(attributes, agreement.mapping, records),
        len(next(iter(attributes.values()))),
    )

    def rate(sigma: float) -> float:
        candidate = agreement.with_noise(sigma)
        tensor = candidate.smash(sample, randomness.generator(RELEASE), key=randomness.noise_key)
        released = Released(identity, tensor)
        report = audit_rows(
            candidate,
            released,
            identity,
            sample,
            dictionary,
            measure,
            counts,
            stop_above=limit,
            population=population,
        )
        return report.rate(measure)

    return choose_sigma(rate, limit, hint=hint)


def value_counts(
    attributes: Columns, mapping: Sequence[MappingEntry], rows: np.ndarray
) -> dict[str, np.ndarray]:
    """Per mapped attribute, how many of all the records share the value of each of `rows`."""
    out = {}
    for attribute in dict.fromkeys(a for a, _ in mapping):
        values = with_combined(attributes, [attribute])[attribute]
        tally: dict[str, int] = {}
        for value in values:
            tally[value] = tally.get(value, 0) + 1
        out[attribute] = np.array([tally[values[i]] for i in rows], dtype=np.int64)
    return out


def _attacked(agreement: Agreement, attribute: str) -> bool:
    """Whether the name-dictionary attack judges this attribute: names, but not an initial,
    which is one of 26 letters and taken as read by the peer."""
    return agreement.kinds[attribute] == "name" and not is_initial(attribute)


def attacked_entries(agreement: Agreement) -> list[int]:
    """The mapping entries the name-dictionary attack judges."""
    return [m for m, (a, _) in enumerate(agreement.mapping) if _attacked(agreement, a)]


def unaudited_attributes(agreement: Agreement) -> list[str]:
    """Attributes the name-dictionary attack cannot judge, with their kinds."""
    return [
        f"{a} ({'initial, readable' if is_initial(a) else kind})"
        for a, kind in agreement.kinds.items()
        if not _attacked(agreement, a)
    ]


@dataclass(frozen=True)
class TrainingSample:
    """Own records, their corrupted copies, and both released as the party releases its
    tensor (with independent noise), so the model learns the features it will meet."""

    own: dict[str, list[str]]
    corrupted: dict[str, list[str]]
    own_tensor: np.ndarray
    corrupted_tensor: np.ndarray


def training_sample(
    agreement: Agreement,
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
    agreement: Agreement,
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
    agreement: Agreement,
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
        x, y, method.classifier, method.c, method.class_weight, method.saturation
    )
    return model, len(y)


def train(
    agreement: Agreement, attributes: Columns, randomness: Randomness
) -> tuple[classifier.Model, int]:
    """A party's classifier from its own records only (Algorithm 2), and its pair count."""
    rng = randomness.generator(TRAINING)
    if agreement.bloom:
        return bloom_linkage.train(agreement.bloom_agreement(), attributes, rng)
    return fit(agreement, training_sample(agreement, attributes, rng), rng)


@dataclass(frozen=True)
class Matched:
    """Accepted pairs (own row, peer row, score) and how many pairs were scored (None: all)."""

    matches: matching.Matches
    scored: int | None


def match(
    agreement: Agreement,
    own: candidates.TensorRows,
    peer: candidates.TensorRows,
    model: classifier.Model,
    *,
    run: Runner = plans.run_here,
    progress: Progress | None = None,
) -> Matched:
    """Algorithm 3 on candidates: the pairs scoring all pairs would keep (best `top_k` per own
    row), then the agreed one-to-one assignment. `run` executes the candidate blocks (here, or on
    the party's own cluster)."""
    if agreement.bloom:
        # The candidates a linear model's exact bound allows, or every pair.
        matched = bloom_linkage.match_filters(
            np.asarray(own[0 : own.shape[0]]),
            np.asarray(peer[0 : peer.shape[0]]),
            model,
            agreement.method,
            progress=progress,
        )
        return Matched(matched.matches, matched.scored)
    selection = matching.Selection(model, agreement.method.top_k)
    outcome = candidates.accepted_pairs(
        own, peer, selection, run=run, progress=progress, standardise=agreement.standardise
    )
    assigned = matching.one_to_one(outcome.matches, agreement.method.assignment)
    return Matched(assigned, outcome.candidates)


def soft_match(
    agreement: Agreement,
    own: candidates.TensorRows,
    peer: candidates.TensorRows,
    model: classifier.Model,
    top_k: int,
    *,
    run: Runner = plans.run_here,
    progress: Progress | None = None,
) -> matching.Matches:
    """Per own row its `top_k` best-scoring peer rows, whatever their score, best first
    (soft_links). The candidate bounds only hold above a decision of 0, so every pair is
    scored: by one product for a linear model without caps, else block by block."""
    soft_links.check_top_k(top_k, peer.shape[0])
    selection = matching.Selection(model, top_k, "a", threshold=-np.inf)
    outcome = candidates.accepted_pairs(
        own, peer, selection, run=run, progress=progress, standardise=agreement.standardise
    )
    return outcome.matches


@dataclass(frozen=True)
class PartyLinkage:
    """One party's side of an in-process run; pairs are (own record, peer record) indices in
    the order of the records given."""

    released: Released
    model: classifier.Model
    matched: Matched
    pairs: set[tuple[int, int]]


@dataclass(frozen=True)
class Linkage:
    """Both parties' accepted pairs and the agreed linkage, as (Alice index, Bob index)."""

    alice: PartyLinkage
    bob: PartyLinkage

    @property
    def agreed(self) -> set[tuple[int, int]]:
        return self.alice.pairs & {(a, b) for b, a in self.bob.pairs}


def link_in_process(
    agreement: Agreement,
    alice: Columns,
    bob: Columns,
    randomness: tuple[Randomness, Randomness],
) -> Linkage:
    """Both parties' phases in one process, as two daemons run them: the same draws for the
    same seeds, so the same pairs."""
    parties = [(alice, randomness[0]), (bob, randomness[1])]
    released = [release(agreement, records, rand) for records, rand in parties]
    models = [train(agreement, records, rand)[0] for records, rand in parties]
    sides = []
    for own in range(2):
        peer = 1 - own
        found = match(agreement, released[own].tensor, released[peer].tensor, models[own])
        pairs = record_pairs(found.matches, released[own], released[peer])
        sides.append(PartyLinkage(released[own], models[own], found, pairs))
    return Linkage(*sides)
