"""Matching (Algorithm 3): score all pairs blockwise, keep the likely ones, make them 1:1.

The full n_a x n_b score matrix never exists. A block of A rows gets its per-mapping-entry
dot products once; every requested selection (a classifier plus how its accepted pairs are
kept) is scored from them, so one pass serves several classifiers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pprl.protocol.errors import PprlError, SettingError
from pprl.protocol.model.classifier import Model, full_weights
from pprl.protocol.model.features import indicator_features, missing_units, pair_features
from pprl.protocol.progress import Progress

DEFAULT_TOP_K = 10
# A classifier that accepts nearly every pair would otherwise fill memory in "judge each pair
# alone" mode: 2.5e9 pairs at 50k x 50k.
MAX_KEPT_PAIRS = 50_000_000


class TooManyPairs(PprlError):
    """The classifier accepts more pairs than can be held; it is not separating the classes."""


@dataclass(frozen=True)
class Matches:
    """Parallel arrays: pair t links A row rows_a[t] to B row rows_b[t] with scores[t]."""

    rows_a: np.ndarray
    rows_b: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.rows_a)


@dataclass(frozen=True)
class Matched:
    """The one-to-one pairs (own row, peer row, score), and how many pairs were scored
    (None: all)."""

    matches: Matches
    scored: int | None


@dataclass(frozen=True)
class Selection:
    """One classifier's view of the pairs: keep pairs with decision > `threshold`, at most
    `top_k` per row of side `rows_of` ("a" or "b"); `top_k` None keeps every accepted pair,
    which judges each pair alone as the paper does. A threshold of -inf keeps each row's
    top_k whatever they score (soft linkage)."""

    model: Model
    top_k: int | None = DEFAULT_TOP_K
    rows_of: str = "a"
    threshold: float = 0.0

    def __post_init__(self) -> None:
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")
        if self.rows_of not in ("a", "b"):
            raise ValueError(f'rows_of must be "a" or "b", got {self.rows_of!r}')


@dataclass
class PassTimes:
    """Seconds spent in one pass: work the selections share (dot products, distance lookups),
    and each selection's own scoring and selection."""

    shared: float = 0.0
    selections: list[float] = field(default_factory=list)


def _empty() -> Matches:
    empty = np.empty(0, dtype=np.int64)
    return Matches(empty, empty.copy(), np.empty(0, dtype=np.float32))


def _concat(parts: Sequence[Matches]) -> Matches:
    if not parts:
        return _empty()
    return Matches(
        rows_a=np.concatenate([p.rows_a for p in parts]),
        rows_b=np.concatenate([p.rows_b for p in parts]),
        scores=np.concatenate([p.scores for p in parts]),
    )


@dataclass(frozen=True)
class BlockDots:
    """A block's (M, k, n_b) float32 cosine similarities, and which values are missing on
    each side ((k, M) and (n_b, M)); None when no value of either side is missing, the
    common case, which then costs nothing extra."""

    dots: np.ndarray
    missing_a: np.ndarray | None = None
    missing_b: np.ndarray | None = None


def _block_dots(
    unit_a_block: np.ndarray, unit_b: np.ndarray, missing_b: np.ndarray | None
) -> BlockDots:
    """One BLAS product per mapping entry."""
    m = unit_a_block.shape[1]
    out = np.empty((m, len(unit_a_block), len(unit_b)), dtype=np.float32)
    for entry in range(m):
        np.matmul(unit_a_block[:, entry, :], unit_b[:, entry, :].T, out=out[entry])
    missing_a = missing_units(unit_a_block)
    if missing_b is None and not missing_a.any():
        return BlockDots(out)
    if missing_b is None:
        missing_b = np.zeros((len(unit_b), m), dtype=bool)
    return BlockDots(out, missing_a, missing_b)


def linear_decision(
    weights: np.ndarray,
    bias: float,
    dots: np.ndarray,
    indicators: np.ndarray | None,
    caps: np.ndarray | None = None,
) -> np.ndarray:
    """b + sum_m w_m (1 - dot_m) + the indicators' weights = (b + sum_m w_m) - w . dots + ...:
    one pass over (M, ...) dots. Dots lie in [0, 1] (distances are never negative), so the
    features' clip never binds; `indicators` is (2M, ...) or None when nothing is missing.
    A cap on distance 1 - dot is a floor 1 - cap on the dot."""
    m = len(dots)
    weights = full_weights(weights, m)
    distance_weights = weights[:m]
    flat = dots.reshape(m, -1)
    if caps is not None:
        flat = np.maximum(flat, (1.0 - caps).astype(np.float32)[:, None])
    scores = (-distance_weights).astype(np.float32) @ flat
    scores += np.float32(bias + distance_weights.sum())
    if indicators is not None:
        scores += weights[m:].astype(np.float32) @ indicators.reshape(2 * m, -1)
    return scores.reshape(dots.shape[1:])


