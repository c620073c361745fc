"""A linear classifier's score on a pair, written as c_i + <x_i, y_j>: the scoring party's
part (x, c) and the peer's part (y), so that the score can be computed under encryption with
the peer's vectors in plaintext (`scoring`).

The decision is b + sum_m (w_m d_m + v_m one_m + u_m both_m), with d_m = 1 - <p_m, q_m> the
cosine distance of entry m's unit vectors (zero where a value is missing, so d_m = 1 there),
one_m whether the value is missing on exactly one side and both_m on both. With a_m and b_m the
missing indicators of the two sides, one_m = a_m + b_m - 2 a_m b_m and both_m = a_m b_m, so

    score = [b + sum_m (w_m + v_m a_m)] + sum_m <-w_m p_m, q_m>
            + sum_m b_m (v_m + (u_m - 2 v_m) a_m)

that is c_i = b + sum_m (w_m + v_m a_m), x_i = concat_m(-w_m p_m, v_m + (u_m - 2 v_m) a_m) and
y_j = concat_m(q_m, b_m). The features are symmetric in the two sides, so it does not matter
which side the model was trained as. A model with caps reads min(d_m, cap_m), which is not
linear: it is refused.

A kernel model (classifier.kernelise) reads each entry as k_m = exp(-d_m / width_m), 0 where
either value is missing, and k_m is about <z_m(p_m), z_m(q_m)> for random features z
(kernel_features; a missing value's are zero). Then c_i = b + sum_m v_m a_m,
x_i = concat_m(w_m z_m(p_m), v_m + (u_m - 2 v_m) a_m) and y_j = concat_m(z_m(q_m), b_m):
the same form with D coordinates an entry, and the evaluator maps its vectors with the
scoring party's widths (`Peer`).

A model with a movers' alternative (classifier.lenient_alternatives: a second linear decision
without the address entries) is two forms. The second's vectors are the first's scaled per
entry, -w'_m p_m = a_m (-w_m p_m) with a_m = w'_m / w_m (0 for an address entry), so the
evaluator gets them from the same ciphertexts by scaling its own plaintext q_m by a_m; only
the second form's indicator coordinates and constant are encrypted besides (`Alternative`).
The evaluator learns the ratios a_m: how the scoring party's two models weigh each entry
against each other, nothing of a record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pprl.protocol.errors import SettingError
from pprl.protocol.model.classifier import Model, full_weights
from pprl.protocol.model.features import missing_units, pair_features
from pprl.protocol.sealed.kernel_features import Exact, RandomFeatures, live

Part = tuple[np.ndarray, float]


@dataclass(frozen=True)
class Peer:
    """What the evaluator's plaintext is made of, entry by entry: its unit vectors for a
    model linear in the distances, or their random features (`kernel`) for a kernel model."""

    kernel: RandomFeatures | None = None

    def vectors(self, unit: np.ndarray) -> np.ndarray:
        """(n, M, width) float64: what the evaluator multiplies in per entry."""
        return unit.astype(np.float64) if self.kernel is None else self.kernel.map(unit)

    def live(self, entries: int, unit_width: int) -> np.ndarray:
        """(M (width + 1),) which columns of x and y are scored: all but an exact entry's
        features beyond its values' count (kernel_features.live), zero on both sides."""
        if self.kernel is None:
            return coordinates_live(entries, unit_width, 0)
        return coordinates_live(entries, unit_width, self.kernel.count, self.kernel.exact)


def coordinates_live(
    entries: int, unit_width: int, features: int, exact: tuple[Exact, ...] = ()
) -> np.ndarray:
    """`Peer.live` for `features` random features an entry (0: a model linear in the
    distances, `unit_width` coordinates an entry), without the scorer's widths: what both
    parties lay out before those arrive."""
    if not features:
        return np.ones(entries * (unit_width + 1), dtype=bool)
    indicator = np.ones((entries, 1), dtype=bool)
    return np.concatenate([live(entries, features, exact), indicator], axis=1).reshape(-1)


