"""The match classifier: an SVM over pair features, reduced to plain arrays.

Only arrays are kept so a model serialises without pickle and scores without sklearn.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pprl.protocol.errors import SettingError

# What a model is (how it decides): one linear decision, the highest of several (a linear
# model and its lenient alternatives, `LENIENT`), or an RBF SVM ...
LENIENT = "linear-max"
KINDS = ("linear", "rbf", LENIENT)
# ... and how it is trained: "logistic" fits a logistic regression, whose decision is linear.
TRAINERS = ("linear", "logistic", "rbf")
DEFAULT_C = {"linear": 100.0, "logistic": 100.0, "rbf": 0.01}
# What each trainer fits, in the operator's words.
TRAINER_WORDS = {"linear": "a linear SVM", "logistic": "a logistic regression", "rbf": "an RBF SVM"}
CLASS_WEIGHTS = ("none", "balanced")
_KERNEL_CHUNK_BYTES = 8 << 20
# How far (in the linear SVM's margins) the envelope reaches past the rbf's accepted
# training pairs; widening it trades matching time for candidates the rbf might accept.
ENVELOPE_MARGIN = 1.0
# A saturation cap never falls below this cosine distance: non-matches identical on an entry
# (two people called Smith) must not turn its cap, and with it the entry, into zero.
MIN_CAP = 1e-4
# The share of true training pairs whose decision without the address a movers' alternative
# never asks more than (lenient_alternatives): on European registers with raw capped
# distances it changes nothing (log-odds 6 is lower), on projected distances without caps
# (sealed linkage), whose log-odds run lower, it links 98% of movers where 6 linked none.
MOVER_QUANTILE = 0.25
# lbfgs converges in well under this on pair features scaled to [0, 1].
_LOGISTIC_ITERATIONS = 1000
# A kernel model (an option of sealed linkage, [method] sealed_kernel_features;
# docs/research/sealed.md "The model") reads each entry's distance d as exp(-d / width), a
# Gaussian kernel on the unit vectors (|u - v|^2 = 2d) that saturates as a cap does; the width
# is the entry's cap at this quantile of the non-matches' distances (`saturation_caps`) over
# KERNEL_DIVISOR. On FEBRL4
# names, every pair scored in plaintext: 0.8214 at cap / 2 and 0.8249 at cap / 4, against
# 0.7930 with caps and 0.7621 with neither (on the pairs sealed linkage's keys join, no gain).
KERNEL_QUANTILE = 0.25
KERNEL_DIVISOR = 2.0


@dataclass(frozen=True)
class Model:
    """A trained SVM; `decision` > 0 means "same person", as in sklearn's decision_function.

    linear arrays: "weights" (M,), "bias" (); rbf arrays: "support_vectors" (s, M),
    "dual_coef" (s,), "gamma" (), "bias" (), and the linear envelope "envelope_weights" (M,),
    "envelope_bias" () that candidate generation bounds pairs with. Either kind may hold
    "caps" (M,): each entry's distance is read as min(distance, cap) before anything else;
    a linear or linear-max model may instead hold "widths" (M,): each entry's distance is
    read as exp(-distance / width), 0 where the value is missing (`kernelise`).
    linear-max arrays: the linear ones, "alternative_weights" (K, 3M) and "alternative_bias"
    (K,) whose highest decision with the linear one's is the model's, and the envelope, the
    per-feature largest of them all (`lenient_alternatives`).
    """

    kind: str
    arrays: dict[str, np.ndarray]

    def decision(self, features: np.ndarray) -> np.ndarray:
        """(k, 3M) features -> (k,) float64 decision values."""
        bias = float(self.arrays["bias"])
        features = kernelise(saturate(features, self.caps), self.widths)
        if self.kind == "linear":
            features = np.asarray(features, dtype=np.float64)
            weights = self.arrays["weights"]
            if len(weights) != features.shape[-1]:
                weights = full_weights(weights, features.shape[-1] // 3)
            return features @ weights + bias
        if self.kind == "rbf":
            return self._rbf_decision(features, bias)
        if self.kind == LENIENT:
            features = np.asarray(features, dtype=np.float64)
            every = np.vstack([self.arrays["weights"], self.arrays["alternative_weights"]])
            biases = np.concatenate([[bias], self.arrays["alternative_bias"]])
            return (features @ every.T + biases).max(axis=1)
        raise ValueError(f"unknown model kind {self.kind!r}")

    def _rbf_decision(self, x: np.ndarray, bias: float) -> np.ndarray:
        """exp(-gamma |x - s|^2) via |x|^2 + |s|^2 - 2 x.s, in place and in chunks: the kernel
        matrix (rows x support vectors) dominates both time and memory."""
        support = self.arrays["support_vectors"]
        if 3 * support.shape[1] == x.shape[1]:  # trained before missing-value features
            support = np.concatenate(
                [support, np.zeros((len(support), x.shape[1] - support.shape[1]))], axis=1
            )
        dual = self.arrays["dual_coef"]
        gamma = float(self.arrays["gamma"])
        support_sq = np.einsum("sm,sm->s", support, support)
        scaled = -2.0 * support.T
        chunk = max(1, _KERNEL_CHUNK_BYTES // (8 * max(1, len(support))))
        out = np.empty(len(x), dtype=np.float64)
        for start in range(0, len(x), chunk):
            part = np.asarray(x[start : start + chunk], dtype=np.float64)
            kernel = part @ scaled
            kernel += np.einsum("km,km->k", part, part)[:, None]
            kernel += support_sq
            np.maximum(kernel, 0.0, out=kernel)
            kernel *= -gamma
            np.exp(kernel, out=kernel)
            out[start : start + chunk] = kernel @ dual + bias
        return out

    @property
    def caps(self) -> np.ndarray | None:
        return self.arrays.get("caps")

    @property
    def widths(self) -> np.ndarray | None:
        return self.arrays.get("widths")

    @property
    def linear_in_distances(self) -> bool:
        """Whether each decision is linear in the distances themselves (caps aside), as the
        plaintext linkage's fast paths assume; a kernel model's is linear in its kernel
        values instead."""
        return self.linear_parts() is not None and self.widths is None

    def linear_parts(self) -> list[tuple[np.ndarray, float]] | None:
        """The linear decisions (weights, bias) whose highest is this model's (one for a linear
        model; the alternatives too for linear-max), or None for an rbf model. Linear in the
        features as the model reads them: a kernel model's in its kernel values."""
        if self.kind not in ("linear", LENIENT):
            return None
        parts = [(self.arrays["weights"], float(self.arrays["bias"]))]
        if self.kind == LENIENT:
            biases = self.arrays["alternative_bias"].tolist()
            parts += list(zip(self.arrays["alternative_weights"], biases, strict=True))
        return parts

    def to_bytes(self) -> bytes:
        """npz with the kind as a 0-d string array; no pickle, so loading runs no code."""
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {"kind": np.array(self.kind), **self.arrays}
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        kind = str(arrays.pop("kind"))
        if kind not in KINDS:
            raise ValueError(f"unknown model kind {kind!r}")
        return cls(kind=kind, arrays=arrays)