def parts_decision(
    model: Model, dots: np.ndarray, indicators: np.ndarray | None
) -> np.ndarray | None:
    """`linear_decision` of a model linear in the distances: the highest of its linear parts
    (classifier.Model.linear_parts); None for one that is not (an rbf or a kernel model)."""
    parts = model.linear_parts()
    if parts is None or not model.linear_in_distances:
        return None
    decisions = [linear_decision(w, b, dots, indicators, model.caps) for w, b in parts]
    return decisions[0] if len(decisions) == 1 else np.maximum.reduce(decisions)


def _block_indicators(block: BlockDots) -> np.ndarray | None:
    """(2M, k, n_b) indicators of a block, or None when nothing is missing."""
    if block.missing_a is None or block.missing_b is None:
        return None
    both = indicator_features(block.missing_a[:, None, :], block.missing_b[None, :, :])
    return np.ascontiguousarray(both.transpose(2, 0, 1))


def _scores(block: BlockDots, model: Model) -> np.ndarray:
    """(k, n_b) float32 decision values from the block's dot products."""
    indicators = _block_indicators(block)
    dots = block.dots
    linear = parts_decision(model, dots, indicators)
    if linear is not None:
        return linear
    m, k, n_b = dots.shape
    features = np.empty((k, n_b, 3 * m), dtype=np.float32)
    features[..., :m] = np.clip(1.0 - dots, 0.0, 2.0, dtype=np.float32).transpose(1, 2, 0)
    features[..., m:] = 0.0 if indicators is None else indicators.transpose(1, 2, 0)
    flat = features.reshape(k * n_b, 3 * m)
    return model.decision(flat).astype(np.float32).reshape(k, n_b)


def _ranked(matches: Matches, rows_of: str, top_k: int | None) -> Matches:
    """Sort by row of `rows_of` then descending score (ties to the lower other row); keep the
    first top_k of each row."""
    group, other = (
        (matches.rows_a, matches.rows_b) if rows_of == "a" else (matches.rows_b, matches.rows_a)
    )
    order = np.lexsort((other, -matches.scores, group))
    if top_k is not None:
        grouped = group[order]
        starts = np.searchsorted(grouped, grouped, side="left")
        order = order[np.arange(len(order)) - starts < top_k]
    return Matches(matches.rows_a[order], matches.rows_b[order], matches.scores[order])


def _accepted(scores: np.ndarray, first_row: int, selection: Selection) -> Matches:
    """Positive pairs of a block; with top_k, at most top_k per row of the block.

    A dense block (a weak classifier) is first cut with a partition so the sort stays small.
    """
    keep = scores > selection.threshold
    if selection.top_k is not None:
        axis = 1 if selection.rows_of == "a" else 0
        size = scores.shape[axis]
        if (
            size > selection.top_k
            and np.count_nonzero(keep) > 4 * selection.top_k * (scores.shape[1 - axis])
        ):
            kth = np.partition(scores, size - selection.top_k, axis=axis)
            kth_best = np.take(kth, [size - selection.top_k], axis=axis)
            keep &= scores >= kth_best
    # One flat scan: np.nonzero of a 2-D mask costs several times more on a wide block.
    rows, cols = np.divmod(np.flatnonzero(keep), keep.shape[1])
    found = Matches(
        rows_a=rows.astype(np.int64) + first_row,
        rows_b=cols.astype(np.int64),
        scores=scores[rows, cols].astype(np.float32),
    )
    return _ranked(found, selection.rows_of, selection.top_k)


class _Collector:
    """Accumulates one selection's pairs over blocks, within MAX_KEPT_PAIRS."""

    def __init__(self, selection: Selection, n_b: int) -> None:
        self.selection = selection
        self.parts: list[Matches] = []
        self.kept = 0
        # Per-B-row top_k spans blocks: compact once the parts hold twice what can survive.
        self.compact_at = None if selection.top_k is None else 2 * selection.top_k * n_b

    def add(self, part: Matches) -> None:
        self.parts.append(part)
        self.kept += len(part)
        if self.kept > MAX_KEPT_PAIRS:
            raise TooManyPairs(
                f"the classifier accepts more than {MAX_KEPT_PAIRS:,} pairs; it does not separate "
                "matches from non-matches (retrain it, or keep fewer pairs per record)"
            )
        if self.selection.rows_of == "b" and self.compact_at and self.kept > self.compact_at:
            self.parts = [self.result()]
            self.kept = len(self.parts[0])

    def result(self) -> Matches:
        if self.selection.rows_of == "a":
            return _concat(self.parts)
        return _ranked(_concat(self.parts), "b", self.selection.top_k)