def peer_of(model: Model, features: int, seed: str, exact: tuple[Exact, ...] = ()) -> Peer:
    """The evaluator's plaintext a scoring party's `model` needs: `features` random features
    an entry (the agreed count, drawn from `seed`) for a kernel model, the `exact` entries
    by their values."""
    widths = model.widths
    if widths is None:
        return Peer()
    if features <= 0:
        raise SettingError("a kernel model needs random features (sealed_kernel_features > 0)")
    return Peer(RandomFeatures(widths, features, seed, exact))


def _parts(model: Model) -> list[Part]:
    parts = model.linear_parts()
    if parts is None:
        raise SettingError(f"sealed scoring needs a linear model, not {model.kind!r}")
    if model.caps is not None:
        raise SettingError(
            "sealed scoring needs a linear or kernel model without caps (a capped distance is "
            "not linear in the peer's vector): train it with saturation = 0"
        )
    if len(parts) > 2:
        raise SettingError("sealed scoring evaluates one movers' alternative at most")
    return parts


def _weights(part: Part, entries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    weights = full_weights(part[0], entries)
    return weights[:entries], weights[entries : 2 * entries], weights[2 * entries :], part[1]


def _indicators(part: Part, unit: np.ndarray, peer: Peer) -> tuple[np.ndarray, np.ndarray]:
    """(indicator coordinates (n, M), constant (n,)) of one linear part: its constant is
    b + sum_m w_m on distances (w_m d_m = w_m - w_m <p_m, q_m>), b on kernel values."""
    entries = unit.shape[1]
    w, v, u, bias = _weights(part, entries)
    missing = missing_units(unit).astype(np.float64)
    indicator = v[None, :] + (u - 2 * v)[None, :] * missing
    constant = bias + missing @ v
    return indicator, constant + float(w.sum()) if peer.kernel is None else constant


def scorer_part(model: Model, unit: np.ndarray, peer: Peer) -> tuple[np.ndarray, np.ndarray]:
    """(x, c) of the scoring party's (n, M, k) unit vectors: (n, M (width + 1)) and (n,), of
    its model's (first) linear decision, for the evaluator's plaintext `peer`: its vectors
    -w_m p_m on distances, w_m z_m(p_m) on kernel values."""
    part = _parts(model)[0]
    w = _weights(part, unit.shape[1])[0]
    sign = -1.0 if peer.kernel is None else 1.0
    vectors = (sign * w)[None, :, None] * peer.vectors(unit)
    indicator, c = _indicators(part, unit, peer)
    x = np.concatenate([vectors, indicator[:, :, None]], axis=2).reshape(len(unit), -1)
    return x, c


@dataclass(frozen=True)
class Alternative:
    """The movers' second form: per entry its weights over the first form's (the evaluator
    scales its plaintext by them), and its own indicator coordinates and constant (sent
    encrypted after the first form's columns)."""

    ratios: np.ndarray  # (M,)
    indicator: np.ndarray  # (n, M)
    constant: np.ndarray  # (n,)

    def scaled(self, factor: float) -> Alternative:
        return Alternative(self.ratios, self.indicator * factor, self.constant * factor)

    def shifted(self, shift: float) -> Alternative:
        return Alternative(self.ratios, self.indicator, self.constant + shift)

    def taken(self, rows: np.ndarray) -> Alternative:
        """The form of the given rows, in their order (the hidden join's entries)."""
        return Alternative(self.ratios, self.indicator[rows], self.constant[rows])

    def columns(self) -> np.ndarray:
        """(n, M + 1): what is encrypted besides the first form's x and c."""
        return np.concatenate([self.indicator, self.constant[:, None]], axis=1)

    def linear(self, x: np.ndarray, entries: int) -> tuple[np.ndarray, np.ndarray]:
        """(x', c') of the second form written out, for its scale and for tests."""
        blocks = x.reshape(len(x), entries, -1).copy()
        blocks[:, :, :-1] *= self.ratios[None, :, None]
        blocks[:, :, -1] = self.indicator
        return blocks.reshape(len(x), -1), self.constant


def alternative_part(model: Model, unit: np.ndarray, peer: Peer) -> Alternative | None:
    """The second form of a model with a movers' alternative, or None."""
    parts = _parts(model)
    if len(parts) == 1:
        return None
    entries = unit.shape[1]
    first, second = (_weights(part, entries)[0] for part in parts)
    if np.any((first == 0) & (second != 0)):
        raise SettingError(
            "the movers' second model weighs an entry the first gives no weight: it cannot be "
            "scored from the first's encrypted vectors (mover_odds = 0 turns it off)"
        )
    ratios = np.divide(second, first, out=np.zeros(entries), where=first != 0)
    # Its vectors are the first form's, scaled by the ratios: only these are its own.
    indicator, constant = _indicators(parts[1], unit, peer)
    return Alternative(ratios, indicator, constant)


def evaluator_part(unit: np.ndarray, peer: Peer) -> np.ndarray:
    """y of the evaluating party's (n, M, k) unit vectors: (n, M (width + 1))."""
    missing = missing_units(unit).astype(np.float64)
    y = np.concatenate([peer.vectors(unit), missing[:, :, None]], axis=2)
    return y.reshape(len(unit), -1)


# Where a scoring party puts the median score of its own records compared with themselves
# (every distance 0), on the agreed thresholds' scale: the accepted pairs' scores then spread
# over the thresholds, whatever the classifier's own range. On FEBRL4 names (sealed
# configuration, plaintext, each party greedy one-to-one on its buckets, intersected) 11
# thresholds evenly from 0 to 16 gave F1 0.7642 with the median mapped to 12, against 0.5182
# unscaled (its scores reach only 1.6) and 0.7634 on exact scores (docs/research/sealed.md).
SCALE_TARGET = 12.0
# The largest |score| the scaled form may reach, as measured on the party's own records
# (`score_range`), and twice it by the worst-case bound (`score_bound`): at the agreed
# parameters a full ciphertext of blinded scores decrypts right well beyond that (every
# bucket right with scores up to 1,500 at factors up to 2^18; sealed/parameters.py,
# tests/test_sealed_scoring.py).
SAFE_SCORE = 96.0
# How far below its own boundary a scoring party still accepts, as a share of its median
# identity score: each party trains on balanced synthetic pairs, but a pair it accepts must
# still be the best of its row in the one-to-one step and be accepted by the peer too, and
# those two prune what a lower bar lets in. In one process (hidden join, buckets from the
# plaintext scaled scores, the defaults otherwise), F1 with the scaled scores raised by 0,
# 1.6, 3.2, 4.8, 6.4 and 9.6 (identity at 12): FEBRL4 names 0.8073, 0.8228, 0.8266, 0.8290,
# 0.8303, 0.8274; the generated namesakes 0.8143, 0.8271, 0.8294, 0.8290, 0.8295, 0.8265;
# precision within 0.01 up to 6.4. But a row without a partner whose best look-alike the
# lower bar accepts names it, and the peer row behind it is told: of the namesakes' people
# without a partner 3.4% re-identified at no margin, 5.5% at 0.2 (F1 0.8301), 7.0% at 0.4
# (0.8311); FEBRL4 names 5.0%, 5.2% (0.8252), 5.5% (0.8283). So 0.2: most of the gain for
# less of the leak (docs/research/sealed.md, "The accepting margin").
ACCEPT_MARGIN = 0.2
# Own rows the range is measured on, each against as many: a million pairs at most.
_RANGE_ROWS = 1000


def score_bound(x: np.ndarray, c: np.ndarray, entries: int) -> float:
    """The largest |c_i + <x_i, y>| over every row i and every peer vector y: per entry, the
    peer's part (q_m, b_m) is a unit vector with a 0 indicator or a zero vector with a 1, of
    length 1 either way (random features too: kernel_features.RandomFeatures), so
    |<x_i, y>| <= sum_m |x_im| (Cauchy-Schwarz per entry). Far above what real vectors
    give (38 where pairs of generated records reach 10): a ceiling."""
    if not len(x):
        return 0.0
    blocks = x.reshape(len(x), entries, -1)
    return float(np.max(np.abs(c) + np.linalg.norm(blocks, axis=2).sum(axis=1)))


def score_range(x: np.ndarray, c: np.ndarray, own_y: np.ndarray) -> float:
    """The largest |score| among the party's own rows compared with each other (up to
    _RANGE_ROWS of each, evenly spaced): the peer's vectors are of the same kind, so its
    pairs score within about this range."""
    step = max(1, len(x) // _RANGE_ROWS)
    rows = np.arange(0, len(x), step)
    return float(np.abs(c[rows, None] + x[rows] @ own_y[rows].T).max()) if len(rows) else 0.0


def identity_score(x: np.ndarray, c: np.ndarray, own_y: np.ndarray) -> float:
    """The median score of the party's own records compared with themselves."""
    return float(np.median(c + np.einsum("ij,ij->i", x, own_y))) if len(x) else 0.0


def margin(identity: float) -> float:
    """What a party adds to its constant so that it accepts down to ACCEPT_MARGIN of its
    identity score below its boundary (none without a positive identity score)."""
    return ACCEPT_MARGIN * identity if identity > 0 else 0.0


def lowest_accepted(model: Model, own_units: np.ndarray, rows: int = 65536) -> float:
    """The lowest plaintext decision the party accepts, as its scaled form decides: minus the
    margin of the model's median decision on its own records (up to `rows`) against
    themselves. For what is simulated or attacked in the clear."""
    own = own_units[:rows]
    identity = float(np.median(model.decision(pair_features(own, own)))) if len(own) else 0.0
    return -margin(identity)


def score_scale(x: np.ndarray, c: np.ndarray, own_y: np.ndarray, entries: int) -> float:
    """The positive factor a scoring party multiplies its (x, c) by before encrypting: its
    median identity score c_i + <x_i, y_i> (own_y: its own records' evaluator part) to
    SCALE_TARGET, no further than keeps the scores of its own pairs within SAFE_SCORE (and
    never beyond what the worst-case bound allows at twice that). A positive factor keeps
    every decision and every order; it only spreads the scores over the agreed thresholds,
    so that the buckets rank the accepted pairs."""
    identity = identity_score(x, c, own_y)
    scale = SCALE_TARGET / identity if identity > 0 else 1.0
    for limit, reach in (
        (SAFE_SCORE, score_range(x, c, own_y)),
        (2 * SAFE_SCORE, score_bound(x, c, entries)),
    ):
        if reach > 0:
            scale = min(scale, limit / reach)
    return scale


def scaling(
    x: np.ndarray,
    c: np.ndarray,
    alternative: Alternative | None,
    own_y: np.ndarray,
    entries: int,
) -> tuple[float, float]:
    """(shift, scale): a pair's encrypted score is (c_i + shift + <x_i, y_j>) * scale. The
    shift is the first form's `margin`: the party accepts down to ACCEPT_MARGIN of its
    identity score below its boundary; the scale, the lower of the two forms' `score_scale`s
    with the shift added, keeps each within the range the parameters decrypt right."""
    shift = margin(identity_score(x, c, own_y))
    scale = score_scale(x, c + shift, own_y, entries)
    if alternative is not None:
        second = alternative.shifted(shift).linear(x, entries)
        scale = min(scale, score_scale(*second, own_y, entries))
    return shift, scale


def scaled_forms(
    x: np.ndarray,
    c: np.ndarray,
    alternative: Alternative | None,
    own_y: np.ndarray,
    entries: int,
) -> tuple[np.ndarray, np.ndarray, Alternative | None]:
    """(x, c) and the movers' alternative as the scoring party encrypts them: both forms
    shifted and scaled by `scaling`. The daemon and the attack benchmarks share it, so the
    buckets a benchmark attacks are the ones a run reveals."""
    shift, scale = scaling(x, c, alternative, own_y, entries)
    if alternative is not None:
        alternative = alternative.shifted(shift).scaled(scale)
    return x * scale, (c + shift) * scale, alternative


def plain_scores(
    x: np.ndarray,
    c: np.ndarray,
    alternative: Alternative | None,
    y: np.ndarray,
    entries: int,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Each row i's score against row i of the evaluator's `y`, before the shift and scale,
    as the encrypted comparison computes it; and the movers' alternative's, if any. For
    pairs simulated in the clear (pprl.protocol.sealed.calibration)."""
    first = c + np.einsum("ij,ij->i", x, y)
    if alternative is None:
        return first, None
    x2, c2 = alternative.linear(x, entries)
    return first, c2 + np.einsum("ij,ij->i", x2, y)
