"""How well a party's classifier will link: estimated before anything is sent, and again,
fitted to its own links, once it has linked.

After TRAIN a party holds a model trained on synthetic pairs of its own records. It can make
more such pairs that the model has not seen (a fresh sample of its records, freshly corrupted
by the agreed error model, both released as its and the peer's real releases are: keyed
noise under two different keys, so namesakes share a vector within a side and not across)
and link them as MATCH would: candidates, top-k, the agreed one-to-one
assignment. The pairs are labelled, so the links can be counted: of the own records whose
copy is in the simulated peer file, the share linked to it (`linked`) and to another
(`mislinked`); of those whose copy was left out, the share linked to something (`stray`).

Two things a party cannot know before it links decide how far that is from the truth:
- how much the peer's records differ from its own. The simulation changes each compared
  attribute of a copy with probability `error_rate` (a copy with none changed is the record
  itself, released again). It runs at several rates (ERROR_RATES).
- how many of its records have a partner in the peer's file at all. Each simulated file
  leaves UNMATCHED_SHARE of its records without a partner.

Before sending (TRAIN) the estimate is the expected linkage over the simulated rates, each
as likely: the right and the accepted links pooled over them, precision the one over the
other and recall the mean share linked, the links of the records without a partner (the
simulated UNMATCHED_SHARE) counted wrong. A single prior rate fitted one data set and missed
another: 0.3, FEBRL4's (its true pairs differ in 30% of their names and 24% of all ten
fields), put sealed linkage's estimate within 0.02 of FEBRL4 names' true F1 and 0.105 above
the generated namesakes', whose every copy carries one to three errors over three names;
the mean over the rates misses both by at most 0.08 (docs/research/privacy.md). The F1 at the lowest
and highest simulated rates goes with it (`Spread`): how far the estimate hangs on the rate.

After MATCH (before REVEAL sends ids) the party knows how many pairs it accepted and their
mean score. Each rate predicts both from the number M of own records with a partner:
accepted = M (linked + mislinked) + (n - M) stray. The rate whose predicted mean score fits
the observed one is taken (interpolated between rates; the nearest end when outside), M is
solved from the accepted count, and precision is M linked / accepted. When strays are linked
about as often as partnered records (heavy noise), the count says nothing of M and every own
record is assumed to have a partner, up to the peer's record count.

docs/research/privacy.md ("Expected linkage") measures both against the truth on data this project
did not generate, at several noise levels.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import base_names
from pprl.protocol.data.error_model import error_model
from pprl.protocol.linkage.matching import Matches
from pprl.protocol.model import classifier, training
from pprl.protocol.vectors.keyed_noise import KEY_BYTES, NoiseKey
from pprl.protocol.vectors.randomness import EXPECTATION, Randomness

# The most own records one estimate links against their corrupted copies: 5,000 x 5,000
# pairs take a few seconds per rate, and precision at that scale is near the real run's.
EXPECTATION_RECORDS = 5000
# The shares of compared values the simulated copies change (see above), and a typical one
# (FEBRL4's): the run report's curve is its simulation's until MATCH fits a rate.
ERROR_RATES = (0.15, 0.3, 0.45, 0.6)
TYPICAL_ERROR_RATE = 0.3
# The share of each simulated file's records left without a partner.
UNMATCHED_SHARE = 0.2
# Below this difference between (linked + mislinked) and stray, the accepted count does not
# tell how many own records have a partner.
MIN_SEPARATION = 0.1
# Thresholds at which each simulation's precision and recall are kept (the run report's curve):
# this many, evenly from 0 to the highest accepted score.
CURVE_POINTS = 41
# Below this expected F1 a run stops before EXCHANGE ([privacy] min_expected_f1). 0.8, not
# 0.9 as before: at 0.9 names alone were refused where they link as well as Splink, the
# non-private linker (estimates FEBRL4's names 0.83-0.85 for F1 0.85, the European
# registers' 0.88 for 0.91; docs/research/registers.md, "The minimum expected F1").
DEFAULT_MIN_EXPECTED_F1 = 0.8


@dataclass(frozen=True)
class Spread:
    """The expected F1 at the least and the most changed pairs simulated: how much the
    estimate hangs on the error rate, which no party knows before linking."""

    most_changed: tuple[float, float]  # (the highest simulated rate, its F1)
    least_changed: tuple[float, float]  # (the lowest, its F1)

    def words(self) -> str:
        (high, at_high), (low, at_low) = self.most_changed, self.least_changed
        return (
            f"the mean over {low:.0%} to {high:.0%} of compared values changed, each as likely: "
            f"from {at_high:.2f} if the pairs differ in {high:.0%} of their compared values "
            f"to {at_low:.2f} if in {low:.0%}"
        )

    @classmethod
    def read(cls, expected: Mapping[str, Any]) -> Spread | None:
        """As ExpectedQuality.as_dict wrote it; None where it wrote none."""
        if "f1_most_changed" not in expected:
            return None
        return cls(
            (expected["rate_most_changed"], expected["f1_most_changed"]),
            (expected["rate_least_changed"], expected["f1_least_changed"]),
        )


def spread_words(expected: Mapping[str, Any]) -> str:
    """The spread of an estimate as ExpectedQuality.as_dict wrote it, in words; "" without."""
    spread = Spread.read(expected)
    return spread.words() if spread else ""


@dataclass(frozen=True)
class ExpectedQuality:
    """A classifier's expected precision and recall, and the F1's spread over the simulated
    error rates when there are several."""

    precision: float
    recall: float
    pairs: int  # the synthetic matching pairs it was measured on
    spread: Spread | None = None

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total

    def words(self) -> str:
        spread = f"; {self.spread.words()}" if self.spread else ""
        return (
            f"expected F1 about {self.f1:.2f} (precision {self.precision:.2f}, recall "
            f"{self.recall:.2f}{spread}; this party's classifier on {self.pairs:,} held-out "
            "synthetic pairs of its own records, encoded as the real run encodes them)"
        )

    def as_dict(self) -> dict[str, float]:
        out = {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "pairs": self.pairs,
        }
        if self.spread:
            (high, at_high), (low, at_low) = self.spread.most_changed, self.spread.least_changed
            out |= {"f1_most_changed": at_high, "rate_most_changed": high}
            out |= {"f1_least_changed": at_low, "rate_least_changed": low}
        return out


@dataclass(frozen=True)
class Simulation:
    """One simulated linkage at one error rate: shares of own records, and mean scores of
    the accepted pairs of each kind (0 where there are none)."""

    error_rate: float
    partnered: int  # own records whose copy is in the simulated peer file
    linked: float
    mislinked: float
    stray: float
    linked_score: float
    mislinked_score: float
    stray_score: float
    # (threshold, precision, recall) with every own record partnered, as quality() assumes:
    # what raising the cut above 0 would do (greedy one-to-one drops the lowest pairs only).
    curve: tuple[tuple[float, float, float], ...] = ()

    def quality(self, unpartnered: float = 0.0) -> ExpectedQuality:
        """What the simulation says before linking, with a share `unpartnered` of own records
        without a partner (their links, `stray`, are all wrong): 0 assumes every record has
        one."""
        right, accepted = self.links(unpartnered)
        precision = right / accepted if accepted else 0.0
        return ExpectedQuality(precision, self.linked, self.partnered)

    def links(self, unpartnered: float = 0.0) -> tuple[float, float]:
        """The right links and all accepted ones, as shares of own records, with a share
        `unpartnered` of them without a partner."""
        right = (1 - unpartnered) * self.linked
        accepted = (1 - unpartnered) * (self.linked + self.mislinked) + unpartnered * self.stray
        return right, accepted

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Simulation:
        """As as_dict wrote it; a model stored before curves were kept has none."""
        values = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        values["curve"] = tuple(tuple(point) for point in values.get("curve", ()))
        return cls(**values)


@dataclass(frozen=True)
class LinkedEstimate:
    """The estimate fitted to a party's own links."""

    quality: ExpectedQuality
    error_rate: float  # the fitted share of compared values that differ within a pair
    partnered: float  # own records estimated to have a partner in the peer's file
    fitted: bool  # False: the count could not tell, every record was assumed partnered

    def words(self, accepted: int, records: int) -> str:
        q = self.quality
        said = (
            f"expected F1 about {q.f1:.2f} (precision {q.precision:.2f}, recall "
            f"{q.recall:.2f}), fitted to the {accepted:,} pairs accepted: the pairs differ in "
            f"about {self.error_rate:.0%} of their compared values"
        )
        if self.fitted:
            return said + (
                f", and about {self.partnered:,.0f} of the {records:,} own records have a "
                "partner in the peer's file"
            )
        return said + "; at this noise the count cannot tell how many have a partner (all assumed)"

    def as_dict(self) -> dict[str, float]:
        return self.quality.as_dict() | {
            "error_rate": self.error_rate,
            "partnered": self.partnered,
            "fitted": float(self.fitted),
        }


