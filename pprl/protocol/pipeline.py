"""One party's side of Algorithm 1 on plain arrays: agree, release, train, match, link.

This is the method once. The daemon wraps these functions with storage, the wire and
progress (pprl.party.phases.work); the benchmarks call them in one process for both parties
(`link_in_process`). Nothing here reads a file or touches the network.

Rows of a released tensor are in a secret random order (`Released.order`), so the tensor's
row order tells the peer nothing about the order, often alphabetical, of the records file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.agreement import Agreement
from pprl.protocol.encodings.base import Runner
from pprl.protocol.linkage import candidates, matching, plans, soft_links
from pprl.protocol.linkage.released import Released, record_pairs
from pprl.protocol.model import classifier
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.randomness import RELEASE, SHUFFLE, TRAINING, Randomness

Columns = Mapping[str, Sequence[str]]


def release(
    agreement: Agreement,
    attributes: Columns,
    randomness: Randomness,
    progress: Progress | None = None,
) -> Released:
    """Shuffle the records, then smash them into released codes (with the agreed noise, keyed
    when the party has a noise key)."""
    n = len(next(iter(attributes.values()), []))
    order = randomness.generator(SHUFFLE).permutation(n)
    shuffled = {name: [values[i] for i in order] for name, values in attributes.items()}
    tensor = agreement.smash(
        shuffled, randomness.generator(RELEASE), progress, key=randomness.noise_key
    )
    return Released(order, tensor)


def train(
    agreement: Agreement, attributes: Columns, randomness: Randomness
) -> tuple[classifier.Model, int]:
    """A party's classifier from its own records only (Algorithm 2), and its pair count."""
    return agreement.encoding.train(agreement, attributes, randomness.generator(TRAINING))


def match(
    agreement: Agreement,
    own: candidates.TensorRows,
    peer: candidates.TensorRows,
    model: classifier.Model,
    *,
    run: Runner = plans.run_here,
    progress: Progress | None = None,
    threshold: float = 0.0,
) -> matching.Matched:
    """Algorithm 3 on candidates: the pairs scoring all pairs would keep (best `top_k` per own
    row) above the party's `threshold`, then the agreed one-to-one assignment. `run` executes
    the candidate blocks (here, or on the party's own cluster)."""
    return agreement.encoding.match(agreement, own, peer, model, run, progress, threshold)


def soft_match(
    agreement: Agreement,
    own: candidates.TensorRows,
    peer: candidates.TensorRows,
    model: classifier.Model,
    top_k: int,
    *,
    run: Runner = plans.run_here,
    progress: Progress | None = None,
) -> matching.Matches:
    """Per own row its `top_k` best-scoring peer rows, whatever their score, best first
    (soft_links). The candidate bounds only hold above a decision of 0, so every pair is
    scored: by one product for a linear model without caps, else block by block."""
    soft_links.check_top_k(top_k, peer.shape[0])
    selection = matching.Selection(model, top_k, "a", threshold=-np.inf)
    outcome = candidates.accepted_pairs(
        own, peer, selection, run=run, progress=progress, standardise=agreement.standardise
    )
    return outcome.matches


@dataclass(frozen=True)
class PartyLinkage:
    """One party's side of an in-process run; pairs are (own record, peer record) indices in
    the order of the records given."""

    released: Released
    model: classifier.Model
    matched: matching.Matched
    pairs: set[tuple[int, int]]


@dataclass(frozen=True)
class Linkage:
    """Both parties' accepted pairs and the agreed linkage, as (Alice index, Bob index)."""

    alice: PartyLinkage
    bob: PartyLinkage

    @property
    def agreed(self) -> set[tuple[int, int]]:
        return self.alice.pairs & {(a, b) for b, a in self.bob.pairs}


def link_in_process(
    agreement: Agreement,
    alice: Columns,
    bob: Columns,
    randomness: tuple[Randomness, Randomness],
) -> Linkage:
    """Both parties' phases in one process, as two daemons run them: the same draws for the
    same seeds, so the same pairs."""
    parties = [(alice, randomness[0]), (bob, randomness[1])]
    released = [release(agreement, records, rand) for records, rand in parties]
    models = [train(agreement, records, rand)[0] for records, rand in parties]
    sides = []
    for own in range(2):
        peer = 1 - own
        found = match(agreement, released[own].tensor, released[peer].tensor, models[own])
        pairs = record_pairs(found.matches, released[own], released[peer])
        sides.append(PartyLinkage(released[own], models[own], found, pairs))
    return Linkage(*sides)