def full_weights(weights: np.ndarray, entries: int) -> np.ndarray:
    """(3M,) linear weights: distances, then the missing indicators. A model given only M
    weights (one per entry, as before missing values had features) weighs them 0."""
    weights = np.asarray(weights, dtype=np.float64)
    if len(weights) == entries:
        return np.concatenate([weights, np.zeros(2 * entries)])
    if len(weights) != 3 * entries:
        raise ValueError(f"model has {len(weights)} weights for {entries} mapping entries")
    return weights


def check_saturation(saturation: float) -> None:
    if not 0.0 <= saturation <= 1.0:
        raise SettingError(f"saturation must be a quantile in [0, 1], got {saturation}")


def saturate(features: np.ndarray, caps: np.ndarray | None) -> np.ndarray:
    """(k, 3M) features with each entry's distance cut at its cap (a copy; None: as given)."""
    if caps is None:
        return features
    capped = np.array(features, copy=True)
    m = len(caps)
    np.minimum(capped[:, :m], caps.astype(capped.dtype), out=capped[:, :m])
    return capped


def kernelise(features: np.ndarray, widths: np.ndarray | None) -> np.ndarray:
    """(k, 3M) features with each entry's distance d read as exp(-d / width), and 0 where the
    value is missing on either side, as a dot product of random features gives it (a missing
    value's are zero; pprl.protocol.sealed.kernel_features); the indicators carry the
    missing cases. A copy; None: as given."""
    if widths is None:
        return features
    m = len(widths)
    out = np.array(features, dtype=np.float64, copy=True)
    present = out[:, m : 2 * m] + out[:, 2 * m :] == 0
    out[:, :m] = np.where(present, np.exp(-out[:, :m] / widths), 0.0)
    return out