def simulate(
    agreement: Agreement,
    attributes: Mapping[str, Sequence[str]],
    model: classifier.Model,
    randomness: Randomness,
    size: int = EXPECTATION_RECORDS,
    rates: Sequence[float] = ERROR_RATES,
) -> tuple[Simulation, ...]:
    """The model linking a fresh sample of own records with fresh copies of them at each
    error rate, as MATCH links (identity is truth), UNMATCHED_SHARE of each side unpartnered.
    Sealed linkage links only pairs that share a key: pprl.protocol.sealed.expectation."""
    rng = randomness.generator(EXPECTATION)
    names = base_names(attribute for attribute, _ in agreement.mapping)
    own = training.sample_records(attributes, names, size, rng)
    own_key, peer_key = _stand_in_keys(randomness, rng)
    own_tensor = agreement.smash(own, rng, key=own_key)
    # An unchanged copy: the record released again, by the other side.
    released_again = agreement.smash(own, rng, key=peer_key)
    records = len(own_tensor)
    order = rng.permutation(records)
    left_out = round(UNMATCHED_SHARE * records) if records >= 10 else 0
    own_rows = np.sort(order[left_out:])
    copy_rows = np.sort(np.concatenate([order[:left_out], order[2 * left_out :]]))
    partnered = np.isin(own_rows, copy_rows)
    n = len(names)
    found = []
    for rate in rates:
        copies = corrupted_copies(agreement, own, names, rate, rng)
        copy_tensor = agreement.smash(copies, rng, key=peer_key)
        unchanged = rng.random(records) < (1 - rate) ** n
        copy_tensor[unchanged] = released_again[unchanged]
        matched = pipeline.match(agreement, own_tensor[own_rows], copy_tensor[copy_rows], model)
        found.append(counted(rate, matched.matches, own_rows, copy_rows, partnered))
    return tuple(found)


