"""How many true pairs the blocking keys will find, estimated before anything is sent.

Sealed linkage scores only the pairs that share a blinded key, so a true pair without one is
lost whatever the classifier would say. A party can measure that on its own records: a
sample of them against copies corrupted by the agreed error model at the rate the expected
linkage assumes (pprl.protocol.expectation), keyed by the agreed recipes. The share of
copies sharing a key with their record bounds the recall the run can reach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import base_names
from pprl.protocol.expectation import EXPECTATION_RECORDS, PRIOR_ERROR_RATE, corrupted_copies
from pprl.protocol.model import training
from pprl.protocol.sealed import session
from pprl.protocol.sealed.recipes import recipe_keys

# Its own stream: the estimate does not move any other draw of the run.
COMPLETENESS = "key completeness"


def key_completeness(
    agreement: Agreement,
    attributes: Mapping[str, Sequence[str]],
    rng: np.random.Generator,
    size: int = EXPECTATION_RECORDS,
    rate: float = PRIOR_ERROR_RATE,
) -> float:
    """The share of synthetic true pairs of own records that share a blocking key."""
    method = agreement.method
    recipes = session.recipes(method.sealed_keys, list(attributes))
    keyed = [a for recipe in recipes for a, _ in recipe.parts]
    compared = base_names(attribute for attribute, _ in agreement.mapping)
    names = list(dict.fromkeys([*compared, *keyed]))
    own = training.sample_records(attributes, names, size, rng)
    copies = corrupted_copies(agreement, own, names, rate, rng)
    records = len(own[names[0]])
    # As in the expected linkage: a copy with no attribute changed is the record itself.
    unchanged = rng.random(records) < (1 - rate) ** len(names)
    own_keys = recipe_keys(own, recipes)
    copy_keys = recipe_keys(copies, recipes)
    shared = [
        bool(unchanged[i] and own_keys[i]) or bool(set(own_keys[i]) & set(copy_keys[i]))
        for i in range(records)
    ]
    return float(np.mean(shared)) if shared else 0.0
