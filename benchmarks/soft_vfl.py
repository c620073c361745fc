"""Does soft linkage (K best peer records) train a better model than top-1 when the linkage is
uncertain? FedSim's point (the second seed's appendix), measured on generated data.

Alice holds a label and two features of her own; Bob holds four other features of each of his
people. The label depends on both parties' features (a regression: R^2 on Alice's held-out
records). The parties link their names as the daemons do (pipeline: released tensors with the
agreed noise, Alice's own classifier, soft_match), then Alice trains a gradient-boosted model
on her features and, per record:

- top-1: her best-scoring peer record's features and score;
- soft K: the K best records' features and scores by rank, and their score-weighted mean.

Bounds: "solo" (Alice's features only) and "exact" (the true partner's features). More noise
makes the linkage less certain; each setting runs over several seeds:

    .venv/bin/python benchmarks/soft_vfl.py --size 2000 --sigmas 1.5 2.5 3.5 --seeds 1 2 3 4 5 \\
        --out docs/research/results/soft_vfl.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import r2_score

from pprl.bench.data import read_reference
from pprl.files.atomic import write_text_atomic
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.method import method_params
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ("first", "middle", "last")
ALICE_WEIGHTS = np.array([1.0, 0.5])
BOB_WEIGHTS = np.array([1.5, -1.0, 1.0, 0.5])
MODELS = ("solo", "top-1", "soft", "exact")


def _columns(people: list) -> dict[str, list[str]]:
    return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}


def soft_neighbours(
    size: int, sigma: float, seed: int, top_k: int, reference_rows: int
) -> tuple[synthetic.SyntheticData, np.ndarray, np.ndarray]:
    """Alice's records' top_k Bob records (indices into data.bob) and scores, by Alice's
    record index and rank."""
    data = synthetic.generate(size, seed)
    agreement = Agreement(
        ReferenceSet("built-in", read_reference(None, reference_rows)),
        DEFAULT_MAPPING,
        method_params(noise_sigma=sigma),
    )
    alice, bob = Randomness(seed, "alice"), Randomness(seed, "bob")
    released_a = pipeline.release(agreement, _columns(data.alice), alice)
    released_b = pipeline.release(agreement, _columns(data.bob), bob)
    model, _ = pipeline.train(agreement, _columns(data.alice), alice)
    soft = pipeline.soft_match(agreement, released_a.tensor, released_b.tensor, model, top_k)
    own = released_a.order[soft.rows_a].reshape(-1, top_k)
    peer = released_b.order[soft.rows_b].reshape(-1, top_k)
    scores = soft.scores.reshape(-1, top_k)
    by_record = np.argsort(own[:, 0])
    return data, peer[by_record], scores[by_record]


def features(
    own: np.ndarray, peer_features: np.ndarray, peer: np.ndarray, scores: np.ndarray, k: int
) -> np.ndarray:
    """Alice's features, then per rank up to k the peer record's features and score, and with
    k > 1 the neighbours' features weighted by the softmax of their scores (log-odds)."""
    parts = [own]
    for rank in range(k):
        parts += [peer_features[peer[:, rank]], scores[:, rank : rank + 1]]
    if k > 1:
        top = scores[:, :k] - scores[:, :k].max(axis=1, keepdims=True)
        weights = np.exp(top) / np.exp(top).sum(axis=1, keepdims=True)
        parts.append(np.einsum("nk,nkd->nd", weights, peer_features[peer[:, :k]]))
    return np.hstack(parts)


