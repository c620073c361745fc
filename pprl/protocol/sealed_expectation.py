"""Sealed linkage's expected linkage, before anything is sent: the party's classifier on the
candidate pairs its blocking keys would give, against a peer file as large as its own.

Sealed MATCH scores only the pairs that share a blocking key, so the simulation does the
same (pprl.protocol.expectation has the simulation of the encodings that release vectors,
and the words). Every own record gets a copy, corrupted by the agreed error model at the
prior's rate (a copy with nothing changed is the record itself); UNMATCHED_SHARE of the
copies are left out. A sample of own records is linked against all the other copies:
candidates by the agreed recipes' keys, the model's decision on those, one to one by the
agreed assignment. Against all of them, not a sample as large as the own one, because the
look-alikes behind a key grow with the file: at 50,000 a side, linking 5,000 records against
5,000 copies expected F1 0.87 where the run linked at 0.72 (docs/privacy.md). Only the
copies that are some sampled record's candidate are smashed.

Judging the keys and the links together matters too: the copies whose key breaks are mostly
the ones the classifier rejects anyway, and an estimate that multiplied the two shares
counted them twice (FEBRL4 names: 0.55-0.59 where the run linked at 0.73).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import base_names
from pprl.protocol.expectation import (
    EXPECTATION_RECORDS,
    PRIOR_ERROR_RATE,
    UNMATCHED_SHARE,
    Simulation,
    corrupted_copies,
    counted,
)
from pprl.protocol.linkage.matching import Matches, one_to_one
from pprl.protocol.model import classifier, training
from pprl.protocol.model.features import pair_features, unit_vectors
from pprl.protocol.sealed import session
from pprl.protocol.sealed.recipes import recipe_keys
from pprl.protocol.sealed.shared_keys import shared_key_pairs
from pprl.protocol.vectors.randomness import EXPECTATION, Randomness

Columns = Mapping[str, Sequence[str]]
# Candidate pairs scored at once: their features are (pairs, 3M) float32.
_PAIRS_AT_ONCE = 1 << 16


def simulate(
    agreement: Agreement,
    attributes: Columns,
    model: classifier.Model,
    randomness: Randomness,
    size: int = EXPECTATION_RECORDS,
    rate: float = PRIOR_ERROR_RATE,
) -> Simulation:
    """The model linking `size` own records against copies of all of them (see the module's
    docstring), identity as truth."""
    rng = randomness.generator(EXPECTATION)
    recipes = session.recipes(agreement.method.sealed_keys, list(attributes))
    compared = base_names(attribute for attribute, _ in agreement.mapping)
    names = list(dict.fromkeys([*compared, *(a for recipe in recipes for a, _ in recipe.parts)]))
    everyone = training.sample_records(attributes, names, len(attributes[names[0]]), rng)
    total = len(everyone[names[0]])
    copies = corrupted_copies(agreement, everyone, names, rate, rng)
    unchanged = rng.random(total) < (1 - rate) ** len(names)
    for name in names:
        copies[name] = [
            own if same else copy
            for own, copy, same in zip(everyone[name], copies[name], unchanged, strict=True)
        ]
    left_out = rng.random(total) < UNMATCHED_SHARE
    copy_rows = np.flatnonzero(~left_out)
    own_rows = np.sort(rng.choice(total, size=min(size, total), replace=False))
    partnered = ~left_out[own_rows]
    own = _rows(everyone, names, own_rows)
    peer = _rows(copies, names, copy_rows)
    pairs = shared_key_pairs(
        _encoded(recipe_keys(own, recipes)), _encoded(recipe_keys(peer, recipes))
    )
    used, at = np.unique(pairs[:, 1], return_inverse=True)
    unit_own = unit_vectors(agreement.smash(own, rng), agreement.standardise)
    unit_peer = unit_vectors(agreement.smash(_rows(peer, names, used), rng), agreement.standardise)
    scores = np.empty(len(pairs))
    for start in range(0, len(pairs), _PAIRS_AT_ONCE):
        part = slice(start, start + _PAIRS_AT_ONCE)
        features = pair_features(unit_own[pairs[part, 0]], unit_peer[at.reshape(-1)[part]])
        scores[part] = model.decision(features)
    accepted = scores > 0
    chosen = Matches(pairs[accepted, 0], pairs[accepted, 1], scores[accepted])
    return counted(
        rate, one_to_one(chosen, agreement.method.assignment), own_rows, copy_rows, partnered
    )


def _rows(columns: Columns, names: Sequence[str], rows: np.ndarray) -> dict[str, list[str]]:
    return {name: [columns[name][i] for i in rows.tolist()] for name in names}


def _encoded(keys: list[list[str]]) -> list[list[bytes]]:
    return [[key.encode() for key in row] for row in keys]
