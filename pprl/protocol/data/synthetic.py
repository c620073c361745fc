"""Voter-like demo data from the US Census 1990 name lists, and a reference set held apart from it.

A fixed, seeded part of the census names is held out: the default reference set is drawn only
from it and generate() never uses it (nor lets a corruption produce it), so the reference set is
disjoint from any generated data by construction, across all columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from pprl.protocol.data.corruption import Corrupter
from pprl.protocol.data.error_model import ErrorModel, error_model
from pprl.protocol.errors import SettingError

# Values that CSV readers (pandas among them) may turn into missing values; census has NA and NAN.
MISSING_LOOKALIKES = frozenset({"NA", "NAN", "NULL", "NONE", "NIL"})

_HOLDOUT_SEED = 19900401
# One name in every block of this many consecutive frequency ranks is held out, so the reference
# set has the same frequency profile as the generated data.
_HOLDOUT_STRIDE = 4
ATTRIBUTES = ("first", "middle", "last")
# Redraws of one Bob record's corruption before giving up; collisions are rare, so never reached
# short of a bug.
_MAX_CORRUPTION_ATTEMPTS = 1000


@dataclass(frozen=True)
class Person:
    """One record; ``middle`` is "" when missing."""

    id: str
    first: str
    middle: str
    last: str


@dataclass(frozen=True)
class SyntheticData:
    alice: list[Person]
    bob: list[Person]
    truth: list[tuple[str, str]]
    """(alice_id, bob_id) of every true match, sorted by alice_id."""


@dataclass(frozen=True)
class NameList:
    """Names by decreasing frequency, with sampling probabilities that sum to 1."""

    names: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    def subset(self, keep: np.ndarray) -> NameList:
        weights = self.weights[keep]
        return NameList(_frozen(self.names[keep]), _frozen(weights / weights.sum()))

    def draw(self, rng: np.random.Generator, size: int, replace: bool = True) -> np.ndarray:
        """Indices drawn by frequency."""
        return rng.choice(len(self), size=size, replace=replace, p=self.weights)


@dataclass(frozen=True)
class CensusNames:
    first: NameList
    last: NameList


def _frozen(array: np.ndarray) -> np.ndarray:
    """Read-only, because cached lists are shared by every caller."""
    array.setflags(write=False)
    return array


def _read_census_file(name: str) -> dict[str, float]:
    """Name -> frequency in percent; the ~70,000 rare surnames rounded to 0.000 share the mass
    the cumulative column still gains over them, so none is impossible to draw."""
    rows = [
        line.split() for line in resources.files("names").joinpath(name).read_text().split("\n")
    ]
    rows = [row for row in rows if row]
    freqs = {row[0]: float(row[1]) for row in rows}
    zero = [name for name, freq in freqs.items() if freq == 0.0]
    if zero:
        last_counted = max(i for i, row in enumerate(rows) if float(row[1]) > 0.0)
        residual = float(rows[-1][2]) - float(rows[last_counted][2])
        freqs.update(dict.fromkeys(zero, residual / len(zero)))
    return freqs


def _name_list(freqs: dict[str, float]) -> NameList:
    usable = sorted(
        (name for name in freqs if name not in MISSING_LOOKALIKES), key=lambda n: (-freqs[n], n)
    )
    weights = np.array([freqs[name] for name in usable])
    return NameList(_frozen(np.array(usable, dtype=object)), _frozen(weights / weights.sum()))


@cache
def census_names() -> CensusNames:
    """First names (male and female summed, as each list is a share of its sex) and surnames."""
    male = _read_census_file("dist.male.first")
    female = _read_census_file("dist.female.first")
    first = {name: male.get(name, 0.0) + female.get(name, 0.0) for name in male.keys() | female}
    return CensusNames(first=_name_list(first), last=_name_list(_read_census_file("dist.all.last")))


def _held_out_indices(n: int, rng: np.random.Generator) -> np.ndarray:
    """One random rank per block of _HOLDOUT_STRIDE consecutive ranks."""
    starts = np.arange(0, n, _HOLDOUT_STRIDE)
    picks = starts + rng.integers(0, _HOLDOUT_STRIDE, size=len(starts))
    return picks[picks < n]


@cache
def _split() -> tuple[CensusNames, CensusNames, frozenset[str]]:
    """(names for generate(), names for the reference set, every held-out string).

    Held-out surnames are picked among surnames that are no first name, so holding them out never
    takes a first name (say JOHN, also a surname) away from generate().
    """
    census = census_names()
    rng = np.random.default_rng(_HOLDOUT_SEED)
    held_first = census.first.names[_held_out_indices(len(census.first), rng)]
    first_names = frozenset(census.first.names)
    surname_only = np.flatnonzero([name not in first_names for name in census.last.names])
    held_last = census.last.names[surname_only[_held_out_indices(len(surname_only), rng)]]
    held = frozenset(held_first) | frozenset(held_last)

    def split(names: NameList) -> tuple[NameList, NameList]:
        is_held = np.array([name in held for name in names.names])
        return names.subset(~is_held), names.subset(is_held)

    gen_first, ref_first = split(census.first)
    gen_last, ref_last = split(census.last)
    return CensusNames(gen_first, gen_last), CensusNames(ref_first, ref_last), held


def default_reference(size: int = 1000, seed: int = 20240601) -> dict[str, list[str]]:
    """A reference set {"first": [...], "last": [...]} of `size` rows, drawn from a held-out part
    of the census lists that generate() never uses, so it is disjoint from generated data by
    construction.

    First names are drawn by frequency with replacement (common names recur, as in real data);
    surnames without replacement, which keeps the rows distinct.
    """
    _, reference, _ = _split()
    if not 0 <= size <= len(reference.last):
        raise SettingError(f"size must be between 0 and {len(reference.last)}, got {size}")
    rng = np.random.default_rng(seed)
    first = reference.first.names[reference.first.draw(rng, size)]
    last = reference.last.names[reference.last.draw(rng, size, replace=False)]
    return {"first": first.tolist(), "last": last.tolist()}


Triple = tuple[str, str, str]


def _distinct_triples(
    rng: np.random.Generator, names: CensusNames, n: int, middle_missing: float
) -> list[Triple]:
    """n distinct (first, middle, last) triples drawn by frequency, in batches of numpy draws.

    A middle name equal to the first name is not drawn; it reads like a data-entry error.
    """
    n_first = len(names.first)
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < n:
        batch = n - len(keys) + n // 10 + 16
        first = names.first.draw(rng, batch)
        middle = names.first.draw(rng, batch)
        middle[rng.random(batch) < middle_missing] = n_first  # one past the end: no middle name
        last = names.last.draw(rng, batch)
        ok = first != middle
        batch_keys = (first[ok] * (n_first + 1) + middle[ok]) * len(names.last) + last[ok]
        merged = np.concatenate([keys, batch_keys])
        _, first_seen = np.unique(merged, return_index=True)
        keys = merged[np.sort(first_seen)][:n]
    first_middle, last = np.divmod(keys, len(names.last))
    first, middle = np.divmod(first_middle, n_first + 1)
    middle_names = np.append(names.first.names, "")  # so index n_first reads as ""
    return list(
        zip(
            names.first.names[first].tolist(),
            middle_names[middle].tolist(),
            names.last.names[last].tolist(),
            strict=True,
        )
    )


def _corrupted_copy(
    corrupter: Corrupter,
    person: Triple,
    n_errors: int,
    blank: bool,
    taken: set[Triple],
    banned: frozenset[str],
    model: ErrorModel | None = None,
) -> Triple:
    """A corruption of ``person`` that is no other record and uses no held-out name; with
    ``blank``, one non-empty field is also emptied (a missing value, as GeCo makes them).
    With an error ``model``, it corrupts instead of ``n_errors`` single edits; a person whose
    every corruption by the model is refused (a phenomenon with few variants, each another
    record or a held-out name) gets a typo instead, as a record the model does not apply to."""
    for chosen in [None] if model is None else [model, error_model("typo")]:
        for _ in range(_MAX_CORRUPTION_ATTEMPTS):
            if chosen is None:
                values = corrupter.corrupt_record(person, n_errors)
            else:
                values = chosen.corrupt(person, corrupter.rng, names=ATTRIBUTES, avoid=banned)
            if blank:
                filled = [i for i, value in enumerate(values) if value]
                values[filled[int(corrupter.rng.integers(len(filled)))]] = ""
            copy = (values[0], values[1], values[2])
            if copy not in taken and banned.isdisjoint(copy) and any(copy):
                taken.add(copy)
                return copy
    raise RuntimeError(f"no acceptable corruption of {person} in {_MAX_CORRUPTION_ATTEMPTS} tries")


def _people(prefix: str, triples: Iterable[Triple]) -> list[Person]:
    return [Person(f"{prefix}{i:06d}", *triple) for i, triple in enumerate(triples, start=1)]


def _namesakes(
    rng: np.random.Generator,
    names: CensusNames,
    alice: Sequence[Triple],
    k: int,
    taken: set[Triple],
) -> list[Triple]:
    """k new people, each with the first and last name of a distinct person of Alice's and
    another middle name (drawn by frequency, never the first name): the look-alikes a
    register holds that are not the same person."""
    chosen = rng.choice(len(alice), size=k, replace=False)
    people = []
    for index in chosen.tolist():
        first, middle, last = alice[index]
        while True:
            drawn = names.first.names[names.first.draw(rng, 8)]
            fits = [m for m in drawn.tolist() if m not in (first, middle)]
            fits = [m for m in fits if (first, m, last) not in taken]
            if fits:
                break
        person = (first, fits[0], last)
        taken.add(person)
        people.append(person)
    return people


def generate(
    size: int,
    seed: int,
    overlap: float = 1.0,
    middle_missing: float = 0.15,
    errors_per_row: int | tuple[int, int] = 1,
    missing_rate: float = 0.0,
    errors: str | None = None,
    namesakes: float = 0.0,
) -> SyntheticData:
    """Alice's `size` people and Bob's `size` records, round(overlap * size) of which are Alice's
    people with `errors_per_row` errors each (a (low, high) pair draws each row's count
    uniformly from low..high); the rest of Bob's are people Alice lacks. A share
    `missing_rate` of Bob's copies also lose one value.

    `errors` names an error model (pprl.protocol.data.error_model) that corrupts Bob's copies
    instead of `errors_per_row` single edits. A share `namesakes` of the people Alice lacks
    are namesakes of hers: her first and last name, another middle name.

    Bob's rows are shuffled before ids are assigned, so neither order nor ids hint at matches.
    """
    shares = (overlap, middle_missing, missing_rate, namesakes)
    if size < 0 or not all(0.0 <= x <= 1.0 for x in shares):
        raise SettingError(
            "need size >= 0 and overlap, middle_missing, missing_rate, namesakes within [0, 1]"
        )
    low, high = errors_per_row if isinstance(errors_per_row, tuple) else (errors_per_row,) * 2
    if not 1 <= low <= high:
        raise SettingError(f"errors_per_row must be at least 1 (low <= high), got {errors_per_row}")
    model = None if errors is None else error_model(errors)
    if model is not None and errors_per_row != 1:
        raise SettingError("give errors_per_row or an error model, not both")
    names, _, held = _split()
    rng = np.random.default_rng(seed)
    n_match = round(overlap * size)
    drawn = _distinct_triples(rng, names, 2 * size - n_match, middle_missing)
    alice, fresh = drawn[:size], drawn[size:]
    taken, banned = set(drawn), held | MISSING_LOOKALIKES
    n_namesakes = round(namesakes * len(fresh))
    if n_namesakes:
        # The namesakes take the place of some fresh people, whose triples are free again.
        for person in fresh[:n_namesakes]:
            taken.discard(person)
        fresh = [*_namesakes(rng, names, alice, n_namesakes, taken), *fresh[n_namesakes:]]
    sources = rng.choice(size, size=n_match, replace=False)
    corrupter = Corrupter(rng)
    counts = rng.integers(low, high + 1, size=n_match)
    blanks = rng.random(n_match) < missing_rate
    copies = [
        _corrupted_copy(corrupter, alice[i], int(k), bool(b), taken, banned, model)
        for i, k, b in zip(sources.tolist(), counts.tolist(), blanks.tolist(), strict=True)
    ]
    rows = [*zip(copies, sources.tolist(), strict=True), *((t, None) for t in fresh)]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    bob = _people("B", (triple for triple, _ in rows))
    alice_people = _people("A", alice)
    truth = sorted(
        (alice_people[source].id, person.id)
        for person, (_, source) in zip(bob, rows, strict=True)
        if source is not None
    )
    return SyntheticData(alice=alice_people, bob=bob, truth=truth)


def generate_third(
    data: SyntheticData, seed: int, overlap: float = 1.0, errors_per_row: int = 1
) -> tuple[list[Person], list[tuple[str, str]]]:
    """A third register ("C" ids) beside `data`: round(overlap * len(alice)) corrupted copies of
    Alice's people, each with its own `errors_per_row` edits (so Bob's and Carol's copies of one
    person differ from each other by both parties' errors), and people neither holds.

    Returns Carol's shuffled records and the (alice_id, carol_id) truth; Bob-Carol truth
    follows by joining on Alice's id (`pair_truth`). Its own random stream, so the two-party
    data of `seed` stays what it was.
    """
    if not 0.0 <= overlap <= 1.0 or errors_per_row < 1:
        raise SettingError("need overlap within [0, 1] and errors_per_row >= 1")
    names, _, held = _split()
    rng = np.random.default_rng([seed, 3])
    size = len(data.alice)
    alice = [(p.first, p.middle, p.last) for p in data.alice]
    taken = {*alice, *((p.first, p.middle, p.last) for p in data.bob)}
    n_match = round(overlap * size)
    fresh: list[Triple] = []
    while len(fresh) < size - n_match:
        for triple in _distinct_triples(rng, names, 2 * (size - n_match), middle_missing=0.15):
            if triple not in taken and len(fresh) < size - n_match:
                taken.add(triple)
                fresh.append(triple)
    banned = held | MISSING_LOOKALIKES
    sources = rng.choice(size, size=n_match, replace=False).tolist()
    corrupter = Corrupter(rng)
    copies = [
        _corrupted_copy(corrupter, alice[i], errors_per_row, False, taken, banned) for i in sources
    ]
    rows = [*zip(copies, sources, strict=True), *((t, None) for t in fresh)]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    carol = _people("C", (triple for triple, _ in rows))
    truth = sorted(
        (data.alice[source].id, person.id)
        for person, (_, source) in zip(carol, rows, strict=True)
        if source is not None
    )
    return carol, truth


def pair_truth(
    alice_bob: Sequence[tuple[str, str]], alice_carol: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(bob_id, carol_id) of the records both hold of one of Alice's people."""
    bob_of = dict(alice_bob)
    return sorted((bob_of[a], c) for a, c in alice_carol if a in bob_of)
