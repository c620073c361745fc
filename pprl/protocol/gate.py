"""The privacy gate: the peer's dictionary attacks on a party's release, and the smallest
noise at which they stay within the limit. What each encoding's attack is lives with the
encoding (pprl.protocol.encodings); this module samples the rows, runs the attackers the
distance releases share, and searches the noise."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pprl.protocol.data.combined import (
    entries_by_attribute,
    is_combined,
    is_initial,
    parts,
    with_combined,
)
from pprl.protocol.data.kinds import DEFAULT_KIND, KINDS
from pprl.protocol.data.reference import MappingEntry
from pprl.protocol.linkage.released import Released
from pprl.protocol.privacy.audit import (
    ATTACKS,
    EXACT_ATTACKS,
    AuditReport,
    Dictionary,
    audit_tensor,
    vector_counts,
)
from pprl.protocol.privacy.joint_attack import Joined, attack_jointly, joinable
from pprl.protocol.privacy.noise_choice import NoiseChoice, choose_sigma
from pprl.protocol.privacy.population_attack import Population, attack_population
from pprl.protocol.vectors.randomness import GATE, RELEASE, Randomness
from pprl.protocol.vectors.release import ProjectedRelease

if TYPE_CHECKING:
    from pprl.protocol.agreement import Agreement

Columns = Mapping[str, Sequence[str]]
# Per attacked attribute, how often each attacked row's vector occurs in the whole release,
# and that release's size.
Counts = tuple[Mapping[str, np.ndarray], int]


@dataclass(frozen=True)
class Attack:
    """What the gate asks of an encoding's attack (Encoding.audit): the released tensor, the
    rows attacked and their plaintext, the attacker's dictionary, the measure a record falls
    by, and (audit_rows says how) the vector counts, an early stop and a population list."""

    tensor: np.ndarray
    rows: np.ndarray
    truth: Columns
    dictionary: Dictionary
    measure: str = "every-name"
    counts: Counts | None = None
    stop_above: float | None = None
    population: Population | None = None


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
    counts: Counts | None = None,
    stop_above: float | None = None,
    population: Population | None = None,
) -> AuditReport:
    """The peer's attacks on the given rows of a release, as the agreed encoding is attacked
    (Encoding.audit). `counts` gives, per attribute, how often each row's vector occurs in
    the whole release and that release's size, when `released` holds only a sample of it.
    With `stop_above`, only the rate by `measure` is wanted: the attackers run
    strongest-first and the first whose rate exceeds it is returned (enough to know a release
    fails, at a fraction of the cost). With a `population` list (the peer's list of people),
    the attacker who combines a record's attributes runs too."""
    truth = {name: [values[released.order[t]] for t in rows] for name, values in attributes.items()}
    attack = Attack(
        released.tensor, rows, truth, dictionary, measure, counts, stop_above, population
    )
    return agreement.encoding.audit(agreement, attack)


def audit_distances(agreement: Agreement, attack: Attack) -> AuditReport:
    """The attacks on a release of distances to the reference set: the report of the
    attacker (audit.ATTACKS) that re-identifies most by `measure`, with every attacker's rate
    (without noise, the uniform one and the prior breaking its ties), and of the joint
    attacker when a combined entry of attacked names is released (joint_attack).
    Strongest-first when `stop_above` is given (measured: joint, counts, then prior), the
    population attacker first."""
    rows, truth, measure, stop_above = attack.rows, attack.truth, attack.measure, attack.stop_above
    counts = attack.counts
    entries = attacked_entries(agreement)
    if not entries:
        return AuditReport(len(rows), [], 0.0, 0.0, 0.0)
    dictionary = attack.dictionary.under(agreement.metric)
    mapping = [agreement.mapping[m] for m in entries]
    every = agreement.entries()
    specs = [every[m] for m in entries]
    whole = attack.tensor[:, entries, :]
    attackers: tuple[str, ...] = ATTACKS if agreement.release.noise > 0 else EXACT_ATTACKS
    if stop_above is not None:
        attackers = attackers[::-1]
    if counts is None:
        everywhere = vector_counts(whole, mapping)
        counts = ({a: c[rows] for a, c in everywhere.items()}, len(whole))
    reports = []
    if attack.population is not None:
        report = attack_population(
            whole[rows], truth, specs, agreement.reference.columns, attack.population
        )
        reports.append(report)
        if stop_above is not None and report.rate(measure) > stop_above:
            attackers = ()
    joined = _joined(agreement, attack.tensor, rows, {a for a, _ in mapping})
    if joined and attackers:
        report = attack_jointly(whole[rows], truth, specs, joined, dictionary)
        reports.append(report)
        if stop_above is not None and report.rate(measure) > stop_above:
            attackers = ()
    for attacker in attackers:
        report = audit_tensor(
            whole[rows],
            truth,
            specs,
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


def _joined(
    agreement: Agreement, tensor: np.ndarray, rows: np.ndarray, attacked: set[str]
) -> list[Joined]:
    """The combined entries of attacked names the joint attacker reads, each with its
    (len(rows), W) codes of the attacked `rows` of the (n, M, W) `tensor`."""
    every = agreement.entries()
    out = []
    for m in joinable(every, attacked):
        release = every[m].release
        assert isinstance(release, ProjectedRelease), "joinable entries are projected"
        column = agreement.reference.columns[every[m].column]
        out.append(Joined(every[m].attribute, tensor[rows, m, :], release, column))
    return out


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
    for attribute in entries_by_attribute(mapping):
        values = with_combined(attributes, [attribute])[attribute]
        tally: dict[str, int] = {}
        for value in values:
            tally[value] = tally.get(value, 0) + 1
        out[attribute] = np.array([tally[values[i]] for i in rows], dtype=np.int64)
    return out


def _attacked(agreement: Agreement, attribute: str) -> bool:
    """Whether the name-dictionary attack judges this attribute: names, but not an initial,
    which is one of 26 letters and taken as read by the peer."""
    return KINDS[agreement.kinds[attribute]].names_people and not is_initial(attribute)


def attacked_entries(agreement: Agreement) -> list[int]:
    """The mapping entries the name-dictionary attack judges."""
    return [m for m, (a, _) in enumerate(agreement.mapping) if _attacked(agreement, a)]


def combined_names(agreement: Agreement) -> list[str]:
    """Combined entries of attacked names ("first+middle+last") released with noise that the
    joint attacker cannot read (a raw distance release, or a part with no entry of its own):
    a further noisy look at names the gate attacks, so its figure understates
    (benchmarks/combined_entry_attack.py measured about twice it; docs/research/privacy.md). Without
    noise every name is read exactly anyway."""
    if agreement.release.noise <= 0:
        return []
    read = read_jointly(agreement)
    return [
        a
        for a in dict.fromkeys(a for a, _ in agreement.mapping)
        if is_combined(a)
        and a not in read
        and all(KINDS[agreement.kinds.get(part, DEFAULT_KIND)].names_people for part in parts(a))
    ]


def read_jointly(agreement: Agreement) -> set[str]:
    """The combined entries of names the joint attacker reads with the names themselves."""
    every = agreement.entries()
    attacked = {agreement.mapping[m][0] for m in attacked_entries(agreement)}
    return {every[m].attribute for m in joinable(every, attacked)}


def unaudited_attributes(agreement: Agreement) -> list[str]:
    """Attributes the name-dictionary attacks cannot judge, with their kinds."""
    read = read_jointly(agreement)
    return [
        f"{a} ({'initial, readable' if is_initial(a) else kind})"
        for a, kind in agreement.kinds.items()
        if not _attacked(agreement, a) and a not in read
    ]
