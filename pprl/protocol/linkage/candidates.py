"""Candidate pairs, then exact scores for those pairs only.

A linear decision is b + sum_m (w_m d_m + v_m one_m + u_m both_m), with d_m the cosine
distance of mapping entry m, clipped to [0, 2], and one_m / both_m whether its value is
missing on one side / on both (then d_m = 1). Each entry's term is at most best_m =
max(0, 2 w_m, w_m + v_m, w_m + u_m), so a pair whose values on entry m are present can only be
accepted when, for w_m < 0, d_m < (b + sum_j best_j - best_m) / -w_m: one exact bound per
entry. Pairs with entry m missing on a side are candidates of that entry's join exactly when
its missing terms could still be accepted; a missing value is one distinct (zero) vector.

Names repeat, so each entry's vectors collapse to far fewer distinct ones. One entry (the
"blocking entry") is joined on its bound between distinct vectors, block by block; every
other entry's cosine comes from a dense table over its distinct vectors. Each candidate pair
then gets the decision all-pairs scoring would give it (up to float32 rounding), so no
accepted pair is lost.

A model with caps reads min(d_m, cap_m) (classifier.saturation_caps), a missing value's
distance too: its terms and bounds use that, and an entry whose bound reaches its cap bounds
nothing.

An rbf classifier has no such bound of its own; it carries a linear envelope trained on the
same pairs (see classifier.train), whose bound picks the candidates the rbf then scores.

Under noise the bounds keep most pairs. For a linear model without caps, every pair's
decision is then one matrix product (dense_scores), which costs less than expanding and
scoring the candidates; `plan` chooses by an estimate of both costs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

from pprl.protocol.errors import PprlError
from pprl.protocol.linkage import dense_scores
from pprl.protocol.linkage.matching import (
    Matches,
    Selection,
    _concat,
    _ranked,
    linear_decision,
    parts_decision,
    score_pairs,
)
from pprl.protocol.linkage.plans import BlockResult, Outcome, Plan, run_here
from pprl.protocol.model.classifier import Model, full_weights
from pprl.protocol.model.features import (
    Standardise,
    indicator_features,
    missing_units,
    unit_vectors,
)
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.smashing import distinct_codes

# Widening of each bound so float rounding can never drop a pair all-pairs scoring keeps.
_SLACK = 1e-4
# Expanded record pairs handled at once: about 100 bytes each of working arrays.
PAIRS_PER_CHUNK = 2_000_000
# Dense tables of the non-blocking entries above this are refused (CandidatesUnavailable).
MAX_TABLE_BYTES = 3 << 30
# Multiply-adds that expanding and scoring one candidate pair costs, as measured against a
# matrix product's (about 56 ns a pair and 0.04 ns a multiply-add on 2 cores): steers the
# choice of the dense product over the join, never which pairs come out.
PAIR_COST = 1000
_SAMPLE_ROWS = 256


class TensorRows(Protocol):
    """An (n, M, R) uint8 tensor, or anything that hands out its rows by slice."""

    shape: tuple[int, ...]

    def __getitem__(self, rows: slice) -> np.ndarray: ...


class CandidatesUnavailable(PprlError, ValueError):
    """No bound prunes anything, or the tables would not fit: score all pairs instead."""


@dataclass(frozen=True)
class DistinctEntry:
    """One mapping entry of a tensor: its distinct unit vectors and each row's index among them."""

    vectors: np.ndarray  # (u, R) float32
    codes: np.ndarray  # (n,) int64
    counts: np.ndarray  # (u,) int64: rows per distinct vector

    @cached_property
    def missing(self) -> np.ndarray:
        """(u,) bool: the distinct vector of a missing value (read by the estimate, the
        missing patterns and the plan, so computed once)."""
        return missing_units(self.vectors)


