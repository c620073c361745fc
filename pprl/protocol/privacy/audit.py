"""What a peer who knows the reference set learns from released vectors: a dictionary attack.

The attacker smashes a public name list against the same reference columns and compares each
released vector (every mapping entry of one attribute, read back into edit units) with the
dictionary's vectors. Two attacks are scored against the true values:
- exact lookup: the released vector, rounded to whole edits, equals the vectors of exactly one
  dictionary name, the true one (the "candidate set" is every name sharing that vector);
- nearest neighbour: the single closest dictionary vector (Euclidean, the most likely name
  under Gaussian noise when every name is equally likely) is the true name's, or within
  `tolerance` edits of it; a tie counts as a failure. The gate and `pprl audit` use a tolerance
  of one edit: a peer who learns "SMITH" for a record holding "SMTIH" has learnt the name.
Exact lookup is what raw integer distances allow; noise defeats it, nearest neighbour not
necessarily, so both are reported. Nearest neighbour comes in three attackers (ATTACKS):
"uniform" takes every dictionary name as equally likely; "prior" weighs each name by how
common it is (the census frequencies, or how often a custom dictionary lists it) and takes
the most probable name under the release's Gaussian noise, which favours common names where
the noise leaves several close; "counts" also uses how many of the party's records share
the released vector (identical values share one): a vector that occurs c times among n
records is likelier a name of frequency near c / n (a Poisson count), which the peer sees
for free. The gate takes whichever re-identifies most. A record is
re-identified when every non-empty attribute value of it falls to one of the two; it is
exposed when at least one does.

A careful peer uses the right list for each attribute: first names for a first or middle
name, surnames for a surname. A dictionary may hold several priors over its names (the
census one: first names, surnames, either); the weighted attackers try each on each
attribute and keep, per attribute, the one that recovers most, as a peer who knows what each
attribute holds would choose. The distance release repeats a coordinate wherever the
reference column repeats a value, with the same noise: the attack reads each distinct
reference value once (`distinct_positions`), so every coordinate it compares carries noise of
one scale, and nearest is most probable. Under noise of one scale in every coordinate (both
releases: pprl.protocol.vectors.release), the prior attacker with the right prior is the Bayes
decision for each attribute's value (tests/test_gate_oracle.py holds the gate to the
brute-force decoder of benchmarks/lab/bayes_decoder.py, which estimates the noise's
covariance from the release itself).
"""

from __future__ import annotations

import copy
import hashlib
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz.distance import Levenshtein

from pprl.protocol.data import synthetic
from pprl.protocol.data.combined import entries_by_attribute
from pprl.protocol.data.distances import Metric
from pprl.protocol.errors import SettingError
from pprl.protocol.vectors.release import (
    ArrayStore,
    ProjectedRelease,
    Release,
    stored_or_computed,
)
from pprl.protocol.vectors.smashing import Entry, smash_values

MEASURES = ("every-name", "any-name")
ATTACKS = ("uniform", "prior", "counts")
# Without noise a vector is read exactly: counts add nothing to what the prior does (a value's
# vector is the same in every record either way), and the prior only settles near ties, which
# the list of any name settles as well as a list per attribute.
EXACT_ATTACKS = ("uniform", "prior")
ATTACK_NAMES = {
    "uniform": "every name equally likely",
    "prior": "names weighted by frequency",
    "counts": "names weighted by frequency and by how often the vector occurs",
    # Runs when a combined entry of attacked names is released (joint_attack).
    "joint": "names decoded together, with the combined entry that holds them",
    # Not a dictionary attacker: runs when a list of people is given (population_attack).
    "population": "a list of people, every attribute of a record together",
}
_QUERY_ROWS = 512
_DICTIONARY_ROWS = 8192
# Distances are compared in float64, whose rounding at these sizes stays below 1e-8.
_TIE = 1e-6


@dataclass(frozen=True)
class EntryAudit:
    """Per released value: exact-lookup success, nearest-neighbour success, candidate count."""

    exact: np.ndarray  # (n,) bool
    nearest: np.ndarray  # (n,) bool
    candidates: np.ndarray  # (n,) int: dictionary names with exactly the released vector

    @property
    def exact_rate(self) -> float:
        return float(self.exact.mean()) if len(self.exact) else 0.0

    @property
    def nearest_rate(self) -> float:
        return float(self.nearest.mean()) if len(self.nearest) else 0.0

    @property
    def median_candidates(self) -> float:
        return float(np.median(self.candidates)) if len(self.candidates) else 0.0


