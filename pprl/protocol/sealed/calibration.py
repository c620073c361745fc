"""A match probability for each pair a party's classifier accepts in sealed linkage, from
the only thing the encrypted comparison tells it: the pair's bucket among the agreed
thresholds (sealed.scoring.BucketCount), or, for a pair in no conflict, that it passed 0.

TRAIN's simulation links a sample of the party's own records against corrupted copies of
them and strangers (sealed.expectation), at every simulated error rate. Each simulated link
gets the bucket the daemon's scaled form would give it (`buckets`, with the scale MATCH
uses) and whether it is right. The probability of a bucket is the share of right links in
it among the records of one half of the sample, drawn towards the pooled share where a
bucket holds few, and never 0 or 1; the other half checks it (`Calibration.checked`). A
pair whose record shares all its compared values with other records (`sharing`) is one of
that many the values cannot tell apart: its probability is divided among them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from pprl.protocol.model.classifier import Model
from pprl.protocol.sealed import linear_form
from pprl.protocol.sealed.layout import conflicted

# Links of the pooled share each bucket's estimate starts from: a bucket with a handful of
# synthetic links says little on its own.
PRIOR_LINKS = 5.0


@dataclass(frozen=True)
class SimulatedLinks:
    """One simulation's one-to-one links as calibration reads them."""

    buckets: np.ndarray  # (links,) the bucket each link's scaled score reaches
    ranked: np.ndarray  # (links,) in conflict: told its bucket, not only its sign
    right: np.ndarray  # (links,) the copy of the record itself
    sharing: np.ndarray  # (links,) own records holding the record's compared values
    held_out: np.ndarray  # (links,) the record is in the half that checks


@dataclass(frozen=True)
class LinkedUnits:
    """A simulation's one-to-one links before they are scored as the daemon scores them:
    both sides' unit vectors, and what calibration needs besides."""

    own_units: np.ndarray  # (links, M, k)
    peer_units: np.ndarray  # (links, M, k)
    ranked: np.ndarray
    right: np.ndarray
    sharing: np.ndarray
    held_out: np.ndarray


@dataclass(frozen=True)
class Scaling:
    """How the party's MATCH scores a pair: its evaluator's plaintext and the (shift, scale)
    of its scaled forms (linear_form.scaling), with the agreed thresholds."""

    peer: linear_form.Peer
    shift: float
    scale: float
    thresholds: tuple[float, ...]

    def links(self, model: Model, linked: LinkedUnits) -> SimulatedLinks:
        """The links' buckets as the encrypted comparison would count them."""
        entries = linked.own_units.shape[1]
        x, c = linear_form.scorer_part(model, linked.own_units, self.peer)
        alternative = linear_form.alternative_part(model, linked.own_units, self.peer)
        y = linear_form.evaluator_part(linked.peer_units, self.peer)
        first, second = linear_form.plain_scores(x, c, alternative, y, entries)
        scaled = (first + self.shift) * self.scale
        other = None if second is None else (second + self.shift) * self.scale
        return SimulatedLinks(
            buckets(scaled, other, self.thresholds),
            linked.ranked,
            linked.right,
            linked.sharing,
            linked.held_out,
        )


def scaling(
    model: Model, units: np.ndarray, peer: linear_form.Peer, thresholds: Sequence[float]
) -> Scaling:
    """The scaling MATCH will use, from the party's own unit vectors."""
    x, c = linear_form.scorer_part(model, units, peer)
    alternative = linear_form.alternative_part(model, units, peer)
    own_y = linear_form.evaluator_part(units, peer)
    shift, scale = linear_form.scaling(x, c, alternative, own_y, units.shape[1])
    return Scaling(peer, shift, scale, tuple(thresholds))


def buckets(
    scores: np.ndarray, second: np.ndarray | None, thresholds: Sequence[float]
) -> np.ndarray:
    """The bucket of each scaled score: how many agreed thresholds it passes; with a movers'
    alternative, a pair only that one accepts is in bucket 1 (as BucketCount reads it)."""
    count = np.searchsorted(np.asarray(thresholds, dtype=np.float64), scores, side="left")
    if second is not None:
        count = np.where((count == 0) & (second > 0), 1, count)
    return count.astype(np.int64)


