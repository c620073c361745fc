"""The privacy gate: the peer's dictionary attacks on a party's release, and the smallest
noise at which they stay within the limit. What each encoding's attack is lives with the
encoding (pprl.protocol.encodings), the attackers the distance releases share in
pprl.protocol.release_attacks; this module samples the rows, asks the agreed encoding's
attack, and searches the noise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.agreement import Agreement
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
from pprl.protocol.privacy.audit import AuditReport, Dictionary
from pprl.protocol.privacy.joint_attack import joinable
from pprl.protocol.privacy.noise_choice import NoiseChoice, choose_sigma
from pprl.protocol.privacy.population_attack import Population
from pprl.protocol.release_attacks import Attack, Counts, attacked_entries, is_attacked
from pprl.protocol.vectors.randomness import GATE, RELEASE, Randomness

Columns = Mapping[str, Sequence[str]]


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
        if not is_attacked(agreement, a) and a not in read
    ]