def audit_entry(
    released: np.ndarray,
    truth: Sequence[str],
    dictionary: Sequence[str],
    dictionary_vectors: np.ndarray,
    tolerance: int = 0,
    lookup: bool = True,
    penalty: np.ndarray | None = None,
    squares: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    looked_up: tuple[np.ndarray, np.ndarray] | None = None,
) -> EntryAudit:
    """Attack (n, D) released vectors in edit units with the (d, D) integer distance vectors of
    the names `dictionary`; without `lookup` (vectors that are not whole edits) by nearest
    neighbour only, with no candidate counts. `penalty` (d,) is added to each name's squared
    distance: 2 noise^2 (-log prior) makes the nearest the most probable name; a (g, d)
    penalty gives each row the one its `groups` (n,) entry picks. `squares` (d,): the
    vectors' squared lengths, when the caller keeps them. `looked_up`: the exact lookup's
    (exact, candidates), when the caller made it (`attack` does, on the few names whose
    vectors can match)."""
    if len(released) != len(truth):
        raise ValueError(f"{len(released)} vectors for {len(truth)} true values")
    if len(dictionary) != len(dictionary_vectors):
        raise ValueError(f"{len(dictionary)} names for {len(dictionary_vectors)} vectors")
    values = np.asarray(released, dtype=np.float64)
    if looked_up is not None:
        exact, candidates = looked_up
    elif lookup:
        exact, candidates = _lookup(np.rint(values), truth, dictionary, dictionary_vectors)
    else:
        exact, candidates = np.zeros(len(values), bool), np.zeros(len(values), np.int64)
    # A vector only the true name has is also nearest to it alone, at distance 0.
    nearest = exact.copy()
    rest = np.flatnonzero(~exact)
    picks = None if groups is None else groups[rest]
    winners, unique = _nearest(values[rest], dictionary_vectors, penalty, squares, picks)
    for row, winner, alone in zip(rest.tolist(), winners.tolist(), unique, strict=True):
        nearest[row] = bool(alone) and within(dictionary[winner], truth[row], tolerance)
    return EntryAudit(exact, nearest, candidates)


def within(guess: str, true: str, tolerance: int) -> bool:
    """Whether a guessed value counts as the true one: at most `tolerance` edits from it."""
    return Levenshtein.distance(guess, true, score_cutoff=tolerance) <= tolerance