def distinct_entries(
    tensor: TensorRows, chunk_rows: int = 8192, standardise: Standardise | None = None
) -> list[DistinctEntry]:
    """Collapse an (n, M, R) uint8 tensor entry by entry. Rows are read `chunk_rows` at a
    time, so a tensor read from disk on demand is never held whole. The distinct vectors are
    kept as unit vectors of the agreed features (`standardise`).

    Rows are grouped by two 64-bit hashes (their 8-byte words times fixed random odd keys,
    wrapping), then every row is compared with its group's first row; a collision, however
    unlikely, is caught there and that entry is grouped again byte by byte.
    """
    n, entries, width = tensor.shape
    words = -(-width // 8)
    keys = np.random.default_rng(0).integers(1, 1 << 62, size=(words, 2), dtype=np.uint64) | 1
    hashes = np.empty((entries, n, 2), dtype=np.uint64)
    for start in range(0, n, chunk_rows):
        block = np.asarray(tensor[start : start + chunk_rows])
        padded = np.zeros((len(block), words * 8), dtype=np.uint8)
        for entry in range(entries):
            padded[:, :width] = block[:, entry, :]
            hashes[entry, start : start + len(block)] = padded.view(np.uint64) @ keys
    groups = []
    for entry in range(entries):
        _, first, codes = np.unique(hashes[entry], axis=0, return_index=True, return_inverse=True)
        groups.append((first, codes.reshape(-1)))
    del hashes
    distinct = [np.empty((len(first), width), np.uint8) for first, _ in groups]
    exact = [True] * entries
    for start in range(0, n, chunk_rows):
        block = np.asarray(tensor[start : start + chunk_rows])
        for entry, (first, codes) in enumerate(groups):
            rows = block[:, entry, :]
            mine = codes[start : start + len(block)]
            here = (first >= start) & (first < start + len(block))
            distinct[entry][here] = rows[first[here] - start]
            exact[entry] &= bool(np.array_equal(distinct[entry][mine], rows))
    out = []
    for entry, (_, codes) in enumerate(groups):
        if not exact[entry]:
            vectors, codes = _distinct_by_bytes(tensor, entry, chunk_rows)
        else:
            vectors = distinct[entry]
        shift = None if standardise is None else standardise.entry(entry)
        out.append(DistinctEntry(unit_vectors(vectors, shift), codes, np.bincount(codes)))
    return out


def _distinct_by_bytes(
    tensor: TensorRows, entry: int, chunk_rows: int
) -> tuple[np.ndarray, np.ndarray]:
    n, _, width = tensor.shape
    rows = (
        row.tobytes()
        for start in range(0, n, chunk_rows)
        for row in np.asarray(tensor[start : start + chunk_rows])[:, entry, :]
    )
    distinct, codes = distinct_codes(rows)
    return np.frombuffer(b"".join(distinct), dtype=np.uint8).reshape(-1, width), codes


@dataclass(frozen=True)
class Bounds:
    """Per entry: the largest cosine distance a present pair the model accepts can have (inf
    when the entry does not bound it), and whether a pair missing on that entry could still
    be accepted."""

    limits: np.ndarray  # (M,)
    missing_accepted: np.ndarray  # (M,) bool
    weights: np.ndarray  # (3, M): distance, one side missing, both missing
    bias: float
    slack: float
    # (M,) the largest distance the model reads for an entry: its cap, or 2 without caps.
    tops: np.ndarray
    # (M,) an entry's distance term when its value is missing: the distance a missing value
    # is read as (1, or the cap when lower) times the entry's weight.
    absent: np.ndarray

    def pattern_cuts(self, blocking: int, flags_a: np.ndarray, flags_b: np.ndarray) -> np.ndarray:
        """(P_a, P_b) float32 blocking cosines a candidate must reach, per pair of missing
        patterns ((P, M) bool rows). Knowing which entries are missing turns their best case
        into their exact term, so common patterns (no middle name) do not loosen the bound of
        every pair. A pair missing its blocking value has cosine 0: its cut is -inf when it
        could be accepted, +inf otherwise."""
        w, v, u = self.weights
        one = flags_a[:, None, :] ^ flags_b[None, :, :]
        both = flags_a[:, None, :] & flags_b[None, :, :]
        present_best = np.maximum(0.0, self.tops * w)
        terms = np.where(both, self.absent + u, np.where(one, self.absent + v, present_best))
        rest = self.bias + terms.sum(axis=-1) - terms[..., blocking]
        cuts = np.empty(rest.shape, dtype=np.float64)
        missing = one[..., blocking] | both[..., blocking]
        accepted = rest + terms[..., blocking] > -self.slack
        cuts[missing] = np.where(accepted[missing], -np.inf, np.inf)
        present = ~missing
        if w[blocking] < 0:
            limits = rest[present] / -w[blocking]
            cut = 1.0 - (limits * (1 + _SLACK) + _SLACK)
            # A distance read as its cap could still be accepted: no cut.
            cuts[present] = np.where(limits >= self.tops[blocking], -np.inf, cut)
        else:
            cuts[present] = -np.inf
        return cuts.astype(np.float32)


@dataclass(frozen=True)
class Envelope:
    """A decision linear in the (capped) distances that is at least the model's on every
    pair: what the blocking join's cuts and the pre-filter of a model that is not linear in
    the distances stand on."""

    weights: np.ndarray  # (3M,) or (M,)
    bias: float
    caps: np.ndarray | None


def envelope(model: Model) -> Envelope:
    """The linear weights, bias and caps that bound the model's accepted pairs."""
    if model.kind == "linear":
        weights, bias = model.arrays["weights"], float(model.arrays["bias"])
    elif "envelope_weights" in model.arrays:
        weights, bias = model.arrays["envelope_weights"], float(model.arrays["envelope_bias"])
    else:
        raise CandidatesUnavailable("this rbf model has no linear envelope (retrain it)")
    if model.widths is None:
        return Envelope(weights, bias, model.caps)
    return kernel_envelope(weights, bias, model.widths)


# Where a kernel's envelope stops falling, in widths: its chord leaves exp(-4), under 2%, of
# the entry's weight beyond, so that a disagreeing entry can still rule a pair out.
ENVELOPE_WIDTHS = 4.0


def kernel_envelope(weights: np.ndarray, bias: float, widths: np.ndarray) -> Envelope:
    """A kernel model's bound (weights on each entry's kernel value exp(-d / width), which is
    0 for a missing value) as a linear decision on distances capped at a multiple a of the
    widths: a convex kernel lies below its chord, exp(-d / width) <= 1 - (1 - e^-a)
    min(d, a width) / (a width), and a negative weight's term is at most 0."""
    m = len(widths)
    weights = full_weights(weights, m).copy()
    positive = np.maximum(weights[:m], 0.0)
    caps = ENVELOPE_WIDTHS * np.asarray(widths, dtype=np.float64)
    weights[:m] = -positive * (1.0 - np.exp(-ENVELOPE_WIDTHS)) / caps
    return Envelope(weights, bias + float(positive.sum()), caps)


def bounds(model: Model, entries: int) -> Bounds:
    bound = envelope(model)
    weights, bias = full_weights(bound.weights, entries), bound.bias
    w, v, u = np.split(weights, 3)
    tops = np.full(entries, 2.0) if bound.caps is None else np.minimum(2.0, bound.caps)
    absent = np.minimum(1.0, tops) * w
    missing_best = np.maximum(absent + v, absent + u)
    best_entry = np.maximum(np.maximum(0.0, tops * w), missing_best)
    best = bias + float(best_entry.sum())
    rest = best - best_entry
    limits = np.full(len(w), np.inf)
    negative = w < 0
    limits[negative] = rest[negative] / -w[negative]
    limits[limits >= tops] = np.inf
    slack = _SLACK * (1.0 + np.abs(weights).sum() + abs(bias))
    accepted = rest + missing_best > -slack
    return Bounds(limits, accepted, np.stack([w, v, u]), bias, slack, tops, absent)


def _missing_patterns(side: list[DistinctEntry]) -> tuple[np.ndarray, np.ndarray]:
    """(P, M) distinct patterns of missing entries and each row's pattern."""
    flags = np.stack([entry.missing[entry.codes] for entry in side], axis=1)
    patterns, of_row = np.unique(flags, axis=0, return_inverse=True)
    return patterns.astype(bool), of_row.reshape(-1)


def _split_by_pattern(
    entry: DistinctEntry, of_row: np.ndarray, count: int
) -> tuple[DistinctEntry, np.ndarray]:
    """The entry's distinct vectors made distinct per missing pattern too, and each one's
    pattern, so the blocking join can use the cut of each pair of patterns."""
    keys = entry.codes.astype(np.int64) * count + of_row
    distinct, codes = np.unique(keys, return_inverse=True)
    codes = codes.reshape(-1)
    split = DistinctEntry(entry.vectors[distinct // count], codes, np.bincount(codes))
    return split, distinct % count


@dataclass(frozen=True)
class _Grouped:
    """One side's rows sorted by blocking code: code c owns positions starts[c]:+counts[c],
    rows order[position]; codes[m][position] is entry m's code of that row."""

    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    codes: np.ndarray  # (M, n)

    @classmethod
    def of(cls, side: list[DistinctEntry], blocking: int) -> _Grouped:
        entry = side[blocking]
        order = np.argsort(entry.codes, kind="stable")
        starts = np.concatenate([[0], np.cumsum(entry.counts)[:-1]]).astype(np.int64)
        codes = np.stack([e.codes[order] for e in side])
        return cls(order, starts, entry.counts, codes)


def _expand(
    iu: np.ndarray, iv: np.ndarray, a: _Grouped, b: _Grouped
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of every record pair behind the distinct pairs (iu[t], iv[t]), and each
    pair's t."""
    count_b = b.counts[iv]
    sizes = a.counts[iu] * count_b
    total = int(sizes.sum())
    pair = np.repeat(np.arange(len(iu)), sizes)
    offset = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    within_a, within_b = np.divmod(offset, np.repeat(count_b, sizes))
    within_a += np.repeat(a.starts[iu], sizes)
    within_b += np.repeat(b.starts[iv], sizes)
    return within_a, within_b, pair


def _chunks(sizes: np.ndarray, limit: int) -> list[slice]:
    """Consecutive slices of `sizes` whose sums stay near `limit` (one item may exceed it)."""
    ends = np.cumsum(sizes)
    if not len(ends):
        return []
    cuts = np.searchsorted(ends, np.arange(limit, int(ends[-1]), limit), side="left") + 1
    bounds = [0, *sorted(set(cuts.tolist()) - {0, len(sizes)}), len(sizes)]
    return [slice(lo, hi) for lo, hi in itertools.pairwise(bounds)]


@dataclass
class CandidatePlan:
    """Everything one block of the blocking join needs; blocks are independent, so they can
    run in any order or on other workers (`block` is a pure function of the plan)."""

    selection: Selection
    blocking: int
    # (P_a, P_b) blocking cosine a candidate must reach, by the rows' missing patterns
    cuts: np.ndarray
    pattern_a: np.ndarray  # (u_a,) missing pattern of each distinct blocking vector
    pattern_b: np.ndarray  # (u_b,)
    vectors_a: np.ndarray
    vectors_b: np.ndarray
    grouped_a: _Grouped
    grouped_b: _Grouped
    tables: dict[int, np.ndarray]  # entry -> (u_a, u_b) float32 cosines, non-blocking entries
    blocks: list[tuple[int, int]]  # ranges of distinct blocking vectors of side A
    # Per entry, which distinct vectors of each side are missing values; None: none are.
    missing_a: list[np.ndarray] | None = None
    missing_b: list[np.ndarray] | None = None
    pairs_per_chunk: int = PAIRS_PER_CHUNK

    def block_records(self, block: tuple[int, int]) -> int:
        return int(self.grouped_a.counts[block[0] : block[1]].sum())

    def block(self, index: int) -> BlockResult:
        """Accepted pairs whose A rows fall in block `index`, ranked and cut to top_k."""
        start, stop = self.blocks[index]
        dots = self.vectors_a[start:stop] @ self.vectors_b.T
        iu, iv = np.nonzero(dots >= self._cut(self.pattern_a[start:stop], self.pattern_b))
        blocking_dots = dots[iu, iv]
        iu += start
        found = []
        sizes = self.grouped_a.counts[iu] * self.grouped_b.counts[iv]
        for part in _chunks(sizes, self.pairs_per_chunk):
            at_a, at_b, pair = _expand(iu[part], iv[part], self.grouped_a, self.grouped_b)
            found.append(self._score(at_a, at_b, blocking_dots[part][pair]))
        kept = _ranked(_concat(found), self.selection.rows_of, self.selection.top_k)
        return BlockResult(kept, int(sizes.sum()))

    def _score(self, at_a: np.ndarray, at_b: np.ndarray, blocking_dots: np.ndarray) -> Matches:
        """Decisions of the pairs at grouped positions (at_a[t], at_b[t]); the accepted ones."""
        codes_a, codes_b = self.grouped_a.codes, self.grouped_b.codes
        dots = np.empty((len(codes_a), len(at_a)), dtype=np.float32)
        for entry in range(len(codes_a)):
            if entry == self.blocking:
                dots[entry] = blocking_dots
            else:
                table = self.tables[entry]
                flat = codes_a[entry][at_a] * table.shape[1]
                flat += codes_b[entry][at_b]
                np.take(table.ravel(), flat, out=dots[entry])
        indicators = None
        if self.missing_a is not None and self.missing_b is not None:
            missing_a = np.stack([m[c[at_a]] for m, c in zip(self.missing_a, codes_a, strict=True)])
            missing_b = np.stack([m[c[at_b]] for m, c in zip(self.missing_b, codes_b, strict=True)])
            indicators = indicator_features(missing_a.T, missing_b.T).T
        model = self.selection.model
        if not model.linear_in_distances:
            # The envelope's whole decision, not just its per-entry bound, before the rbf
            # or the kernel.
            inside = _envelope_decision(dots, indicators, model) > 0
            at_a, at_b, dots = at_a[inside], at_b[inside], dots[:, inside]
            if indicators is not None:
                indicators = indicators[:, inside]
        scores = _decision(dots, indicators, model)
        keep = scores > 0
        rows_a = self.grouped_a.order[at_a[keep]]
        return Matches(rows_a, self.grouped_b.order[at_b[keep]], scores[keep])

    def combine(self, parts: list[BlockResult]) -> Outcome:
        """The blocks' pairs in all-pairs scoring's order: by row of `rows_of`, best first."""
        found = [part.matches for part in parts]
        matches = _ranked(_concat(found), self.selection.rows_of, self.selection.top_k)
        return Outcome(matches, sum(part.candidates for part in parts))

    def is_candidate(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """Whether each record pair passes the blocking join (for pair completeness)."""
        codes_a = self.grouped_a.codes[self.blocking][_positions(self.grouped_a, rows_a)]
        codes_b = self.grouped_b.codes[self.blocking][_positions(self.grouped_b, rows_b)]
        dots = np.einsum("ir,ir->i", self.vectors_a[codes_a], self.vectors_b[codes_b])
        return dots >= self.cuts[self.pattern_a[codes_a], self.pattern_b[codes_b]]

    def _cut(self, pattern_a: np.ndarray, pattern_b: np.ndarray) -> np.ndarray | np.float32:
        """The cut of every (A, B) pair of distinct vectors; a scalar for one pattern."""
        if self.cuts.size == 1:
            return self.cuts.reshape(-1)[0]
        return self.cuts[pattern_a[:, None], pattern_b[None, :]]


def _positions(grouped: _Grouped, rows: np.ndarray) -> np.ndarray:
    position = np.empty(len(grouped.order), dtype=np.int64)
    position[grouped.order] = np.arange(len(grouped.order))
    return position[rows]


def _decision(dots: np.ndarray, indicators: np.ndarray | None, model: Model) -> np.ndarray:
    """(M, P) cosines and (2M, P) indicators -> (P,) float32 decisions, computed as
    matching._scores computes them."""
    linear = parts_decision(model, dots, indicators)
    if linear is not None:
        return linear
    m = len(dots)
    features = np.zeros((dots.shape[1], 3 * m), dtype=np.float32)
    features[:, :m] = np.clip(1.0 - dots, 0.0, 2.0, dtype=np.float32).T
    if indicators is not None:
        features[:, m:] = indicators.T
    return model.decision(features).astype(np.float32)


def _envelope_decision(dots: np.ndarray, indicators: np.ndarray | None, model: Model) -> np.ndarray:
    bound = envelope(model)
    weights = full_weights(bound.weights, len(dots))
    slack = _SLACK * (1.0 + np.abs(weights).sum())  # float32 rounding never excludes a pair
    return linear_decision(weights, bound.bias + slack, dots, indicators, bound.caps)


def _estimated_pairs(
    entry_a: DistinctEntry,
    entry_b: DistinctEntry,
    cut: np.float32,
    join_missing: bool,
    rng: np.random.Generator,
) -> float:
    """Record pairs the join on this entry would expand to, from a sample of A rows, under
    the entry's global cut: an estimate, which only steers the choice of entry."""
    rows = rng.integers(0, len(entry_a.codes), size=min(_SAMPLE_ROWS, len(entry_a.codes)))
    hits = entry_a.vectors[entry_a.codes[rows]] @ entry_b.vectors.T >= cut
    if join_missing:
        hits |= entry_a.missing[entry_a.codes[rows], None]
        hits |= entry_b.missing[None, :]
    per_row = hits @ entry_b.counts.astype(np.float64)
    return float(per_row.mean()) * len(entry_a.codes)


def plan(
    side_a: list[DistinctEntry],
    side_b: list[DistinctEntry],
    selection: Selection,
    *,
    block_bytes: int = 64 << 20,
    max_table_bytes: int = MAX_TABLE_BYTES,
    dense: bool | None = None,
) -> CandidatePlan | dense_scores.DensePlan:
    """Pick the blocking entry (fewest expected record pairs) and build the dense tables of
    the others; or, for a linear model whose bounds leave so many pairs that one matrix
    product over all of them costs less, the dense plan (`dense` True or False forces the
    choice, to compare the two). Raises CandidatesUnavailable when no entry bounds the
    pairs."""
    if len(side_a) != len(side_b):
        raise ValueError(f"tensors differ in mapping entries: {len(side_a)} vs {len(side_b)}")
    if selection.threshold != 0.0:
        raise CandidatesUnavailable("the bounds keep pairs with a decision above 0 only")
    bound = bounds(selection.model, len(side_a))
    limits = bound.limits
    cuts = (1.0 - (limits * (1 + _SLACK) + _SLACK)).astype(np.float32)
    usable = [m for m in range(len(limits)) if np.isfinite(limits[m]) and cuts[m] > -1.0]
    if not usable:
        raise CandidatesUnavailable("no mapping entry bounds the accepted pairs")
    missing_a = [entry.missing for entry in side_a]
    missing_b = [entry.missing for entry in side_b]
    any_missing = any(m.any() for m in missing_a) or any(m.any() for m in missing_b)
    joins = bound.missing_accepted & any_missing
    # Fixed seed: the choice only affects speed, never which pairs come out.
    rng = np.random.default_rng(0)
    estimates = {
        m: _estimated_pairs(side_a[m], side_b[m], cuts[m], bool(joins[m]), rng) for m in usable
    }
    blocking = min(usable, key=lambda m: estimates[m])
    if dense is None and dense_scores.applies(selection.model):
        rows_a, rows_b = len(side_a[0].codes), len(side_b[0].codes)
        product = rows_a * rows_b * dense_scores.width([e.vectors.shape[1] for e in side_a])
        product *= len(selection.model.linear_parts() or ())  # one product per linear part
        join = len(side_a[blocking].vectors) * side_b[blocking].vectors.size
        dense = product < join + estimates[blocking] * PAIR_COST
    if dense:
        return dense_plan(side_a, side_b, selection)
    flags_a, of_row_a = _missing_patterns(side_a)
    flags_b, of_row_b = _missing_patterns(side_b)
    side_a, side_b = list(side_a), list(side_b)
    side_a[blocking], pattern_a = _split_by_pattern(side_a[blocking], of_row_a, len(flags_a))
    side_b[blocking], pattern_b = _split_by_pattern(side_b[blocking], of_row_b, len(flags_b))
    table_bytes = sum(
        4 * len(side_a[m].vectors) * len(side_b[m].vectors)
        for m in range(len(side_a))
        if m != blocking
    )
    if table_bytes > max_table_bytes:
        raise CandidatesUnavailable(
            f"distinct-value tables need {table_bytes / 2**30:.1f} GiB "
            f"(limit {max_table_bytes / 2**30:.1f} GiB)"
        )
    tables = {
        m: side_a[m].vectors @ side_b[m].vectors.T for m in range(len(side_a)) if m != blocking
    }
    u_a, u_b = len(side_a[blocking].vectors), len(side_b[blocking].vectors)
    rows = max(1, block_bytes // (4 * max(1, u_b)))
    return CandidatePlan(
        selection=selection,
        blocking=blocking,
        cuts=bound.pattern_cuts(blocking, flags_a, flags_b),
        pattern_a=pattern_a,
        pattern_b=pattern_b,
        vectors_a=side_a[blocking].vectors,
        vectors_b=side_b[blocking].vectors,
        grouped_a=_Grouped.of(side_a, blocking),
        grouped_b=_Grouped.of(side_b, blocking),
        tables=tables,
        blocks=[(s, min(s + rows, u_a)) for s in range(0, u_a, rows)],
        missing_a=[entry.missing for entry in side_a] if any_missing else None,
        missing_b=[entry.missing for entry in side_b] if any_missing else None,
    )


def dense_plan(
    side_a: list[DistinctEntry], side_b: list[DistinctEntry], selection: Selection
) -> dense_scores.DensePlan:
    """Every pair scored by one product (dense_scores), from the entries' distinct vectors."""

    def records(side: list[DistinctEntry]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return [e.vectors[e.codes] for e in side], [e.missing[e.codes] for e in side]

    return dense_scores.plan(records(side_a), records(side_b), selection)


# The most bytes of the peer's unit vectors one pass of accepted_pairs holds: a larger peer
# is matched a slice of rows at a time, so MATCH's memory does not grow with its row count.
PEER_SLICE_BYTES = 128 << 20
# No slice smaller than this many rows: each slice repeats the plan's work on own rows.
MIN_SLICE_ROWS = 4096


def peer_slice_rows(tensor_b: TensorRows, slice_bytes: int = PEER_SLICE_BYTES) -> int:
    """Rows of the peer matched in one pass: its float32 unit vectors within `slice_bytes`."""
    _, entries, width = tensor_b.shape
    return max(MIN_SLICE_ROWS, slice_bytes // max(1, 4 * entries * width))


def accepted_pairs(
    tensor_a: TensorRows,
    tensor_b: TensorRows,
    selection: Selection,
    *,
    run: Callable[[Plan, Progress | None], Outcome] = run_here,
    progress: Progress | None = None,
    standardise: Standardise | None = None,
    slice_rows: int | None = None,
) -> Outcome:
    """What score_pairs keeps for two (n, M, R) uint8 tensors, scoring candidates only when a
    bound allows, and every pair otherwise (by one matrix product for a linear model without
    caps). `run` executes the plan's blocks (here or on a cluster).

    With top_k per row of A (as MATCH keeps them), B is matched `slice_rows` rows at a time
    (default peer_slice_rows) and the slices' pairs ranked together: each slice keeps every
    row's best top_k of its own, so the union holds every row's best top_k of all, ties
    broken alike (to the lower B row)."""
    n_b = tensor_b.shape[0]
    rows = slice_rows or peer_slice_rows(tensor_b)
    if selection.rows_of != "a" or n_b <= rows:
        return _accepted_pass(tensor_a, tensor_b, selection, run, progress, standardise)
    side_a = distinct_entries(tensor_a, standardise=standardise)
    parts: list[Matches] = []
    scored: list[int | None] = []
    for start in range(0, n_b, rows):
        stop = min(n_b, start + rows)
        part = _accepted_pass(
            tensor_a,
            _Slice(tensor_b, start, stop),
            selection,
            run,
            _within(progress, start, stop, n_b),
            standardise,
            side_a,
        )
        found = part.matches
        parts.append(Matches(found.rows_a, found.rows_b + start, found.scores))
        scored.append(part.candidates)
    ranked = _ranked(_concat(parts), "a", selection.top_k)
    if all(count is None for count in scored):
        return Outcome(ranked, None)
    n_a = tensor_a.shape[0]
    sizes = [min(n_b, start + rows) - start for start in range(0, n_b, rows)]
    counts = [n_a * size if c is None else c for c, size in zip(scored, sizes, strict=True)]
    return Outcome(ranked, sum(counts))


class _Slice:
    """Rows [start, stop) of a tensor, read on demand as the tensor itself is."""

    def __init__(self, tensor: TensorRows, start: int, stop: int) -> None:
        self._tensor, self._start, self._stop = tensor, start, stop
        self.shape = (stop - start, *tensor.shape[1:])

    def __getitem__(self, rows: slice) -> np.ndarray:
        begin, end, _ = rows.indices(self._stop - self._start)
        return np.asarray(self._tensor[self._start + begin : self._start + end])


def _within(progress: Progress | None, start: int, stop: int, total: int) -> Progress | None:
    """A slice's progress as a share of the whole peer's rows."""
    if progress is None:
        return None
    return lambda done, of: progress(start + round((stop - start) * done / max(1, of)), total)


def _accepted_pass(
    tensor_a: TensorRows,
    tensor_b: TensorRows,
    selection: Selection,
    run: Callable[[Plan, Progress | None], Outcome],
    progress: Progress | None,
    standardise: Standardise | None,
    side_a: list[DistinctEntry] | None = None,
) -> Outcome:
    """accepted_pairs on all of B at once; `side_a`: A's distinct entries, if made already."""
    if side_a is None:
        side_a = distinct_entries(tensor_a, standardise=standardise)
    side_b = distinct_entries(tensor_b, standardise=standardise)
    if tensor_a.shape[0] and tensor_b.shape[0]:
        work: Plan | None
        try:
            work = plan(side_a, side_b, selection)
        except CandidatesUnavailable:
            applies = dense_scores.applies(selection.model)
            work = dense_plan(side_a, side_b, selection) if applies else None
        if work is not None:
            del side_b  # the plan keeps what it needs; free the other entries' vectors
            return run(work, progress)
    unit_a = unit_vectors(tensor_a[0 : tensor_a.shape[0]], standardise)
    unit_b = unit_vectors(tensor_b[0 : tensor_b.shape[0]], standardise)
    found = score_pairs(unit_a, unit_b, [selection], progress=progress)[0]
    return Outcome(found, None)
