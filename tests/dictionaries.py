"""Attackers' dictionaries for tests: the census lists as census_dictionary builds them, cut
to their commonest names and the names the records hold, so that a module's attacks cost
seconds instead of the minute all 91,907 names take to be smashed against a reference set.
Tests that use them check how the gate decides, not the census attack's absolute rates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from pprl.protocol.data import synthetic
from pprl.protocol.privacy.audit import FIRST_NAMES, SURNAMES, Dictionary

KEPT_NAMES = 6000


def cut_census_dictionary(
    reference_columns: Mapping[str, Sequence[str]],
    held: Iterable[str],
    kept: int = KEPT_NAMES,
) -> Dictionary:
    """The census lists with census_dictionary's weights and priors (either list's frequency,
    and each list's own), cut to the `kept` commonest names of each and every name in `held`."""
    census = synthetic.census_names()
    held = set(held)
    lists = []
    for names, weights in ((census.first.names, census.first.weights),
                           (census.last.names, census.last.weights)):  # fmt: skip
        keep = [i for i, name in enumerate(names) if i < kept or name in held]
        lists.append(([names[i] for i in keep], np.asarray(weights)[keep]))
    (first, first_weights), (last, last_weights) = lists
    none_first, none_last = np.zeros(len(first)), np.zeros(len(last))
    priors = {
        FIRST_NAMES: [*first_weights, *none_last],
        SURNAMES: [*none_first, *last_weights],
    }
    weights = [*(first_weights / 2), *(last_weights / 2)]
    return Dictionary([*first, *last], reference_columns, None, weights, priors)
