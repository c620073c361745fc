"""Which classifier shape sealed scoring could evaluate without losing the caps' benefit:
measured in plaintext, every pair scored.

Sealed scoring computes a score that is polynomial in the peer's vectors. The method's
default for registers caps each entry's cosine distance (min(d, cap)), which is not. Each
party trains on its own synthetic pairs (the method, no noise, projected vectors), and
scores every pair of the real files with:

- caps: the method's capped linear model;
- no caps: the same model trained without caps (the linear form `sealed/linear_form.py`
  evaluates);
- logistic on d, d^2, d^3 per entry (a cubic shape learnt directly);
- caps approximated by a cubic: each entry's min(d, cap) replaced by the cubic in d that fits
  it best (least squares) on the party's training pairs, the capped model's weights kept;
- logistic on exp(-d / tau) per entry, tau a fraction of the entry's cap: a Gaussian kernel
  on the unit vectors (|u - v|^2 = 2d), which saturates as a cap does and which random
  Fourier features would turn into a dot product, that is, a linear form under encryption.

Each party then links one-to-one greedily by its own scores, and the two are intersected.

    python benchmarks/sealed_shapes.py --records-a A.csv --records-b B.csv --truth T.csv \
        --reference REF.csv --schema SCHEMA.toml --json out.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from lab.in_process import (
    add_table_arguments,
    released_units,
    run_command,
    schema_tables,
    sealed_agreement,
)
from lab.result_file import write_result
from pprl.files.reference import load_reference
from pprl.party.local import read_truth
from pprl.protocol import own_training
from pprl.protocol.linkage.matching import Matches, greedy_one_to_one
from pprl.protocol.method import DEFAULT_SATURATION
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model import classifier
from pprl.protocol.model.features import missing_units
from pprl.protocol.vectors.randomness import TRAINING, Randomness

DEGREE = 3
# tau = cap / each of these, for the kernel shapes.
KERNEL_WIDTHS = (2.0, 4.0, 8.0, 16.0)
# The kernel shape scored through random features (--random-features).
KERNEL_FOR_FEATURES = "logistic on exp(-d / (cap / 2))"
# distances, missing on one side, missing on both, each (n_a, n_b, M) -> scores (n_a, n_b)
Shape = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Kernel:
    """A logistic model on each entry's kernel value exp(-d / tau) and the missing
    indicators; scored from the exact kernel or from its random-feature approximation."""

    tau: np.ndarray  # (M,)
    weights: np.ndarray  # (3M,)
    bias: float

    def score(self, kernel: np.ndarray, one: np.ndarray, both: np.ndarray) -> np.ndarray:
        m = len(self.tau)
        w = self.weights
        return self.bias + kernel @ w[:m] + one @ w[m : 2 * m] + both @ w[2 * m :]

    def exact(self, dist: np.ndarray, one: np.ndarray, both: np.ndarray) -> np.ndarray:
        return self.score(np.exp(-dist / self.tau), one, both)


def random_features(units: np.ndarray, tau: np.ndarray, count: int, seed: int) -> np.ndarray:
    """(n, M, count) features z with z(u) . z(v) ~ exp(-|u - v|^2 / (2 tau)) = exp(-d / tau)
    for unit vectors u, v; the same draw for both parties (a shared seed)."""
    rng = np.random.default_rng(seed)
    n, entries, width = units.shape
    out = np.empty((n, entries, count), dtype=np.float64)
    for m in range(entries):
        weights = rng.normal(0.0, 1.0 / np.sqrt(tau[m]), (width, count))
        shift = rng.uniform(0.0, 2 * np.pi, count)
        out[:, m, :] = np.sqrt(2.0 / count) * np.cos(units[:, m, :] @ weights + shift)
    out[missing_units(units)] = 0.0  # a missing value adds nothing, as its zero vector does
    return out


def greedy(scores: np.ndarray) -> set[tuple[int, int]]:
    """One-to-one over the accepted pairs (score > 0), best first: the method's greedy step."""
    rows, cols = np.nonzero(scores > 0)
    kept = greedy_one_to_one(Matches(rows, cols, scores[rows, cols]))
    return set(zip(kept.rows_a.tolist(), kept.rows_b.tolist(), strict=True))