def _lookup(
    rounded: np.ndarray, truth: Sequence[str], dictionary: Sequence[str], vectors: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Names whose vector equals each rounded released vector; grouped by hash, then checked
    element by element, so a large dictionary's vectors are never copied into keys."""
    by_hash: dict[int, list[int]] = defaultdict(list)
    for index, vector in enumerate(vectors):
        by_hash[hash(vector.astype(np.int16).tobytes())].append(index)
    exact = np.zeros(len(rounded), dtype=bool)
    candidates = np.zeros(len(rounded), dtype=np.int64)
    for row, vector in enumerate(rounded):
        probe = vector.astype(np.int16)
        names = [
            dictionary[i]
            for i in by_hash.get(hash(probe.tobytes()), [])
            if np.array_equal(vectors[i], probe)
        ]
        exact[row] = names == [truth[row]]
        candidates[row] = len(names)
    return exact, candidates


def _nearest(
    values: np.ndarray,
    vectors: np.ndarray,
    penalty: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(n,) index of each value's closest dictionary vector, and whether it is the only one
    that close. The dictionary is converted in blocks, so its float copy is never whole
    (unless it is float64 already); `lengths` are its squared lengths, if known. A (g, d)
    `penalty` is added per row as `groups` picks: one pass over the dictionary serves rows
    of every group (each pass reads all of it, which is most of a small group's cost)."""
    n = len(values)
    best = np.full(n, np.inf)
    winner = np.zeros(n, dtype=np.int64)
    ties = np.zeros(n, dtype=np.int64)
    if not n:
        return winner, ties == 1
    shared, per_row = penalty, None
    if penalty is not None and penalty.ndim == 2:
        if groups is None or len(groups) != n:
            raise ValueError("a penalty per group needs the group of every row")
        shared, per_row = None, (penalty, groups)
    for start in range(0, len(vectors), _DICTIONARY_ROWS):
        block = np.asarray(vectors[start : start + _DICTIONARY_ROWS], dtype=np.float64)
        stop = start + len(block)
        squares = np.einsum("dr,dr->d", block, block) if lengths is None else lengths[start:stop]
        if shared is not None:
            squares = squares + shared[start:stop]
        for first in range(0, n, _QUERY_ROWS):
            rows = slice(first, first + _QUERY_ROWS)
            # |v|^2 - 2 x.v (+ |x|^2, the same for every name of a row), in place: the
            # passes over this (rows, block) table are most of the attack's time.
            distances = values[rows] @ block.T
            distances *= -2.0
            distances += squares[None, :]
            if per_row is not None:
                distances += per_row[0][per_row[1][rows], start:stop]
            here = distances.argmin(axis=1)
            low = distances[np.arange(len(here)), here]
            count = np.count_nonzero(distances <= low[:, None] + _TIE, axis=1)
            here += start
            better = low < best[rows] - _TIE
            level = np.abs(low - best[rows]) <= _TIE
            ties[rows] = np.where(better, count, np.where(level, ties[rows] + count, ties[rows]))
            winner[rows] = np.where(better, here, winner[rows])
            best[rows] = np.where(better, low, best[rows])
    return winner, ties == 1


@dataclass(frozen=True)
class AttributeAudit:
    attribute: str
    audited: int  # non-empty values attacked
    in_dictionary: float  # share of them the dictionary holds at all
    result: EntryAudit
    prior: str = ""  # the dictionary's prior the attacker used on this attribute, if any

    @property
    def recovered(self) -> float:
        """Share of the attacked values recovered (exactly, or within the tolerance)."""
        found = self.result.exact | self.result.nearest
        return float(found.mean()) if len(found) else 0.0


@dataclass(frozen=True)
class AuditReport:
    """Per attribute and per record, for one release of one sample of records."""

    records: int
    attributes: list[AttributeAudit]
    record_exact: float  # share of records whose every non-empty value falls to exact lookup
    record_reidentified: float  # ... to exact lookup or nearest neighbour
    record_exposed: float  # share of records with at least one value falling to either
    attack: str = "uniform"  # which nearest-neighbour attacker (ATTACKS) this report is of
    # Each attacker's rate under the measure the strongest was chosen by (gate.audit_rows).
    by_attack: dict[str, float] = field(default_factory=dict)

    def rate(self, measure: str) -> float:
        """The figure a privacy gate on `measure` compares with its limit."""
        if measure not in MEASURES:
            raise SettingError(f"unknown measure {measure!r}; expected one of {MEASURES}")
        return self.record_reidentified if measure == "every-name" else self.record_exposed


ANY_NAME = "any name"


def guessed_report(
    attack: str,
    truth: Mapping[str, Sequence[str]],
    guesses: Mapping[str, Sequence[str]],
    held: Mapping[str, Collection[str]],
    tolerance: int,
    decided: np.ndarray | None = None,
    priors: Mapping[str, str] | None = None,
) -> AuditReport:
    """The report of an attacker that names one value per attribute and row (`guesses`, one
    list per attacked attribute, each row's value of `truth`'s): a value is recovered when
    its row is `decided` (a unique choice; default every row) and the guess lies within
    `tolerance` edits of it.
    `held`: per attribute, the values the attacker's list holds; `priors`: per attribute, the
    list's prior it used."""
    n = len(next(iter(truth.values()))) if truth else 0
    decided = np.ones(n, dtype=bool) if decided is None else decided
    found_all = decided.copy()
    found_any = np.zeros(n, dtype=bool)
    audits = []
    for attribute, guessed in guesses.items():
        values = truth[attribute]
        present = np.array([v != "" for v in values], dtype=bool)
        close = np.array(
            [
                bool(decided[i]) and within(g, t, tolerance)
                for i, (g, t) in enumerate(zip(guessed, values, strict=True))
            ],
            dtype=bool,
        )
        found_all &= close | ~present
        found_any |= close & present
        rows = np.flatnonzero(present)
        result = EntryAudit(
            np.zeros(len(rows), dtype=bool), close[rows], np.zeros(len(rows), dtype=np.int64)
        )
        known = held[attribute]
        share = float(np.mean([values[i] in known for i in rows.tolist()])) if len(rows) else 0.0
        prior = (priors or {}).get(attribute, "")
        audits.append(AttributeAudit(attribute, len(rows), share, result, prior))
    return AuditReport(
        records=n,
        attributes=audits,
        record_exact=0.0,
        record_reidentified=float(found_all.mean()) if n else 0.0,
        record_exposed=float(found_any.mean()) if n else 0.0,
        attack=attack,
    )


def distinct_positions(values: Sequence[str]) -> np.ndarray:
    """Indices of the first occurrence of each distinct value: the coordinates of a distance
    release that carry independent noise."""
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        first.setdefault(value, index)
    return np.fromiter(first.values(), dtype=np.int64, count=len(first))


def _log_prior(names: Sequence[str], totals: Mapping[str, float]) -> np.ndarray:
    mass = np.array([totals.get(name, 0.0) for name in names], dtype=np.float64)
    # A name listed with no weight still gets a little: an attacker never rules one out.
    mass = np.maximum(mass, mass[mass > 0].min() / 10 if (mass > 0).any() else 1.0)
    return np.log(mass / mass.sum())


class Dictionary:
    """A public name list, its priors, and its distance vectors per reference column, computed
    lazily: only for names a pruning step cannot rule out (see `attack`)."""

    def __init__(
        self,
        names: Sequence[str],
        reference_columns: Mapping[str, Sequence[str]],
        store: ArrayStore | None = None,
        weights: Sequence[float] | None = None,
        priors: Mapping[str, Sequence[float]] | None = None,
    ):
        """`weights` per given name (summed over repeats); by default each listing counts
        one, so a name a custom list repeats is taken as more common. `priors`: further named
        weightings of the same names (say, as first names and as surnames), each tried by the
        weighted attackers beside the `weights`."""
        priors = priors or {}
        for given in [weights, *priors.values()]:
            if given is not None and len(given) != len(names):
                raise SettingError(f"{len(given)} weights for {len(names)} names")
        totals: dict[str, float] = defaultdict(float)
        named: dict[str, dict[str, float]] = {p: defaultdict(float) for p in priors}
        for i, name in enumerate(names):
            if name:
                totals[name] += 1.0 if weights is None else float(weights[i])
                for prior, tally in named.items():
                    tally[name] += float(priors[prior][i])
        self.names = sorted(totals)
        if not self.names:
            raise SettingError("the dictionary holds no names")
        self.log_prior = _log_prior(self.names, totals)
        # Every prior an attacker may choose per attribute, the weights' first.
        self.priors = {ANY_NAME: self.log_prior}
        self.priors.update({p: _log_prior(self.names, tally) for p, tally in named.items()})
        self._store = store
        self.columns = reference_columns
        self._distinct = {
            column: [values[i] for i in distinct_positions(values)]
            for column, values in reference_columns.items()
        }
        # Part of every projection's cache key; the names never change.
        self._names_digest = hashlib.sha256("\n".join(self.names).encode()).digest()
        self._whole: dict[str, np.ndarray] = {}
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # (computed?, vectors)
        self._probes: dict[tuple[str, int], np.ndarray] = {}
        self._projected: dict[str, np.ndarray] = {}
        self._spaces: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._words: dict[str, dict[str, np.ndarray]] = {}
        self.metric: Metric | None = None
        # The distance attack's last probe bounds, for the next prior on the same values.
        self.bounds_kept: tuple[tuple[tuple[str, ...], bytes], np.ndarray, np.ndarray] | None = None
        self._under: dict[str, Dictionary] = {}

    def under(self, metric: Metric | None) -> Dictionary:
        """The same names and prior, their vectors in `metric`'s distances (an attacker who
        holds the Bloom key encodes its guesses as the party did); kept per metric."""
        if metric is None:
            return self
        if metric.identity not in self._under:
            other = copy.copy(self)  # names, prior and store shared; caches not
            other._whole, other._rows, other._probes = {}, {}, {}
            other._projected, other._spaces, other._under = {}, {}, {}
            other._words = {}
            other.bounds_kept = None
            other.metric = metric
            other._names_digest = hashlib.sha256(
                self._names_digest + metric.identity.encode()
            ).digest()
            self._under[metric.identity] = other
        return self._under[metric.identity]

    def vectors(self, column: str, rows: np.ndarray | None = None) -> np.ndarray:
        """(d, D) distance vectors of every name to the column's D distinct values, or of the
        names at `rows` (computed once per name)."""
        if column in self._whole:
            return self._whole[column] if rows is None else self._whole[column][rows]
        if rows is None:
            self._whole[column] = smash_values(
                self.names, self._distinct[column], metric=self.metric
            )
            return self._whole[column]
        if column not in self._rows:
            shape = (len(self.names), self.width(column))
            self._rows[column] = (np.zeros(len(self.names), bool), np.zeros(shape, np.uint8))
        computed, store = self._rows[column]
        missing = rows[~computed[rows]]
        if len(missing):
            store[missing] = smash_values(
                [self.names[i] for i in missing], self._distinct[column], metric=self.metric
            )
            computed[missing] = True
        return store[rows]

    def _projection_key(self, column: str, grid: ProjectedRelease) -> str:
        digest = hashlib.sha256(self._names_digest)
        digest.update("\n".join(self.columns[column]).encode() + b"\0")
        digest.update(grid.centre.astype(np.float64).tobytes())
        digest.update(grid.basis.astype(np.float64).tobytes())
        return digest.hexdigest()

    def projected_space(
        self, columns: Sequence[str], grids: Sequence[ProjectedRelease]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(d, K) float64 coordinates of every name over an attribute's entries side by side,
        and their squared lengths. Kept: the gate attacks the same space at every noise level
        it tries and with every attacker, and the counts attacker once per group of rows."""
        key = tuple(self._projection_key(c, g) for c, g in zip(columns, grids, strict=True))
        if key not in self._spaces:
            parts = [self.projected(c, g) for c, g in zip(columns, grids, strict=True)]
            # One entry's coordinates serve as they are: a copy of 91,907 x k floats per
            # attribute would stay in the daemon as long as the dictionary does.
            joined = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            vectors = joined.astype(np.float64, copy=False)
            self._spaces[key] = (vectors, np.einsum("dr,dr->d", vectors, vectors))
        return self._spaces[key]

    def projected(self, column: str, grid: ProjectedRelease) -> np.ndarray:
        """(d, k) every name's coordinates in a projected release's space, computed a block of
        names at a time (the whole distance table is never kept) and once per basis."""
        key = self._projection_key(column, grid)
        if key in self._projected:
            return self._projected[key]

        def compute() -> np.ndarray:
            blocks = [
                grid.project(
                    smash_values(
                        self.names[start : start + _DICTIONARY_ROWS],
                        self.columns[column],
                        metric=self.metric,
                    )
                )
                for start in range(0, len(self.names), _DICTIONARY_ROWS)
            ]
            return np.concatenate(blocks)

        shape = (len(self.names), grid.width)
        self._projected[key] = stored_or_computed(self._store, key, shape, compute)
        return self._projected[key]

    def word_coordinates(
        self, words: Sequence[str], column: Sequence[str], grid: ProjectedRelease
    ) -> dict[str, np.ndarray]:
        """Each of `words` (guesses of a combined entry, "JOHN SMITH") in a projected
        release's space against the reference `column`, computed once per word and space:
        the gate attacks at several noise levels, whose guesses mostly repeat."""
        digest = hashlib.sha256("\n".join(column).encode() + b"\0")
        digest.update(grid.centre.astype(np.float64).tobytes())
        digest.update(grid.basis.astype(np.float64).tobytes())
        known = self._words.setdefault(digest.hexdigest(), {})
        new = [word for word in dict.fromkeys(words) if word not in known]
        if new:
            projected = grid.project(smash_values(new, column, metric=self.metric))
            known.update(zip(new, projected.astype(np.float64), strict=True))
        return known

    def width(self, column: str) -> int:
        """The column's distinct values: the coordinates the distance attack compares."""
        return len(self._distinct[column])

    def probe(self, column: str, width: int) -> np.ndarray:
        """(d, width) distances of every name to the column's first `width` distinct
        values."""
        if (column, width) not in self._probes:
            values = self._distinct[column][:width]
            self._probes[column, width] = smash_values(self.names, values, metric=self.metric)
        return self._probes[column, width]


FIRST_NAMES = "first names"
SURNAMES = "surnames"


def census_dictionary(
    reference_columns: Mapping[str, Sequence[str]],
    store: ArrayStore | None = None,
    kept: int | None = None,
    held: Iterable[str] = (),
) -> Dictionary:
    """The default attacker's list: the census first names and surnames together, with three
    priors: either list's frequency, half each (a name's chance of being any given name), and
    each list's own (for an attribute that holds first names, or surnames). With `kept`, each
    list cut to its `kept` commonest names and any in `held` (say, the records' own): the
    attacks then cost a fraction, for tests and benchmarks of how the gate decides."""
    census = synthetic.census_names()
    held = set(held)
    lists = []
    for names_of, weights_of in ((census.first.names, census.first.weights),
                                 (census.last.names, census.last.weights)):  # fmt: skip
        if kept is None:
            lists.append((list(names_of), np.asarray(weights_of)))
            continue
        keep = [i for i, name in enumerate(names_of) if i < kept or name in held]
        lists.append(([names_of[i] for i in keep], np.asarray(weights_of)[keep]))
    return role_dictionary(lists[0], lists[1], reference_columns, store)


def role_dictionary(
    first: tuple[Sequence[str], np.ndarray],
    last: tuple[Sequence[str], np.ndarray],
    reference_columns: Mapping[str, Sequence[str]],
    store: ArrayStore | None = None,
) -> Dictionary:
    """A list of first names and one of surnames, each (names, frequencies), as one
    dictionary with three priors: either list's frequency, half each (a name's chance of
    being any given name), and each list's own (for an attribute that holds first names, or
    surnames): the gate's attackers try each on every attribute and keep the best."""
    (first_names, first_weights), (last_names, last_weights) = first, last
    first_share = np.asarray(first_weights, dtype=np.float64)
    last_share = np.asarray(last_weights, dtype=np.float64)
    first_share = first_share / first_share.sum() if first_share.sum() > 0 else first_share
    last_share = last_share / last_share.sum() if last_share.sum() > 0 else last_share
    names = [*first_names, *last_names]
    weights = [*(first_share / 2), *(last_share / 2)]
    none_first, none_last = np.zeros(len(first_share)), np.zeros(len(last_share))
    priors = {
        FIRST_NAMES: [*first_share, *none_last],
        SURNAMES: [*none_first, *last_share],
    }
    return Dictionary(names, reference_columns, store, weights, priors)


_PROBE = 64
_SHORTLIST = 32


def prior_penalty(
    dictionary: Dictionary, noise: float, attacker: str, prior: str = ANY_NAME
) -> np.ndarray | None:
    """What the attacker adds to each name's squared distance: nothing for "uniform", 2
    noise^2 (-log p) for "prior", p the dictionary's `prior`, so that the smallest sum is the
    most probable name (without noise, the prior breaks ties: _weight)."""
    if attacker not in ATTACKS:
        raise SettingError(f"unknown attacker {attacker!r}; expected one of {ATTACKS}")
    if attacker == "uniform":
        return None
    return -2.0 * _weight(noise) * dictionary.priors[prior]


# Without noise a released vector is read exactly, yet a value with a typo can be as near to
# several names; the weighted attackers then take the likeliest of those, as if the distances
# were read with half an edit's uncertainty (tests/test_audit_attackers.py).
_EXACT_READING = 0.5


def _weight(noise: float) -> float:
    """noise^2, what a log probability is worth in squared edits."""
    return max(noise, _EXACT_READING) ** 2


def count_penalty(
    dictionary: Dictionary,
    noise: float,
    counts: np.ndarray,
    records: int,
    prior: str = ANY_NAME,
) -> np.ndarray:
    """The "counts" attacker's additions, (len(counts), d), for vectors seen each of `counts`
    times among `records`: 2 noise^2 times minus the log of prior and Poisson likelihood (the
    count's factorial is the same for every name and left out)."""
    log_prior = dictionary.priors[prior]
    expected = records * np.exp(log_prior)
    seen = np.asarray(counts, dtype=np.float64)[:, None]
    log_likelihood = seen * np.log(expected)[None, :] - expected[None, :]
    return -2.0 * _weight(noise) * (log_prior[None, :] + log_likelihood)


def attack(
    released: np.ndarray,
    truth: Sequence[str],
    dictionary: Dictionary,
    columns: Sequence[str],
    tolerance: int,
    penalty: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> EntryAudit:
    """audit_entry against the whole dictionary, computing full vectors for few names;
    `penalty` and `groups` as audit_entry takes them.

    The first _PROBE coordinates of each column bound every name's distance from below (a
    partial sum of squares), so a name whose partial distance already exceeds the best full
    distance found among a shortlist can be neither nearest nor tied, and a name whose
    partial vector differs from the rounded released one cannot match it exactly. Without
    noise this leaves a handful of names per value; noise loosens the bound until, at worst,
    every name is computed, as brute force would.
    """
    widths = [dictionary.width(c) for c in columns]
    if min(widths) <= _PROBE or not len(released):
        vectors = np.concatenate([dictionary.vectors(c) for c in columns], axis=1)
        return audit_entry(
            released, truth, dictionary.names, vectors, tolerance, True, penalty, groups=groups
        )
    per_row = penalty is not None and penalty.ndim == 2
    if per_row and (groups is None or len(groups) != len(released)):
        raise ValueError("a penalty per group needs the group of every row")
    values = np.asarray(released, dtype=np.float64)
    rounded, bounds = _probe_bounds(values, dictionary, columns, widths)
    if penalty is not None:
        # A new array: the bounds are kept for the next prior (_probe_bounds).
        bounds = bounds + (penalty[groups] if per_row else penalty[None, :])
    shortlist = np.argpartition(bounds, min(_SHORTLIST, bounds.shape[1] - 1), axis=1)
    chosen = set(shortlist[:, :_SHORTLIST].ravel().tolist())
    chosen |= set(np.flatnonzero((rounded <= 0.5).any(axis=0)).tolist())

    def full(rows: np.ndarray) -> np.ndarray:
        return np.concatenate([dictionary.vectors(c, rows) for c in columns], axis=1)

    first = np.array(sorted(chosen))
    vectors = full(first).astype(np.float64)
    scores = (
        np.einsum("dr,dr->d", vectors, vectors)[None, :]
        - 2.0 * values @ vectors.T
        + np.einsum("nr,nr->n", values, values)[:, None]
    )
    if penalty is not None:
        scores += penalty[groups][:, first] if per_row else penalty[first][None, :]
    best = scores.min(axis=1)
    margin = 1e-6 * (1.0 + np.abs(best)) + 2 * _TIE
    needed = (bounds <= (best + margin)[:, None]).any(axis=0)
    rows = np.array(sorted(chosen | set(np.flatnonzero(needed).tolist())))
    names = [dictionary.names[i] for i in rows]
    kept = None if penalty is None else penalty[..., rows]
    # Only a name whose probe matches a rounded vector can match it whole: the lookup needs
    # those few, whatever the penalty.
    matchable = np.flatnonzero((rounded <= 0.5).any(axis=0))
    looked_up = _lookup(
        np.rint(values), truth, [dictionary.names[i] for i in matchable], full(matchable)
    )
    return audit_entry(
        released,
        truth,
        names,
        full(rows),
        tolerance,
        False,
        kept,
        groups=groups,
        looked_up=looked_up,
    )


def _probe_bounds(
    values: np.ndarray, dictionary: Dictionary, columns: Sequence[str], widths: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(n, d) lower bounds of every name's squared distance from the rounded and from the
    released values, by the first _PROBE coordinates of each column. The weighted attackers
    try several priors on the same values: the last pair computed is kept and given again."""
    key = (tuple(columns), hashlib.sha256(values.tobytes()).digest())
    kept = dictionary.bounds_kept
    if kept is not None and kept[0] == key:
        return kept[1], kept[2]
    dictionary.bounds_kept = None  # the old pair goes before the new one is made
    starts = np.cumsum([0, *widths[:-1]])
    probe_at = np.concatenate([np.arange(_PROBE) + start for start in starts])
    partial = np.concatenate([dictionary.probe(c, _PROBE) for c in columns], axis=1)
    partial = partial.astype(np.float64)
    squares = np.einsum("dr,dr->d", partial, partial)

    def lower_bounds(points: np.ndarray) -> np.ndarray:
        out = squares[None, :] - 2.0 * points @ partial.T
        out += np.einsum("nr,nr->n", points, points)[:, None]
        return out

    rounded = lower_bounds(np.rint(values)[:, probe_at])
    bounds = lower_bounds(values[:, probe_at])
    dictionary.bounds_kept = (key, rounded, bounds)
    return rounded, bounds


def attack_projected(
    codes: np.ndarray,
    truth: Sequence[str],
    dictionary: Dictionary,
    columns: Sequence[str],
    releases: Sequence[ProjectedRelease],
    tolerance: int,
    penalty: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> EntryAudit:
    """Nearest neighbour among every dictionary name's projected coordinates (no noise, no
    grid: the attacker's best guess of each name's release) for (n, entries, k) codes;
    `penalty` and `groups` as audit_entry takes them."""
    if len(releases) != len(columns):
        raise ValueError("a projected attack needs every entry of the attribute projected")
    released = np.concatenate(
        [grid.decode(codes[:, j, :]) for j, grid in enumerate(releases)], axis=1
    )
    vectors, squares = dictionary.projected_space(columns, releases)
    return audit_entry(
        released, truth, dictionary.names, vectors, tolerance, False, penalty, squares, groups
    )


def _attack_entries(
    codes: np.ndarray,
    truth: Sequence[str],
    dictionary: Dictionary,
    columns: Sequence[str],
    encoders: Sequence[Release | ProjectedRelease],
    tolerance: int,
    penalty: np.ndarray | None,
    groups: np.ndarray | None = None,
) -> EntryAudit:
    """The attack on (n, entries, W) codes of one attribute, in the release's own space;
    `penalty` and `groups` as audit_entry takes them."""
    projected = [grid for grid in encoders if isinstance(grid, ProjectedRelease)]
    if projected:
        return attack_projected(
            codes, truth, dictionary, columns, projected, tolerance, penalty, groups
        )
    # Each entry's distinct coordinates only, the repeats carrying the same noise; an
    # explicit width: no row may be left to attack (every record settled already).
    kept = [codes[:, j, distinct_positions(dictionary.columns[c])] for j, c in enumerate(columns)]
    joined = np.concatenate(kept, axis=1)
    released = encoders[0].decode(joined.reshape(len(codes), joined.shape[1]))
    return attack(released, truth, dictionary, columns, tolerance, penalty, groups)


def vector_counts(tensor: np.ndarray, mapping: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
    """Per attribute, how many rows of the whole (n, M, W) release share each row's vector
    (all of the attribute's entries together): what the peer can count."""
    out = {}
    for attribute, entries in entries_by_attribute(mapping).items():
        flat = np.ascontiguousarray(tensor[:, entries, :].reshape(len(tensor), -1))
        _, inverse, sizes = np.unique(flat, axis=0, return_inverse=True, return_counts=True)
        out[attribute] = sizes[inverse.reshape(-1)]
    return out


def audit_tensor(
    tensor: np.ndarray,
    truth: Mapping[str, Sequence[str]],
    released_as: Sequence[Entry | tuple[str, str]],
    dictionary: Dictionary,
    tolerance: int = 1,
    attacker: str = "uniform",
    counts: Mapping[str, np.ndarray] | None = None,
    records: int = 0,
    only: str | None = None,
) -> AuditReport:
    """Attack released (n, M, R) codes whose records hold the values `truth` (column-wise),
    released as `released_as` says per entry (an entry without a release, or a plain
    (attribute, column) pair, released raw distances); `attacker` is one of ATTACKS. The
    "counts" attacker needs, per attribute, how often each row's vector occurs among the
    whole release's `records` rows (`counts`).

    With `only` (a measure), just the record figure of that measure is wanted: each attribute
    after the first is attacked only for the records it can still change (for "every-name",
    those whose every value so far fell), which at useful noise is a fraction of them. The
    report then holds no per-attribute figures, and only `rate(only)` is measured.

    Each attribute's entries are concatenated, as the attacker would: a middle name compared
    with two reference columns gives it twice the coordinates, and a surname's first part
    ("last:first-part") is more coordinates of the surname (combined.entries_by_attribute).
    The dictionary attack takes a name's own coordinates for its first part: exact for a
    name of one part, as the census lists hold. A projected release is attacked in its own
    space: the attacker projects every dictionary name's distances as the
    parties do, and takes the nearest (exact lookup has no meaning for real coordinates).
    """
    specs = [Entry.of(entry) for entry in released_as]
    mapping = [(spec.attribute, spec.column) for spec in specs]
    releases = [spec.release or Release() for spec in specs]
    n = len(tensor)
    known = set(dictionary.names)
    exact_all = np.ones(n, dtype=bool)
    found_all = np.ones(n, dtype=bool)
    found_any = np.zeros(n, dtype=bool)
    attributes = []
    if only is not None and only not in MEASURES:
        raise SettingError(f"unknown measure {only!r}; expected one of {MEASURES}")
    for attribute, entries in entries_by_attribute(mapping).items():
        values = np.asarray(truth[attribute], dtype=object)
        present = np.flatnonzero(values != "")
        if only is not None:
            open_rows = found_all if only == "every-name" else ~found_any
            present = present[open_rows[present]]
        columns = [mapping[m][1] for m in entries]
        encoders = [releases[m] for m in entries]
        codes, noise = tensor[:, entries, :], encoders[0].noise
        weighted = attacker != "uniform"
        if attacker == "counts" and (counts is None or records < 1):
            raise ValueError("the counts attacker needs the vectors' counts in the release")
        best: tuple[int, str, EntryAudit] | None = None
        # A weighted attacker tries each of the dictionary's priors on this attribute and
        # keeps the one that recovers most, as a peer who knows what it holds would choose.
        tried = list(dictionary.priors) if noise > 0 else [ANY_NAME]
        for prior in tried if weighted else [""]:
            penalty: np.ndarray | None
            if attacker == "counts" and weighted:
                assert counts is not None
                seen, groups = np.unique(
                    np.asarray(counts[attribute])[present], return_inverse=True
                )
                penalty = count_penalty(dictionary, noise, seen, records, prior)
            else:
                groups = None
                penalty = prior_penalty(dictionary, noise, attacker, prior or ANY_NAME)
            result = _attack_entries(
                codes[present],
                list(values[present]),
                dictionary,
                columns,
                encoders,
                tolerance,
                penalty,
                groups,
            )
            found = int((result.exact | result.nearest).sum())
            if best is None or found > best[0]:
                best = (found, prior, result)
        assert best is not None
        _, prior, result = best
        exact_all[present] &= result.exact
        found_all[present] &= result.exact | result.nearest
        found_any[present] |= result.exact | result.nearest
        if only is None:
            share = float(np.mean([v in known for v in values[present]])) if present.size else 0.0
            attributes.append(AttributeAudit(attribute, len(present), share, result, prior))
    return AuditReport(
        records=n,
        attributes=attributes,
        record_exact=float(exact_all.mean()) if n else 0.0,
        record_reidentified=float(found_all.mean()) if n else 0.0,
        record_exposed=float(found_any.mean()) if n else 0.0,
        attack=attacker,
    )