def corrupted_copies(
    agreement: Agreement,
    own: Mapping[str, Sequence[str]],
    names: Sequence[str],
    rate: float,
    rng: np.random.Generator,
) -> dict[str, list[str]]:
    """A copy of each own record with each attribute of `names` changed with probability
    `rate` by the agreed error model (a copy with none changed is the record itself)."""
    n = len(names)
    counts = {k: math.comb(n, k) * rate**k * (1 - rate) ** (n - k) for k in range(1, n + 1)}
    base = error_model(agreement.method.error_model)
    return training.corrupt_records(
        own,
        names,
        rng=rng,
        corruption=base.with_counts(counts),
        kinds=agreement.kinds,
        scales=agreement.scales,
    )


def _stand_in_keys(
    randomness: Randomness, rng: np.random.Generator
) -> tuple[NoiseKey | None, NoiseKey | None]:
    """Two throwaway keys where the real release is keyed: one value's noise is then the same
    in every record of a side, as in the real releases (namesakes share vectors), and
    independent between the sides; none where the release draws fresh noise."""
    if randomness.noise_key is None:
        return None, None
    return NoiseKey(rng.bytes(KEY_BYTES)), NoiseKey(rng.bytes(KEY_BYTES))


def counted(
    rate: float,
    matches: Matches,
    own_rows: np.ndarray,
    copy_rows: np.ndarray,
    partnered: np.ndarray,
) -> Simulation:
    """One simulation from its one-to-one links: pair t links own record own_rows[rows_a[t]]
    to the copy of record copy_rows[rows_b[t]]; `partnered` says per own row whether its copy
    is among the copies."""
    scores = matches.scores.astype(float)
    correct = own_rows[matches.rows_a] == copy_rows[matches.rows_b]
    has_partner = partnered[matches.rows_a]
    wrong = has_partner & ~correct
    stray = ~has_partner
    with_partner = int(np.count_nonzero(partnered))
    without = len(partnered) - with_partner

    def mean(mask: np.ndarray) -> float:
        return float(scores[mask].mean()) if mask.any() else 0.0

    top = float(scores.max()) if len(scores) else 0.0
    cuts = np.linspace(0.0, top, CURVE_POINTS, endpoint=False)
    right = [np.count_nonzero(correct & (scores > t)) for t in cuts]
    kept = [np.count_nonzero(has_partner & (scores > t)) for t in cuts]
    curve = tuple(
        (float(t), c / k if k else 0.0, c / max(with_partner, 1))
        for t, c, k in zip(cuts, right, kept, strict=True)
    )

    return Simulation(
        error_rate=rate,
        partnered=with_partner,
        linked=np.count_nonzero(correct) / max(with_partner, 1),
        mislinked=np.count_nonzero(wrong) / max(with_partner, 1),
        stray=np.count_nonzero(stray) / max(without, 1),
        linked_score=mean(correct),
        mislinked_score=mean(wrong),
        stray_score=mean(stray),
        curve=curve,
    )