def scan(
    n_a: int,
    n_b: int,
    selections: Sequence[Selection],
    *,
    block_rows: int,
    prepare: Callable[[int, int], object],
    score: Callable[[object, Model], np.ndarray],
    progress: Progress | None = None,
    times: PassTimes | None = None,
) -> list[Matches]:
    """Walk A rows in blocks: `prepare(start, stop)` builds what the block's pairs share, and
    `score(prepared, model)` turns it into (stop - start, n_b) decision values per selection.

    Returns, per selection, its accepted pairs sorted by its rows, then by descending score.
    """
    collectors = [_Collector(selection, n_b) for selection in selections]
    spent = [0.0] * len(selections)
    shared = 0.0
    for start in range(0, n_a, block_rows):
        stop = min(start + block_rows, n_a)
        if n_b:
            began = time.perf_counter()
            prepared = prepare(start, stop)
            shared += time.perf_counter() - began
            for index, collector in enumerate(collectors):
                began = time.perf_counter()
                scores = score(prepared, collector.selection.model)
                collector.add(_accepted(scores, start, collector.selection))
                spent[index] += time.perf_counter() - began
        if progress is not None:
            progress(stop, n_a)
    results = []
    for index, collector in enumerate(collectors):
        began = time.perf_counter()
        results.append(collector.result())
        spent[index] += time.perf_counter() - began
    if times is not None:
        times.shared, times.selections = shared, spent
    return results