def shapes(
    x: np.ndarray, y: np.ndarray, method: Any, entries: int
) -> tuple[dict[str, Shape], dict[str, Kernel]]:
    """The scorers of one party, from its training pairs, and its kernel models by the
    label of their shape."""
    saturation = method.saturation or DEFAULT_SATURATION
    args = (method.classifier, method.c, method.class_weight)
    capped = classifier.train(x, y, *args, saturation)
    plain = classifier.train(x, y, *args, 0.0)
    d = x[:, :entries]
    powers = np.concatenate([d**p for p in range(1, DEGREE + 1)] + [x[:, entries:]], axis=1)
    weight = None if method.class_weight == "none" else method.class_weight
    cubic = LogisticRegression(C=method.c or 1.0, class_weight=weight, max_iter=2000)
    cubic.fit(powers, y)
    caps = capped.caps if capped.caps is not None else np.full(entries, 2.0)
    fitted = [np.polyfit(d[:, m], np.minimum(d[:, m], caps[m]), DEGREE) for m in range(entries)]

    def linear(model: classifier.Model, read: Callable[[np.ndarray], np.ndarray]) -> Shape:
        w = classifier.full_weights(model.arrays["weights"], entries)

        def scores(dist: np.ndarray, one: np.ndarray, both: np.ndarray) -> np.ndarray:
            terms = read(dist) @ w[:entries] + one @ w[entries : 2 * entries]
            return float(model.arrays["bias"]) + terms + both @ w[2 * entries :]

        return scores

    def cubic_scores(dist: np.ndarray, one: np.ndarray, both: np.ndarray) -> np.ndarray:
        w = cubic.coef_[0]
        k = DEGREE * entries
        total = one @ w[k : k + entries] + both @ w[k + entries :] + cubic.intercept_[0]
        for p in range(DEGREE):
            total += (dist ** (p + 1)) @ w[p * entries : (p + 1) * entries]
        return total

    def approximated(dist: np.ndarray) -> np.ndarray:
        return np.stack([np.polyval(fitted[m], dist[..., m]) for m in range(entries)], -1)

    def kernel(width: float) -> Kernel:
        tau = caps / width
        model = LogisticRegression(C=method.c or 1.0, class_weight=weight, max_iter=2000)
        model.fit(np.concatenate([np.exp(-d / tau), x[:, entries:]], axis=1), y)
        return Kernel(tau, model.coef_[0], float(model.intercept_[0]))

    kernels = {f"logistic on exp(-d / (cap / {w:g}))": kernel(w) for w in KERNEL_WIDTHS}
    exact: dict[str, Shape] = {label: k.exact for label, k in kernels.items()}
    return exact | {
        "caps": linear(capped, lambda dist: np.minimum(dist, caps)),
        "no caps": linear(plain, lambda dist: dist),
        f"logistic on d..d^{DEGREE}": cubic_scores,
        f"caps approximated by a degree-{DEGREE} polynomial": linear(capped, approximated),
    }, kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--random-features",
        type=int,
        nargs="*",
        default=[],
        help="also score the kernel shape with this many random Fourier features per entry "
        "(trained on the exact kernel, scored as a dot product would be under encryption)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    read = schema_tables(args.schema, args.records_a, args.records_b)
    tables = dict(zip(("alice", "bob"), read.tables, strict=True))
    truth = read_truth(args.truth)
    agreement = sealed_agreement(read, load_reference(args.reference), caps=True)
    method = agreement.method
    randomness = {name: Randomness(args.seed, name) for name in tables}
    released, units = released_units(agreement, tables, randomness)
    entries = units["alice"].shape[1]
    scorers, kernels = {}, {}
    for name, table in tables.items():
        rng = randomness[name].generator(TRAINING)
        sample = own_training.training_sample(agreement, table.attributes, rng)
        x, y = own_training.training_pairs(agreement, sample, rng)
        scorers[name], kernels[name] = shapes(x, y, method, entries)
    rows = []
    labels = [(label, None) for label in scorers["alice"]]
    labels += [(KERNEL_FOR_FEATURES, count) for count in args.random_features]
    for label, count in labels:
        kept = {}
        for own, peer in (("alice", "bob"), ("bob", "alice")):
            a, b = units[own], units[peer]
            gone_a, gone_b = missing_units(a)[:, None, :], missing_units(b)[None, :, :]
            one = (gone_a ^ gone_b).astype(np.float32)
            both = (gone_a & gone_b).astype(np.float32)
            if count is None:
                dist = np.stack(
                    [np.clip(1.0 - a[:, m, :] @ b[:, m, :].T, 0.0, 2.0) for m in range(entries)],
                    -1,
                )
                scores = scorers[own][label](dist, one, both)
            else:
                model = kernels[own][label]
                za = random_features(a, model.tau, count, args.seed)
                zb = random_features(b, model.tau, count, args.seed)
                approximated = np.stack([za[:, m, :] @ zb[:, m, :].T for m in range(entries)], -1)
                scores = model.score(approximated, one, both)
            kept[own] = greedy(scores)
        agreed = kept["alice"] & {(r, c) for c, r in kept["bob"]}
        alice, bob = tables["alice"], tables["bob"]
        order_a, order_b = released["alice"].order, released["bob"].order
        found = {(alice.ids[order_a[r]], bob.ids[order_b[c]]) for r, c in agreed}
        q = linkage_quality(found, truth)
        shown = label if count is None else f"{label}, {count} random features"
        rows.append({"shape": shown, "precision": q.precision, "recall": q.recall, "f1": q.f1})
        print(f"{shown:<48} P {q.precision:.4f} R {q.recall:.4f} F1 {q.f1:.4f}", flush=True)
    if args.json:
        result = {"command": run_command(args), "rows": rows}
        write_result(args.json, result)


if __name__ == "__main__":
    main()