def before_sending(simulations: Sequence[Simulation]) -> ExpectedQuality:
    """The estimate TRAIN judges: the expected linkage with every simulated error rate as
    likely (the right and accepted links pooled over them) and UNMATCHED_SHARE of own records
    without a partner, as simulated; with several simulations, the F1's spread over their
    rates."""
    links = [simulation.links(UNMATCHED_SHARE) for simulation in simulations]
    right, accepted = sum(r for r, _ in links), sum(a for _, a in links)
    quality = ExpectedQuality(
        right / accepted if accepted else 0.0,
        sum(simulation.linked for simulation in simulations) / len(simulations),
        sum(simulation.partnered for simulation in simulations),
    )
    if len(simulations) < 2:
        return quality
    least, most = min(simulations, key=_rate), max(simulations, key=_rate)
    spread = Spread(
        (most.error_rate, most.quality(UNMATCHED_SHARE).f1),
        (least.error_rate, least.quality(UNMATCHED_SHARE).f1),
    )
    return dataclasses.replace(quality, spread=spread)


def _rate(simulation: Simulation) -> float:
    return simulation.error_rate


def after_linking(
    simulations: Sequence[Simulation],
    accepted: int,
    mean_score: float,
    own_records: int,
    peer_records: int,
) -> LinkedEstimate:
    """The estimate fitted to a party's own links: `accepted` one-to-one pairs with
    `mean_score`, among `own_records` and `peer_records` (see the module's docstring)."""
    ordered = sorted(simulations, key=lambda s: s.error_rate)
    if not ordered:
        raise ValueError("no simulation to fit")
    misfit = [
        _predicted_score(s, accepted, own_records, peer_records) - mean_score for s in ordered
    ]
    chosen = _interpolated(ordered, misfit)
    partnered, fitted = _partnered(chosen, accepted, own_records, peer_records)
    true_links = partnered * chosen.linked
    precision = min(1.0, true_links / accepted) if accepted else 0.0
    quality = ExpectedQuality(precision, chosen.linked, ordered[0].partnered)
    return LinkedEstimate(quality, chosen.error_rate, partnered, fitted)