def point(size: int, sigma: float, seed: int, top_k: int, reference_rows: int) -> dict:
    began = time.perf_counter()
    data, peer, scores = soft_neighbours(size, sigma, seed, top_k, reference_rows)
    link_seconds = time.perf_counter() - began
    index_a = {p.id: i for i, p in enumerate(data.alice)}
    index_b = {p.id: i for i, p in enumerate(data.bob)}
    partner = np.full(len(data.alice), -1)
    for a, b in data.truth:
        partner[index_a[a]] = index_b[b]
    rng = np.random.default_rng(seed + 1000)
    own = rng.normal(size=(len(data.alice), len(ALICE_WEIGHTS)))
    person = rng.normal(size=(len(data.bob), len(BOB_WEIGHTS)))
    # Bob's features belong to his person; Alice's label to hers, and so to her partner's.
    partner_part = np.where(partner[:, None] >= 0, person[np.maximum(partner, 0)], 0.0)
    label = own @ ALICE_WEIGHTS + partner_part @ BOB_WEIGHTS + 0.3 * rng.normal(size=len(own))
    bob_features = person + 0.1 * rng.normal(size=person.shape)
    designs = {
        "solo": own,
        "top-1": features(own, bob_features, peer, scores, 1),
        "soft": features(own, bob_features, peer, scores, top_k),
        "exact": np.hstack([own, bob_features[np.maximum(partner, 0)]]),
    }
    train = rng.random(len(own)) < 0.7
    r2 = {}
    for name, design in designs.items():
        model = HistGradientBoostingRegressor(random_state=seed).fit(design[train], label[train])
        r2[name] = float(r2_score(label[~train], model.predict(design[~train])))
    has_partner = partner >= 0
    return {
        "size": size,
        "sigma": sigma,
        "seed": seed,
        "top_k": top_k,
        "reference_rows": reference_rows,
        "partner_first": float(np.mean(peer[has_partner, 0] == partner[has_partner])),
        "partner_in_top_k": float(np.mean((peer == partner[:, None]).any(axis=1)[has_partner])),
        "r2": r2,
        "link_seconds": link_seconds,
    }


def table(rows: list[dict]) -> str:
    """Per (size, sigma, K): means over seeds, and the soft-minus-top-1 gap with its spread."""
    lines = [
        "| a side | sigma | K | seeds | partner first | partner in top K | R² solo | R² top-1 "
        "| R² soft K | R² exact | soft K - top-1: mean ± sd (min, max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    settings = sorted({(r["size"], r["sigma"], r["top_k"]) for r in rows})
    for size, sigma, top_k in settings:
        group = [r for r in rows if (r["size"], r["sigma"], r["top_k"]) == (size, sigma, top_k)]
        mean = {m: statistics.mean(r["r2"][m] for r in group) for m in MODELS}
        gaps = [r["r2"]["soft"] - r["r2"]["top-1"] for r in group]
        spread = statistics.stdev(gaps) if len(gaps) > 1 else 0.0
        lines.append(
            f"| {size:,} | {sigma:g} | {top_k} | {len(group)} "
            f"| {statistics.mean(r['partner_first'] for r in group):.3f} "
            f"| {statistics.mean(r['partner_in_top_k'] for r in group):.3f} "
            + " ".join(f"| {mean[m]:.4f}" for m in MODELS)
            + f" | {statistics.mean(gaps):+.4f} ± {spread:.4f} "
            f"({min(gaps):+.4f}, {max(gaps):+.4f}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--sigmas", type=float, nargs="+", default=[2.5])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--table", action="store_true", help="only print --out as markdown")
    args = parser.parse_args(argv)
    if args.top_k < 2:
        parser.error(f"--top-k must be at least 2 to compare with top-1, got {args.top_k}")
    if not args.table:
        rows = json.loads(args.out.read_text()) if args.out.exists() else []
        done = {(r["size"], r["sigma"], r["seed"], r["top_k"]) for r in rows}
        for sigma in args.sigmas:
            for seed in args.seeds:
                if (args.size, sigma, seed, args.top_k) in done:
                    continue
                row = point(args.size, sigma, seed, args.top_k, args.reference_rows)
                rows.append(row)
                write_text_atomic(args.out, json.dumps(rows, indent=1))
                print(
                    f"sigma {sigma:g} seed {seed}: partner first {row['partner_first']:.3f}, "
                    f"in top {args.top_k} {row['partner_in_top_k']:.3f}; R² "
                    + ", ".join(f"{m} {row['r2'][m]:.4f}" for m in MODELS),
                    flush=True,
                )
    print(table(json.loads(args.out.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