def saturation_caps(features: np.ndarray, labels: np.ndarray, quantile: float) -> np.ndarray:
    """(M,) per entry, the distance of non-matching training pairs at `quantile`.

    A linear model on raw distances adds up how far every entry is, so one entry that
    disagrees outright (a changed surname, a nickname) outweighs two that agree. Beyond the
    cap two values count as different however far apart they are, which lets a linear model
    say "two of three entries agree". Only pairs present on both sides count.
    """
    m = features.shape[1] // 3
    negatives = features[labels == 0]
    caps = np.full(m, 2.0)
    for entry in range(m):
        present = negatives[:, m + entry] + negatives[:, 2 * m + entry] == 0
        if present.any():
            caps[entry] = np.quantile(negatives[present, entry], quantile)
    return np.maximum(caps, MIN_CAP)


def train(
    features: np.ndarray,
    labels: np.ndarray,
    kind: str = "linear",
    c: float | None = None,
    class_weight: str = "none",
    saturation: float = 0.0,
    lenient: Sequence[Sequence[int]] = (),
    lenient_odds: float = 0.0,
    kernel: bool = False,
) -> Model:
    """Fit an SVM (or, for "logistic", a logistic regression) on (n, 3M) features with labels
    {0, 1}; C defaults as in the paper.

    A logistic regression weighs every training pair, not only those near the margin, so its
    decision ranks a record's candidates by how likely each is the same person; with several
    errors per record, where many candidates are accepted, that ranking decides the one-to-one
    step (docs/research/results.md: F1 +0.01 on FEBRL4 names, a quarter of the SVM's training time).
    class_weight "balanced" scales C per class by its rarity, for training sets with several
    negatives per positive. saturation > 0 caps each entry's distance at that quantile of
    the non-matches' (`saturation_caps`); 0 keeps the paper's raw distances. With groups of
    entries in `lenient` and lenient_odds > 0, a linear model also gets one alternative per
    group, which ignores it (`lenient_alternatives`). `kernel` fits a linear model on each
    entry's kernel value (`kernelise`, widths from KERNEL_QUANTILE) instead of its distance.
    """
    if kind not in TRAINERS:
        raise SettingError(f"unknown classifier kind {kind!r}; expected one of {TRAINERS}")
    if class_weight not in CLASS_WEIGHTS:
        raise SettingError(
            f"unknown class_weight {class_weight!r}; expected one of {CLASS_WEIGHTS}"
        )
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels)
    if set(np.unique(y).tolist()) != {0, 1}:
        raise SettingError("training labels must contain both 0 (non-match) and 1 (match)")
    check_saturation(saturation)
    if kernel and (kind == "rbf" or saturation > 0):
        raise SettingError("a kernel model is linear in its kernel values: no rbf, no caps")
    caps = saturation_caps(x, y, saturation) if saturation > 0 else None
    x = saturate(x, caps)
    extra: dict[str, np.ndarray] = {} if caps is None else {"caps": caps}
    if kernel:
        extra["widths"] = saturation_caps(x, y, KERNEL_QUANTILE) / KERNEL_DIVISOR
        x = kernelise(x, extra["widths"])
    from sklearn.svm import SVC  # only training needs sklearn; importing it costs ~1 s

    # A linear model learns on capped distances divided by their caps, each from 0 to 1, so
    # that C means the same whatever the caps' scale; its weights are divided back.
    scale = np.ones(x.shape[1])
    if caps is not None and kind != "rbf":
        scale[: len(caps)] = caps
    weight = None if class_weight == "none" else class_weight
    c = DEFAULT_C[kind] if c is None else c
    if kind != "rbf":
        weights, bias = _linear_fit(x / scale, y, kind, c, weight)
        model = Model("linear", {"weights": weights / scale, "bias": bias, **extra})
        if lenient and lenient_odds > 0:
            model = lenient_alternatives(model, x, y, scale, kind, c, weight, lenient, lenient_odds)
        return model
    svm = SVC(kernel=kind, C=c, gamma="scale", class_weight=weight).fit(x / scale, y)
    bias = np.array(svm.intercept_[0], dtype=np.float64)
    rbf = Model(
        "rbf",
        {
            "support_vectors": svm.support_vectors_.astype(np.float64),
            "dual_coef": svm.dual_coef_[0].astype(np.float64),
            "gamma": np.array(svm._gamma, dtype=np.float64),
            "bias": bias,
            **extra,
        },
    )
    weights, envelope_bias = _envelope(x, y, rbf.decision(x) > 0, class_weight, SVC)
    rbf.arrays["envelope_weights"] = weights
    rbf.arrays["envelope_bias"] = np.array(envelope_bias, dtype=np.float64)
    return rbf