def _partnered(
    s: Simulation, accepted: int, own_records: int, peer_records: int
) -> tuple[float, bool]:
    """Own records with a partner, solved from the accepted count; and whether it could be."""
    most = float(min(own_records, peer_records))
    separation = s.linked + s.mislinked - s.stray
    if separation < MIN_SEPARATION:
        return most, False
    return min(max((accepted - own_records * s.stray) / separation, 0.0), most), True


def _predicted_score(s: Simulation, accepted: int, own_records: int, peer_records: int) -> float:
    """The mean score of the links `s` predicts, with the partnered count solved from
    `accepted`."""
    partnered, _ = _partnered(s, accepted, own_records, peer_records)
    weights = (partnered * s.linked, partnered * s.mislinked, (own_records - partnered) * s.stray)
    total = sum(weights)
    if total <= 0:
        return 0.0
    scores = (s.linked_score, s.mislinked_score, s.stray_score)
    return sum(w * x for w, x in zip(weights, scores, strict=True)) / total


def _interpolated(ordered: Sequence[Simulation], misfit: Sequence[float]) -> Simulation:
    """The simulation whose predicted mean score meets the observed one: interpolated between
    the first two neighbouring rates that bracket it, else the nearest."""
    for (a, da), (b, db) in itertools.pairwise(zip(ordered, misfit, strict=True)):
        if da == 0 or da * db < 0:
            t = da / (da - db)
            return Simulation(
                **{
                    name: (1 - t) * getattr(a, name) + t * getattr(b, name)
                    for name in Simulation.__dataclass_fields__
                    if name not in ("partnered", "curve")
                },
                partnered=a.partnered,
                curve=a.curve,
            )
    return ordered[int(np.argmin(np.abs(misfit)))]


def poor_linkage_words(
    quality: ExpectedQuality,
    minimum: float,
    noisy: bool = True,
    keys_join: float | None = None,
    wider_keys: Sequence[str] = (),
) -> str:
    """Why a run stops, and what would help, in the operator's words; `noisy`: the release
    takes the gate's noise, so less noise or sealed linkage would help too; `keys_join`: the
    share of synthetic true pairs sealed linkage's blocking keys join; `wider_keys`: recipes
    that would join more, to name as the configuration writes them."""
    helps = []
    if keys_join is not None:
        listed = ", ".join(f'"{recipe}"' for recipe in wider_keys)
        wider = (
            f"; sealed_keys = [{listed}] adds the names' first three letters, which join more "
            "and give more away, docs/research/sealed.md"
            if wider_keys
            else "; looser keys give more away, and on names alone linked no better: "
            'docs/research/sealed.md, "Completeness against leak on names alone"'
        )
        helps.append(
            f"blocking keys that join more true pairs ([method] sealed_keys: these join "
            f"{keys_join:.1%} of synthetic ones{wider})"
        )
    if noisy:
        helps.append(
            "a higher gate limit ([privacy] max_reidentification: less noise, more the peer "
            "learns, docs/research/privacy.md)"
        )
    helps += [
        "more compared attributes ([records] attributes and [reference] mapping)",
        "a larger reference set or one closer to the records' values "
        "(docs/research/reference-sets.md)",
    ]
    if noisy:
        helps.append(
            'sealed linkage, which needs no noise ([method] encoding = "sealed", '
            "docs/research/sealed.md)"
        )
    return (
        f"{quality.words()}, below the minimum of {minimum:.2f}; nothing was sent. What would "
        f"help: {', '.join(helps)}, or, knowing the estimate, a lower [privacy] min_expected_f1"
    )