def ranked_links(candidates: np.ndarray, links: np.ndarray) -> np.ndarray:
    """Per link (an index into `candidates`), whether its pair shares a row with another
    candidate: only such a pair is told its bucket (layout.conflicted)."""
    return conflicted(candidates)[links]


@dataclass(frozen=True)
class Calibration:
    """Per class the probability that an accepted pair is right: index b in 1..B a pair in
    conflict in bucket b, B + 1 a pair told only that it passed 0, and 0 a pair this party
    did not score (a check row's, graph_checks.UNSCORED, left to the peer's classifier):
    the share over all classes."""

    probabilities: tuple[float, ...]
    links: tuple[int, ...]  # the synthetic links each class was fitted on
    checked: dict[str, float] = field(default_factory=dict)

    @property
    def unranked(self) -> int:
        return len(self.probabilities) - 1

    def classes(self, bucket: np.ndarray, ranked: np.ndarray) -> np.ndarray:
        """Each accepted pair's class: 0 unscored, its bucket when ranked, the last class
        otherwise."""
        told = np.where(ranked, bucket, self.unranked)
        return np.where(bucket == 0, 0, told).astype(np.int64)

    def of(self, bucket: np.ndarray, ranked: np.ndarray, sharing: np.ndarray) -> np.ndarray:
        """Each accepted pair's probability; `sharing`: how many records on the side with more
        hold the pair's compared values."""
        table = np.asarray(self.probabilities, dtype=np.float64)
        return table[self.classes(bucket, ranked)] / np.maximum(sharing, 1)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        return cls(
            tuple(float(p) for p in data["probabilities"]),
            tuple(int(n) for n in data["links"]),
            {k: float(v) for k, v in data.get("checked", {}).items()},
        )


def fitted(simulated: Sequence[SimulatedLinks], thresholds: Sequence[float]) -> Calibration:
    """The calibration of the links of one half of the sampled records (every simulated error
    rate pooled, as the estimate pools them), checked on the other half."""
    classes = len(thresholds) + 2
    counts = np.zeros(classes)
    right = np.zeros(classes)
    for s in simulated:
        use = ~s.held_out & (s.sharing <= 1)
        index = np.where(s.ranked, s.buckets, classes - 1)[use]
        np.add.at(counts, index, 1.0)
        np.add.at(right, index, s.right[use].astype(np.float64))
    # Half a right and half a wrong link added (Jeffreys' prior): no share of a finite
    # sample is a certainty, however many of its links were right.
    pooled = float((right[1:].sum() + 0.5) / (counts[1:].sum() + 1.0))
    table = (right + 0.5 + PRIOR_LINKS * pooled) / (counts + 1.0 + PRIOR_LINKS)
    table[0] = pooled
    calibration = Calibration(tuple(float(p) for p in table), tuple(int(n) for n in counts))
    return replace(calibration, checked=_checked(calibration, simulated))


def _checked(calibration: Calibration, simulated: Sequence[SimulatedLinks]) -> dict[str, float]:
    """On the held-out half's links: their mean probability against the share right, the
    Brier score, and the lowest and highest tenth's shares right."""
    held = [s for s in simulated if s.held_out.any()]
    if not held:
        return {}
    p = np.concatenate([calibration.of(s.buckets, s.ranked, s.sharing)[s.held_out] for s in held])
    y = np.concatenate([s.right[s.held_out] for s in held]).astype(np.float64)
    if not len(p):
        return {}
    order = np.argsort(p, kind="stable")
    tenth = max(1, len(p) // 10)
    return {
        "links": float(len(p)),
        "mean_probability": float(p.mean()),
        "precision": float(y.mean()),
        "brier": float(np.mean((p - y) ** 2)),
        "lowest_tenth_precision": float(y[order[:tenth]].mean()),
        "highest_tenth_precision": float(y[order[-tenth:]].mean()),
    }
