"""What the privacy gate asks of an encoding's attack on its release (`Attack`), and the attacks
the distance releases share: the peer's dictionary attackers on the entries of names, the
joint attacker on combined entries and the population attacker (pprl.protocol.privacy). The
gate itself, which samples the rows and searches the noise, is pprl.protocol.gate."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.combined import is_initial
from pprl.protocol.data.kinds import KINDS
from pprl.protocol.privacy.audit import (
    ATTACKS,
    EXACT_ATTACKS,
    AuditReport,
    Dictionary,
    audit_tensor,
    vector_counts,
)
from pprl.protocol.privacy.joint_attack import Joined, attack_jointly, joinable
from pprl.protocol.privacy.population_attack import Population, attack_population
from pprl.protocol.vectors.release import ProjectedRelease

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


def audit_distances(agreement: AgreementView, attack: Attack) -> AuditReport:
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
    agreement: AgreementView, tensor: np.ndarray, rows: np.ndarray, attacked: set[str]
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


def is_attacked(agreement: AgreementView, attribute: str) -> bool:
    """Whether the name-dictionary attack judges this attribute: names, but not an initial,
    which is one of 26 letters and taken as read by the peer."""
    return KINDS[agreement.kinds[attribute]].names_people and not is_initial(attribute)


def attacked_entries(agreement: AgreementView) -> list[int]:
    """The mapping entries the name-dictionary attack judges."""
    return [m for m, (a, _) in enumerate(agreement.mapping) if is_attacked(agreement, a)]
