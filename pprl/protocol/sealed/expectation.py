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
from pprl.protocol.sealed.recipes import recipe_keys
from pprl.protocol.sealed.shared_keys import shared_key_pairs
from pprl.protocol.vectors.randomness import EXPECTATION, Randomness

Columns = Mapping[str, Sequence[str]]
# Candidate pairs scored at once: their features are (pairs, 3M) float32.
_PAIRS_AT_ONCE = 1 << 16
# The smashing's own stream, apart from the join's draws.
SMASHED = f"{EXPECTATION} smashed"
# A peer row that is nobody's copy (`CandidateJoin.copy_rows`).
STRANGER = -1


@dataclass(frozen=True)
class CandidateJoin:
    """Sampled own records joined by the agreed keys to corrupted copies of every own record:
    what sealed MATCH would score, before any model is asked."""

    rate: float
    own: dict[str, list[str]]  # the sampled own records
    peer: dict[str, list[str]]  # the peer rows some sampled record shares a key with
    pairs: np.ndarray  # (pairs, 2): sampled record, row of `peer`
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
    rng = randomness.generator(EXPECTATION)
    recipes = session.recipes(agreement.method.sealed_keys, list(attributes))
    compared = base_names(attribute for attribute, _ in agreement.mapping)
    names = list(dict.fromkeys([*compared, *(a for recipe in recipes for a in recipe.attributes)]))
    everyone = training.sample_records(attributes, names, len(attributes[names[0]]), rng)
    total = len(everyone[names[0]])
    copies = corrupted_copies(agreement, everyone, names, rate, rng)
    unchanged = rng.random(total) < (1 - rate) ** len(names)
    for name in names:
        copies[name] = [
            own if same else copy
            for own, copy, same in zip(everyone[name], copies[name], unchanged, strict=True)
        ]
    shared = np.array(sharing_of({name: everyone[name] for name in compared}))
    left_out = rng.random(total) < UNMATCHED_SHARE
    copy_rows = np.flatnonzero(~left_out)
    own_rows = np.sort(rng.choice(total, size=min(size, total), replace=False))
    own = _rows(everyone, names, own_rows)
    # The peer's file: the copies kept, and in place of those left out as many strangers.
    peer = _rows(copies, names, copy_rows)
    strangers = int(np.count_nonzero(left_out))
    for name, values in _strangers(everyone, names, strangers, rng).items():
        peer[name] += values
    whose = np.concatenate([copy_rows, np.full(strangers, STRANGER)])
    # The sampled records as one side, the peer's file as the other: a fallback recipe joins
    # a keyless row of either (recipes.recipe_keys).
    pairs = shared_key_pairs(
        _encoded(recipe_keys(own, recipes, first=True)),
        _encoded(recipe_keys(peer, recipes, first=False)),
    )
    # Only the peer rows some sampled record is a candidate of are kept (and smashed).
    used, at = np.unique(pairs[:, 1], return_inverse=True)
    return CandidateJoin(
        rate=rate,
        own=own,
        peer=_rows(peer, names, used),
        pairs=np.stack([pairs[:, 0], at.reshape(-1)], axis=1),
        own_rows=own_rows,
        copy_rows=whose[used],
        partnered=~left_out[own_rows],
        sharing=shared[own_rows],
    )


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


def _encoded(keys: list[list[str]]) -> list[list[bytes]]:
    return [[key.encode() for key in row] for row in keys]