def score_pairs(
    unit_a: np.ndarray,
    unit_b: np.ndarray,
    selections: Sequence[Selection],
    *,
    block_bytes: int = 64 << 20,
    progress: Progress | None = None,
    times: PassTimes | None = None,
) -> list[Matches]:
    """One pass over all pairs of two smashed (unit-vector) tensors for every selection."""
    if unit_a.shape[1:] != unit_b.shape[1:]:
        raise ValueError(f"tensors differ in shape: {unit_a.shape[1:]} vs {unit_b.shape[1:]}")
    n_a, n_b = len(unit_a), len(unit_b)
    m = unit_a.shape[1]
    # block_bytes bounds a block's main arrays: M dot products and one score per pair, plus
    # the rbf features (M per pair) when a selection needs them.
    per_pair = 4 * (m + 2 + (3 * m if any(s.model.kind == "rbf" for s in selections) else 0))
    missing_b = missing_units(unit_b)
    shared_missing_b = missing_b if missing_b.any() else None
    return scan(
        n_a,
        n_b,
        selections,
        block_rows=max(1, block_bytes // (per_pair * max(1, n_b))),
        prepare=lambda start, stop: _block_dots(unit_a[start:stop], unit_b, shared_missing_b),
        score=_scores,  # type: ignore[arg-type]
        progress=progress,
        times=times,
    )


GREEDY = "greedy-one-to-one"
OPTIMAL = "optimal-one-to-one"
ASSIGNMENTS = (GREEDY, OPTIMAL)


def above(matches: Matches, threshold: float) -> Matches:
    """The pairs scoring above `threshold`, in their order."""
    if threshold < 0:
        raise SettingError(f"a threshold below 0 keeps pairs the candidates miss: {threshold}")
    keep = matches.scores > threshold
    return Matches(matches.rows_a[keep], matches.rows_b[keep], matches.scores[keep])


def one_to_one(matches: Matches, assignment: str = GREEDY) -> Matches:
    """Each row used at most once: greedy by score, or the matching of largest total score."""
    if assignment == GREEDY:
        return greedy_one_to_one(matches)
    if assignment == OPTIMAL:
        return optimal_one_to_one(matches)
    raise SettingError(
        f"unknown assignment {assignment!r}; expected one of {', '.join(ASSIGNMENTS)}"
    )


def greedy_one_to_one(matches: Matches) -> Matches:
    """Greedy by descending score, ties by (rows_a, rows_b): each row used at most once.

    Greedy is inherently sequential; it only walks the few pairs the selection kept.
    """
    order = np.lexsort((matches.rows_b, matches.rows_a, -matches.scores))
    used_a: set[int] = set()
    used_b: set[int] = set()
    chosen = []
    for t, a, b in zip(
        order.tolist(), matches.rows_a[order].tolist(), matches.rows_b[order].tolist(), strict=True
    ):
        if a not in used_a and b not in used_b:
            used_a.add(a)
            used_b.add(b)
            chosen.append(t)
    picked = np.asarray(chosen, dtype=np.int64)
    return Matches(matches.rows_a[picked], matches.rows_b[picked], matches.scores[picked])


def optimal_one_to_one(matches: Matches) -> Matches:
    """The one-to-one subset of the (distinct) accepted pairs with the largest sum of scores.

    Why: a record's best pair may be its partner's second best. Greedy gives the pair to
    whoever scores it highest first; the sum of decision values (log-odds for a logistic
    model) weighs both records' alternatives. On FEBRL4 names the agreed linkage kept 120-150
    fewer false pairs for 40-50 fewer true ones (docs/research/results.md).

    As a minimum-cost full matching on a sparse graph (scipy's sparse Jonker-Volgenant): the
    side with fewer distinct rows is the row side, each of its rows gets one stand-in column of
    its own besides the other side's rows. An accepted pair costs K - score, a row's stand-in
    costs K (the row stays unmatched); every row must be matched, so a matching costs K * rows
    - the chosen pairs' scores and the cheapest holds the pairs of largest total. Only accepted
    pairs are edges: the work follows how many pairs were kept, never n_a x n_b. (A square
    graph with stand-ins on both sides gives the same total but took 9-14x as long at
    50,000 a side: docs/research/benchmarks.md.)
    """
    if len(matches) == 0:
        return matches
    # A pair whose rows are in no other pair is in the best matching exactly when its score
    # beats its rows' stand-ins (above 0): only the rest need the solver, which holds the
    # GIL (at a million a side 1.4 million accepted pairs, most of them alone, starved the
    # peer's evaluation for minutes).
    _, at_a, many_a = np.unique(matches.rows_a, return_inverse=True, return_counts=True)
    _, at_b, many_b = np.unique(matches.rows_b, return_inverse=True, return_counts=True)
    alone = (many_a[at_a.reshape(-1)] == 1) & (many_b[at_b.reshape(-1)] == 1)
    kept = np.flatnonzero(alone & (matches.scores > 0))
    conflicted = np.flatnonzero(~alone)
    if len(conflicted):
        rest = Matches(
            matches.rows_a[conflicted], matches.rows_b[conflicted], matches.scores[conflicted]
        )
        kept = np.concatenate([kept, conflicted[_assigned(rest)]])
    picked = np.sort(kept)
    return Matches(matches.rows_a[picked], matches.rows_b[picked], matches.scores[picked])


def _assigned(matches: Matches) -> np.ndarray:
    """The indices of the pairs in the best matching (`optimal_one_to_one`'s solver)."""
    # Imported here: scipy.sparse.csgraph takes a fifth of a second to import, which every
    # `pprl` process paid at start (a coordinator or `pprl --help` too), not only MATCH.
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    rows_a, index_a = np.unique(matches.rows_a, return_inverse=True)
    rows_b, index_b = np.unique(matches.rows_b, return_inverse=True)
    if len(rows_a) <= len(rows_b):
        index_row, index_col, n_rows, n_cols = index_a, index_b, len(rows_a), len(rows_b)
    else:
        index_row, index_col, n_rows, n_cols = index_b, index_a, len(rows_b), len(rows_a)
    scores = matches.scores.astype(np.float64)
    top = float(scores.max()) + 1.0  # K: every cost at least 1, so no edge reads as absent
    graph = csr_matrix(
        (
            np.concatenate([top - scores, np.full(n_rows, top)]),
            (
                np.concatenate([index_row, np.arange(n_rows)]),
                np.concatenate([index_col, n_cols + np.arange(n_rows)]),
            ),
        ),
        shape=(n_rows, n_cols + n_rows),
    )
    _, matched = min_weight_full_bipartite_matching(graph)
    return np.flatnonzero(matched[index_row] == index_col)


def exact_scores(unit_a: np.ndarray, unit_b: np.ndarray, model: Model) -> np.ndarray:
    """(n_a, n_b) decision values pair by pair: the slow oracle for tests on small inputs."""
    rows_a, rows_b = np.divmod(np.arange(len(unit_a) * len(unit_b)), len(unit_b))
    features = pair_features(unit_a[rows_a], unit_b[rows_b])
    return model.decision(features).reshape(len(unit_a), len(unit_b))
