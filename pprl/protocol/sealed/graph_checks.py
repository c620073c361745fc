"""The scorer's checks of the evaluator under the keys' graph (the hidden join has its own:
hidden_join.checks). An evaluator returning ciphertexts of its own making in place of its
computation would read signs of linear functions of the scorer's secret key in what the
scorer does with them (docs/research/sealed.md, "Through two daemons"); checks catch it.

A few of the scorer's rows with candidates are made checks: in every slot the layout gives
such a row, the scorer encrypts zeros and a constant in the middle of a bucket it draws
(hidden_join.check_forms), so each of the row's pairs must decrypt to that bucket (its sign
alone where the pair is in no conflict), whatever the evaluator's rows. Both parties know
the candidate pairs and the layout, but a check row's ciphertexts are as fresh as any: the
evaluator cannot tell which rows they are. One pair in another bucket stops the scoring
before anything is kept.

A check row's pairs are not scored by the scorer's classifier, so it accepts them below
every pair it scored: such a pair links exactly when the peer's own classifier accepts it
(the link needs both parties' acceptance) and no pair the scorer scored competes for its
rows; of a check row's several candidates it keeps one by the shared tie order. Dropping
them instead would lose true pairs: under the graph join most candidates are true pairs
(FEBRL4's ten fields: about one candidate a row).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed.hidden_join import (
    check_count,
    check_forms,
    check_scores,
    met,
    weighted_sample,
)
from pprl.protocol.sealed.layout import Layout, conflicted
from pprl.protocol.sealed.linear_form import Alternative

# Of the scorer's rows with candidates, the share made checks: at least CHECK_LEAST, never
# more than CHECK_MOST_SHARE (on a few dozen rows a floor of 32 would leave most pairs to the
# peer alone). A check costs no pair, only the scorer's say on a row's pairs, so the share is
# three times the hidden join's, where a check entry's pairs are lost to that key; and a
# replaced pair in no conflict passes a check by chance 1 time in 2, where a bucket passes 1
# in 12 (benchmarks/sealed_check_power.py).
CHECK_SHARE = 0.03
CHECK_LEAST = 32
CHECK_MOST_SHARE = 0.1
# The score a check row's accepted pair is given in the one-to-one step: accepted, below the
# lowest bucket any scored pair reaches.
UNSCORED = 0.5


@dataclass(frozen=True)
class GraphChecks:
    """The scorer's check rows and the bucket each one's pairs must decrypt to."""

    rows: np.ndarray  # (K,) own rows
    buckets: np.ndarray  # (K,)


def drawn(pairs: np.ndarray, buckets: int, rng: np.random.Generator) -> GraphChecks:
    """CHECK_SHARE of the own rows with candidate `pairs` (own row first), each drawn with a
    chance proportional to its pairs (hidden_join.weighted_sample: every pair an evaluator
    replaces risks a check alike), each with a bucket of the `buckets`."""
    if len(pairs):
        rows, sizes = np.unique(pairs[:, 0], return_counts=True)
    else:
        rows, sizes = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    count = check_count(len(rows), CHECK_SHARE, CHECK_MOST_SHARE, CHECK_LEAST)
    chosen = np.sort(rows[weighted_sample(1.0 - rng.random(len(rows)), sizes, count)])
    return GraphChecks(chosen.astype(np.int64), rng.integers(0, buckets, size=len(chosen)))


def with_check_rows(
    layout: Layout,
    x: np.ndarray,
    c: np.ndarray,
    alternative: Alternative | None,
    checks: GraphChecks,
    thresholds: tuple[float, ...],
) -> tuple[Layout, np.ndarray, np.ndarray, Alternative | None]:
    """The layout and forms the scorer encrypts: one row appended for each check row, zeros
    and its bucket's constant in both forms, and the check row's slots pointed at it. The
    pairs, peers and ranks are unchanged, so the evaluator's computation is too."""
    n = len(x)
    sources = np.concatenate([np.arange(n), checks.rows])
    scores = np.concatenate([np.full(n, np.nan), check_scores(checks.buckets, thresholds)])
    x, c, alternative = check_forms(x, c, alternative, sources, scores)
    to = np.full(n, -1, dtype=np.int64)
    to[checks.rows] = n + np.arange(len(checks.rows))
    rows = np.where(to[layout.rows] >= 0, to[layout.rows], layout.rows)
    return dataclasses.replace(layout, rows=rows), x, c, alternative


def due(pairs: np.ndarray, checks: GraphChecks) -> np.ndarray:
    """(P,) the bucket each check row's pair must decrypt to, -1 for the other pairs: its
    row's bucket where the pair is in conflict (`layout.conflicted`: the evaluator returns
    every threshold), else its sign alone (0 or 1)."""
    bucket = np.full(int(pairs[:, 0].max(initial=-1)) + 1, -1, dtype=np.int64)
    bucket[checks.rows] = checks.buckets
    own = bucket[pairs[:, 0]] if len(pairs) else np.zeros(0, dtype=np.int64)
    return np.where((own >= 0) & ~conflicted(pairs), np.minimum(own, 1), own)


def verified(pairs: np.ndarray, checks: GraphChecks, buckets: np.ndarray) -> np.ndarray:
    """(P,) the scores the one-to-one step ranks: each pair's bucket, a check row's pair
    UNSCORED. ValueError when a check row's pair decrypted to another bucket than it must
    (hidden_join.met)."""
    held = met(due(pairs, checks), buckets, "pairs")
    return np.where(held, UNSCORED, buckets.astype(np.float64))