def _linear_fit(
    x: np.ndarray, y: np.ndarray, kind: str, c: float, weight: str | None
) -> tuple[np.ndarray, np.ndarray]:
    """The weights and bias of a linear SVM or a logistic regression on x."""
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression  # lazy: costs ~1 s at start-up

        fitted: Any = LogisticRegression(C=c, class_weight=weight, max_iter=_LOGISTIC_ITERATIONS)
    else:
        from sklearn.svm import SVC  # lazy: costs ~1 s at start-up

        fitted = SVC(kernel="linear", C=c, class_weight=weight)
    fitted = fitted.fit(x, y)
    return fitted.coef_[0].astype(np.float64), np.array(fitted.intercept_[0], dtype=np.float64)


def lenient_alternatives(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    scale: np.ndarray,
    kind: str,
    c: float,
    weight: str | None,
    groups: Sequence[Sequence[int]],
    odds: float,
) -> Model:
    """`model` with one alternative per group of entries: the same fit on the same (capped)
    training pairs with the group's features left out, its bias lowered by `odds`, or by
    what all but MOVER_QUANTILE of the true training pairs reach on it when that is less.
    The pair's decision is the highest: a group that disagrees (an address after a move) can
    still veto a pair the other entries make only likely, but no longer one they make near
    certain (a logistic regression's log-odds above `odds`, or as convincing as three in
    four true pairs; docs/research/error-model.md). The envelope, each
    feature's largest weight and the largest bias, bounds every one of them from above on
    the features' range (distances and indicators are never negative), which is what the
    candidate bounds need."""
    m = x.shape[1] // 3
    alternative_weights, alternative_bias = [], []
    for group in groups:
        columns = [column for entry in group for column in (entry, m + entry, 2 * m + entry)]
        kept = np.setdiff1d(np.arange(x.shape[1]), columns)
        weights, bias = _linear_fit(x[:, kept] / scale[kept], y, kind, c, weight)
        full = np.zeros(x.shape[1])
        full[kept] = weights / scale[kept]
        alternative_weights.append(full)
        # Never a higher bar than a quarter of the true training pairs clear on these fields:
        # features whose log-odds run lower (no caps) still let the movers through.
        reached = x[y == 1] @ full + float(bias)
        usual = float(np.quantile(reached, MOVER_QUANTILE)) if len(reached) else odds
        alternative_bias.append(float(bias) - min(odds, max(usual, 0.0)))
    return with_alternatives(model, np.vstack(alternative_weights), np.array(alternative_bias))


def with_alternatives(model: Model, weights: np.ndarray, biases: np.ndarray) -> Model:
    """A linear `model` with alternative linear decisions ((K, 3M) weights, (K,) biases) as
    one linear-max model, with the envelope that bounds them all: each feature's largest
    weight and the largest bias (features are never negative)."""
    every = np.vstack([full_weights(model.arrays["weights"], weights.shape[1] // 3), weights])
    arrays = {
        **model.arrays,
        "weights": every[0],
        "alternative_weights": weights,
        "alternative_bias": biases,
        "envelope_weights": every.max(axis=0),
        "envelope_bias": np.array(max(float(model.arrays["bias"]), float(biases.max()))),
    }
    return Model(LENIENT, arrays)


def _envelope(
    x: np.ndarray, y: np.ndarray, accepted: np.ndarray, class_weight: str, svc: type
) -> tuple[np.ndarray, float]:
    """A linear SVM on the same pairs, its bias raised until it accepts every training pair
    the rbf accepts, plus ENVELOPE_MARGIN: pairs outside it are not scored by the rbf."""
    linear = svc(
        kernel="linear",
        C=DEFAULT_C["linear"],
        class_weight=None if class_weight == "none" else class_weight,
    ).fit(x, y)
    weights = linear.coef_[0].astype(np.float64)
    bias = float(linear.intercept_[0])
    if accepted.any():
        bias = max(bias, float(-(x[accepted] @ weights).min()))
    return weights, bias + ENVELOPE_MARGIN
