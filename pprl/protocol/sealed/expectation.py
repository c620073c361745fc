"""Sealed linkage's expected linkage, before anything is sent: the party's classifier on the
candidate pairs its blocking keys would give, against a peer file as large as its own.

Sealed MATCH scores only the pairs that share a blocking key, so the simulation does the
same (pprl.protocol.expectation has the simulation of the encodings that release vectors,
and the words). Every own record gets a copy, corrupted by the agreed error model at one
simulated rate (a copy with nothing changed is the record itself); UNMATCHED_SHARE of the
copies are left out, and as many strangers take their place (each attribute drawn from
another own record), so the peer's file holds people the party does not, with the namesakes
and look-alikes the own file's name frequencies give. A sample of own records is linked
against that whole file: candidates by the agreed recipes' keys, the model's decision on
those, one to one by the agreed assignment. Against all of it, not a sample as large as the
own one, because the look-alikes behind a key grow with the file: at 50,000 a side, linking
5,000 records against 5,000 copies expected F1 0.87 where the run linked at 0.72
(docs/research/privacy.md). Only the peer rows that are some sampled record's candidate are smashed.
A large own file is copied once for all the simulated rates, each rate's share of the copies
at that rate (`joins`), rather than once per rate.
The estimate's precision counts the links of the sampled records without a partner as wrong
(expectation.Simulation.quality with UNMATCHED_SHARE): until 2026-11-28 it assumed every
record partnered and said precision 0.98-1.00 on the generated namesakes, true 0.92.

Judging the keys and the links together matters too: the copies whose key breaks are mostly
the ones the classifier rejects anyway, and an estimate that multiplied the two shares
counted them twice (FEBRL4 names: 0.55-0.59 where the run linked at 0.73). The share of
partnered records whose copy shares a key (what the keys find, whatever the model says) comes
from the same join, told on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import base_names
from pprl.protocol.data.records import sharing_of
from pprl.protocol.expectation import (
    EXPECTATION_RECORDS,
    TYPICAL_ERROR_RATE,
    UNMATCHED_SHARE,
    Simulation,
    corrupted_copies,
    counted,
)
from pprl.protocol.linkage.matching import Matches, one_to_one
from pprl.protocol.model import classifier, training
from pprl.protocol.model.features import pair_features, unit_vectors
from pprl.protocol.sealed import linear_form, session
from pprl.protocol.sealed.calibration import LinkedUnits, ranked_links
from pprl.protocol.sealed.layout import positions
from pprl.protocol.sealed.recipes import entry_label, recipe_keys
from pprl.protocol.sealed.shared_keys import shared_key_counts
from pprl.protocol.vectors.randomness import EXPECTATION, Randomness

Columns = Mapping[str, Sequence[str]]
# Candidate pairs scored at once: their features are (pairs, 3M) float32.
_PAIRS_AT_ONCE = 1 << 16
# The smashing's own stream, apart from the join's draws.
SMASHED = f"{EXPECTATION} smashed"
# A peer row that is nobody's copy (`CandidateJoin.copy_rows`).
STRANGER = -1
# Own records per simulated rate from which the rates share one simulated file (`joins`):
# as many as a rate samples, so that each rate's sample is drawn from its own copies.
SHARED_FILE_RECORDS = EXPECTATION_RECORDS


@dataclass(frozen=True)
class CandidateJoin:
    """Sampled own records joined by the agreed keys to corrupted copies of every own record:
    what sealed MATCH would score, before any model is asked."""

    rate: float
    own: dict[str, list[str]]  # the sampled own records
    peer: dict[str, list[str]]  # the peer rows some sampled record shares a key with
    pairs: np.ndarray  # (pairs, 2): sampled record, row of `peer`
    entries_shared: np.ndarray  # per pair, the hidden join's slots (entries sharing a key)
    own_rows: np.ndarray  # each sampled record's row among all own records
    copy_rows: np.ndarray  # each row of `peer`: whose copy it is, or STRANGER
    partnered: np.ndarray  # per sampled record: its copy was not left out
    sharing: np.ndarray  # per sampled record: own records holding its compared values

    def keys_join(self) -> float:
        """The share of partnered sampled records that share a key with their own copy: the
        recall the keys allow, whatever the classifier says."""
        true = self.own_rows[self.pairs[:, 0]] == self.copy_rows[self.pairs[:, 1]]
        return float(np.count_nonzero(true)) / max(int(np.count_nonzero(self.partnered)), 1)


def join(
    agreement: Agreement,
    attributes: Columns,
    randomness: Randomness,
    size: int = EXPECTATION_RECORDS,
    rate: float = TYPICAL_ERROR_RATE,
) -> CandidateJoin:
    """`size` own records against copies of all of them (see the module's docstring), joined
    by the agreed recipes' keys."""
    return _joined(agreement, attributes, randomness, (rate,), size)[rate]


def joins(
    agreement: Agreement,
    attributes: Columns,
    randomness: Randomness,
    rates: Sequence[float],
    size: int = EXPECTATION_RECORDS,
    shared_from: int = SHARED_FILE_RECORDS,
) -> dict[float, CandidateJoin]:
    """`join` at each of `rates`. A file of at least `shared_from` records per rate is
    simulated once, its copies split among the rates, each rate's `size` records sampled
    among its own copies' records: a quarter of the work of four files, which grew with
    the own file (TRAIN took 424 s of 2,046 at 400,000 a side); a smaller file, once per
    rate, each rate's sample drawn from all of it."""
    total = len(next(iter(attributes.values()), ()))
    if len(rates) > 1 and total >= len(rates) * max(size, shared_from):
        return _joined(agreement, attributes, randomness, tuple(rates), size)
    return {rate: join(agreement, attributes, randomness, size, rate) for rate in rates}


def _joined(
    agreement: Agreement,
    attributes: Columns,
    randomness: Randomness,
    rates: tuple[float, ...],
    size: int,
) -> dict[float, CandidateJoin]:
    """One simulated peer file whose copies are split among `rates` (all at the one rate when
    there is one), and per rate `size` sampled records whose copies are at that rate."""
    rng = randomness.generator(EXPECTATION)
    recipes = session.recipes(agreement.method.sealed_keys, list(attributes))
    compared = base_names(attribute for attribute, _ in agreement.mapping)
    names = list(dict.fromkeys([*compared, *(a for recipe in recipes for a in recipe.attributes)]))
    everyone = training.sample_records(attributes, names, len(attributes[names[0]]), rng)
    total = len(everyone[names[0]])
    # Each record's copy's rate: a random equal share of the records for each.
    group = rng.permutation(total) % len(rates) if len(rates) > 1 else np.zeros(total, int)
    copies = {name: list(values) for name, values in everyone.items()}
    for g, rate in enumerate(rates):
        rows = np.flatnonzero(group == g)
        changed = corrupted_copies(agreement, _rows(everyone, names, rows), names, rate, rng)
        for name in names:
            for row, value in zip(rows.tolist(), changed[name], strict=True):
                copies[name][row] = value
    unchanged = rng.random(total) < (1 - np.asarray(rates)[group]) ** len(names)
    for name in names:
        copies[name] = [
            own if same else copy
            for own, copy, same in zip(everyone[name], copies[name], unchanged, strict=True)
        ]
    shared = np.array(sharing_of({name: everyone[name] for name in compared}))
    left_out = rng.random(total) < UNMATCHED_SHARE
    copy_rows = np.flatnonzero(~left_out)
    sampled = [
        np.sort(rng.choice(rows, size=min(size, len(rows)), replace=False))
        for rows in (np.flatnonzero(group == g) for g in range(len(rates)))
    ]
    own_rows = np.concatenate(sampled)
    own = _rows(everyone, names, own_rows)
    # The peer's file: the copies kept, and in place of those left out as many strangers.
    peer = _rows(copies, names, copy_rows)
    strangers = int(np.count_nonzero(left_out))
    for name, values in _strangers(everyone, names, strangers, rng).items():
        peer[name] += values
    whose = np.concatenate([copy_rows, np.full(strangers, STRANGER)])
    # The sampled records as one side, the peer's file as the other: a fallback recipe joins
    # a keyless row of either (recipes.recipe_keys).
    own_keys = recipe_keys(own, recipes, first=True)
    pairs, entries_shared = shared_key_counts(
        _encoded(own_keys),
        _encoded(recipe_keys(peer, recipes, first=False)),
        [_entry_numbers(row) for row in own_keys],
    )
    out, start = {}, 0
    for rate, rows in zip(rates, sampled, strict=True):
        mine = (pairs[:, 0] >= start) & (pairs[:, 0] < start + len(rows))
        # Only the peer rows some sampled record is a candidate of are kept (and smashed).
        used, at = np.unique(pairs[mine, 1], return_inverse=True)
        out[rate] = CandidateJoin(
            rate=rate,
            own=_rows(own, names, np.arange(start, start + len(rows))),
            peer=_rows(peer, names, used),
            pairs=np.stack([pairs[mine, 0] - start, at.reshape(-1)], axis=1),
            entries_shared=entries_shared[mine],
            own_rows=rows,
            copy_rows=whose[used],
            partnered=~left_out[rows],
            sharing=shared[rows],
        )
        start += len(rows)
    return out


def simulate(
    agreement: Agreement,
    candidates: CandidateJoin,
    model: classifier.Model,
    randomness: Randomness,
) -> tuple[Simulation, LinkedUnits]:
    """The model linking the joined records: its decision on the candidate pairs, one to one
    by the agreed assignment, identity as truth; and the links as calibration reads them
    (the sampled records of odd position held out)."""
    rng = randomness.generator(SMASHED)
    pairs = candidates.pairs
    unit_own = unit_vectors(agreement.smash(candidates.own, rng), agreement.standardise)
    unit_peer = unit_vectors(agreement.smash(candidates.peer, rng), agreement.standardise)
    scores = np.empty(len(pairs))
    for start in range(0, len(pairs), _PAIRS_AT_ONCE):
        part = slice(start, start + _PAIRS_AT_ONCE)
        features = pair_features(unit_own[pairs[part, 0]], unit_peer[pairs[part, 1]])
        scores[part] = model.decision(features)
    # As the daemon's scaled form decides: down to a margin below the model's boundary.
    accepted = scores > linear_form.lowest_accepted(model, unit_own, _PAIRS_AT_ONCE)
    chosen = Matches(pairs[accepted, 0], pairs[accepted, 1], scores[accepted])
    links = one_to_one(chosen, agreement.method.assignment)
    simulation = counted(
        candidates.rate, links, candidates.own_rows, candidates.copy_rows, candidates.partnered
    )
    # Each link's index among the candidates: whether its pair is in conflict there.
    at = positions(pairs, links.rows_a, links.rows_b)
    linked = LinkedUnits(
        own_units=unit_own[links.rows_a],
        peer_units=unit_peer[links.rows_b],
        # The hidden join tells every slot its bucket (hidden_join.every_slot_ranked).
        ranked=np.ones(len(at), dtype=bool)
        if agreement.method.join.hidden
        else ranked_links(pairs, at),
        right=candidates.own_rows[links.rows_a] == candidates.copy_rows[links.rows_b],
        sharing=candidates.sharing[links.rows_a],
        held_out=links.rows_a % 2 == 1,
    )
    return simulation, linked


def _strangers(
    everyone: Columns, names: Sequence[str], count: int, rng: np.random.Generator
) -> dict[str, list[str]]:
    """`count` people the party does not hold: each attribute drawn from a different own
    record, so that names repeat across people as often as the own file's frequencies make
    them (a peer's unpartnered records are someone's namesakes and look-alikes too)."""
    total = len(everyone[names[0]])
    return {name: [everyone[name][i] for i in rng.integers(total, size=count)] for name in names}


def _rows(columns: Columns, names: Sequence[str], rows: np.ndarray) -> dict[str, list[str]]:
    return {name: [columns[name][i] for i in rows.tolist()] for name in names}


def _entry_numbers(keys: list[str]) -> list[int]:
    """Each of a row's keys' hidden-join entry, numbered within the row."""
    numbers: dict[str, int] = {}
    return [numbers.setdefault(entry_label(key), len(numbers)) for key in keys]


def _encoded(keys: list[list[str]]) -> list[list[bytes]]:
    return [[key.encode() for key in row] for row in keys]
