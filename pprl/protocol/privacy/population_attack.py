"""An attacker who combines the attributes of one record: a population list.

The name-dictionary attackers (audit) guess each attribute alone: a first name that noise
hides stays hidden, whatever the surname gives away. A peer who holds a public list of
people (a voter roll, a register extract) that contains the party's people can do better:
each released record is compared with every person on the list over all its attributes at
once, and the person with the smallest summed squared distance is taken. A recovered surname
narrows the list to a few people, and the noisy first name then only has to tell those apart.

The record is re-identified when that person is unique and each of the record's non-empty
values lies within `tolerance` edits of the person's; per attribute, the chosen person's
value counts as recovered the same way. A value the person lacks (or the record lacks) adds
that row's median distance over the list's values, neither reward nor penalty.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.data.combined import derived_values, entries_by_attribute
from pprl.protocol.data.distances import Metric
from pprl.protocol.errors import SettingError
from pprl.protocol.privacy.audit import AuditReport, guessed_report
from pprl.protocol.vectors.release import ProjectedRelease, Release
from pprl.protocol.vectors.smashing import Entry, smash_values

ATTACK = "population"  # its words are in audit.ATTACK_NAMES
_PEOPLE_ROWS = 8192
_TIE = 1e-6


class Population:
    """The attacker's list of people, column by column; each attribute's distinct values and
    their coordinates in a release's space are computed once per space."""

    def __init__(self, people: Mapping[str, Sequence[str]]) -> None:
        sizes = {len(values) for values in people.values()}
        if len(sizes) != 1 or 0 in sizes:
            raise SettingError(
                "a population list needs the same, non-zero number of values per column"
            )
        self.size = sizes.pop()
        self.attributes = tuple(people)
        self._codes: dict[str, tuple[list[str], np.ndarray]] = {}
        for attribute, values in people.items():
            distinct, codes = np.unique(np.asarray(values, dtype=object), return_inverse=True)
            self._codes[attribute] = ([str(v) for v in distinct], codes.reshape(-1))
        self._spaces: dict[str, np.ndarray] = {}

    def values(self, attribute: str) -> tuple[list[str], np.ndarray]:
        """The attribute's distinct values ("" among them when some lack it) and, per person,
        the index of theirs."""
        return self._codes[attribute]

    def space(
        self,
        attribute: str,
        columns: Sequence[Sequence[str]],
        encoders: Sequence[Release | ProjectedRelease],
        metric: Metric | None = None,
        entries: Sequence[str] | None = None,
    ) -> np.ndarray:
        """(u, K) float64 coordinates of the attribute's distinct values over its entries side
        by side, as the attacker computes them for any value it guesses (no noise); `entries`
        names each entry, so that a derived one ("last:first-part") takes its derived values
        (default: the attribute itself for each)."""
        names = list(entries) if entries is not None else [attribute] * len(columns)
        digest = hashlib.sha256(attribute.encode())
        digest.update("\n".join(names).encode() + b"\0")
        if metric is not None:
            digest.update(metric.identity.encode() + b"\0")
        for column, encoder in zip(columns, encoders, strict=True):
            digest.update("\n".join(column).encode() + b"\0")
            if isinstance(encoder, ProjectedRelease):
                digest.update(encoder.centre.tobytes() + encoder.basis.tobytes())
        key = digest.hexdigest()
        if key not in self._spaces:
            values, _ = self.values(attribute)
            parts = []
            for name, column, encoder in zip(names, columns, encoders, strict=True):
                distances = smash_values(derived_values(name, values), column, metric=metric)
                parts.append(
                    encoder.project(distances)
                    if isinstance(encoder, ProjectedRelease)
                    else distances.astype(np.float64)
                )
            self._spaces[key] = np.concatenate(parts, axis=1)
        return self._spaces[key]


def _squared(released: np.ndarray, space: np.ndarray) -> np.ndarray:
    """(n, u) squared Euclidean distances."""
    out = released @ space.T
    out *= -2.0
    out += np.einsum("ur,ur->u", space, space)[None, :]
    out += np.einsum("nr,nr->n", released, released)[:, None]
    return np.maximum(out, 0.0)


def attack_population(
    codes: np.ndarray,
    truth: Mapping[str, Sequence[str]],
    specs: Sequence[Entry],
    reference_columns: Mapping[str, Sequence[str]],
    population: Population,
    tolerance: int = 1,
) -> AuditReport:
    """Attack (n, M, W) released codes of records holding `truth` (column-wise) with a list
    of people; `specs` say how each entry of `codes` was released (its release, and its
    distance when that is not the edit distance)."""
    mapping = [(spec.attribute, spec.column) for spec in specs]
    encoders = [spec.release or Release() for spec in specs]
    metric = specs[0].metric if specs else None
    n = len(codes)
    grouped = entries_by_attribute(mapping)
    attributes = [a for a in grouped if a in population.attributes]
    missing = [a for a in grouped if a not in population.attributes]
    if missing:
        raise SettingError(f"the population list has no column {', '.join(missing)}")
    per_value: dict[str, np.ndarray] = {}  # (n, u) cost of each distinct value
    for attribute in attributes:
        entries = grouped[attribute]
        columns = [reference_columns[mapping[m][1]] for m in entries]
        used = [encoders[m] for m in entries]
        names = [mapping[m][0] for m in entries]
        released = np.concatenate(
            [used[j].decode(codes[:, m, :]) for j, m in enumerate(entries)], axis=1
        ).astype(np.float64)
        cost = _squared(released, population.space(attribute, columns, used, metric, names))
        values, _ = population.values(attribute)
        blank = np.array([v == "" for v in values])
        # A value one side lacks says nothing: the row's typical cost, whoever it is.
        neutral = np.median(cost[:, ~blank], axis=1) if (~blank).any() else np.zeros(n)
        cost[:, blank] = neutral[:, None]
        absent = np.array([v == "" for v in truth[attribute]])
        cost[absent] = 0.0
        per_value[attribute] = cost
    best = np.full(n, np.inf)
    winner = np.zeros(n, dtype=np.int64)
    ties = np.zeros(n, dtype=np.int64)
    for start in range(0, population.size, _PEOPLE_ROWS):
        stop = min(start + _PEOPLE_ROWS, population.size)
        total = np.zeros((n, stop - start))
        for attribute in attributes:
            total += per_value[attribute][:, population.values(attribute)[1][start:stop]]
        here = total.argmin(axis=1)
        low = total[np.arange(n), here]
        count = np.count_nonzero(total <= low[:, None] + _TIE, axis=1)
        better = low < best - _TIE
        level = np.abs(low - best) <= _TIE
        ties = np.where(better, count, np.where(level, ties + count, ties))
        winner = np.where(better, here + start, winner)
        best = np.where(better, low, best)
    guesses, held = {}, {}
    for attribute in attributes:
        values, of_person = population.values(attribute)
        guesses[attribute] = [values[of_person[w]] for w in winner.tolist()]
        held[attribute] = set(values)
    return guessed_report(ATTACK, truth, guesses, held, tolerance, decided=ties == 1)
