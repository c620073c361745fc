"""What a scorer of the hidden join learns of the evaluator's rows when it chooses which slots
to name, within the evaluator's bound on the slots it resolves over a run
(`hidden_join.NAMES_PER_ROW` a row the scorer declared; `resolve_for_peer`).

The scorer holds its own entries (its row and keys of each), the evaluator's count of rows
per entry, and one bucket per slot. Entries of the same key value (two of its rows with the
same names) hold the same evaluator rows, each entry in an order of the evaluator's own.
Resolving a slot tells the evaluator's row in it: that row holds the entry's key, and the
pair's bucket is the slot's. From these it also infers, without naming them:

- a value is complete once as many distinct rows are known to hold it as its count: then no
  other row holds it;
- in an entry of a complete value, the rows of the slots it did not name are the value's
  rows less those it named there; where those slots' buckets are all one bucket (a value
  held by one row, the last slot of an entry, or slots all rejected alike), each such pair's
  bucket is known.

Naming rules (`named`): `best`, the honest rule (`hidden_join.best_slots`: each row's
accepted slots in its best bucket, at most `per_row` a row); `highest`, each of its rows in
turn naming its next slot of highest bucket, accepted or not (a high bucket is a look-alike,
the most telling); `values`, the keys' graph first: for each distinct key value in order of
its count (a value held by one row pins a key to a row for one name), every slot of one of
its entries, the entry with the highest buckets, so that every row holding the value is
known; then, with what is left, the slots not yet known, highest bucket first; `lookalikes`,
the slots least likely to hold its own rows' partners first (below their row's best bucket,
then each row's best, the weakest first), since the evaluator's rows without a partner in
its file are the ones the linkage does not reveal anyway. On FEBRL4 names at the bound,
`lookalikes` re-identifies about as many as naming every slot, and `values` fewer than the
honest rule: its one-row values are mostly its partners (docs/research/sealed.md, "A
crafting scorer under the naming bound").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed import hidden_join

NAMING_RULES = ("best", "highest", "values", "lookalikes")


@dataclass(frozen=True)
class Slots:
    """The hidden join's slots, one per (entry, evaluator row holding its key)."""

    own_row: np.ndarray  # (S,) the scorer's row of the slot's entry
    entry: np.ndarray  # (S,) the entry
    value: np.ndarray  # (S,) the entry's key value: entries of one value hold the same rows
    bucket: np.ndarray  # (S,) the slot's bucket, which the scorer decrypts
    peer_row: np.ndarray  # (S,) the evaluator's row in it, known to the scorer once resolved

    def __len__(self) -> int:
        return len(self.entry)

    def value_counts(self) -> np.ndarray:
        """(values,) how many evaluator rows hold each value: its entries' count."""
        counts = np.zeros(int(self.value.max(initial=-1)) + 1, dtype=np.int64)
        np.maximum.at(counts, self.value, np.bincount(self.entry)[self.entry])
        return counts


@dataclass(frozen=True)
class Resolved:
    """What the scorer knows once the evaluator resolved its named slots."""

    known: np.ndarray  # (S,) the slot's evaluator row known: named, or inferred
    rows_of_value: list[set[int]]  # the evaluator rows known to hold each value
    complete: np.ndarray  # (values,) every row holding the value is known
    allowed: list[frozenset[int]]  # per slot, the buckets its entry's unknown slots show

    def values_of_rows(self) -> defaultdict[int, set[int]]:
        """Each evaluator row's values known to be held by it."""
        out: defaultdict[int, set[int]] = defaultdict(set)
        for value, rows in enumerate(self.rows_of_value):
            for row in rows:
                out[row].add(value)
        return out


def resolved(slots: Slots, named: np.ndarray) -> Resolved:
    """What naming `named` (bool per slot) tells: their rows, and what follows (module doc)."""
    counts = slots.value_counts()
    rows_of_value: list[set[int]] = [set() for _ in range(len(counts))]
    for value, row in zip(slots.value[named].tolist(), slots.peer_row[named].tolist(), strict=True):
        rows_of_value[value].add(row)
    complete = np.array([len(rows) for rows in rows_of_value], dtype=np.int64) == counts
    known = named.copy()
    of_entry: defaultdict[int, list[int]] = defaultdict(list)
    for s, e in enumerate(slots.entry.tolist()):
        of_entry[e].append(s)
    allowed: list[frozenset[int]] = [frozenset()] * len(slots)
    for members in of_entry.values():
        unknown = [s for s in members if not known[s]]
        if not unknown:
            continue
        buckets = frozenset(slots.bucket[unknown].tolist())
        if complete[slots.value[members[0]]] and len(buckets) == 1:
            known[unknown] = True
        for s in unknown:
            allowed[s] = buckets
    return Resolved(known, rows_of_value, complete, allowed)


def named(
    slots: Slots,
    rule: str,
    budget: int,
    per_row: np.ndarray,
    fallback: np.ndarray | None = None,
) -> np.ndarray:
    """(S,) the slots a scorer names under `rule` (module doc), at most `budget` in all;
    `per_row` (own rows,) the most a row names under `best`; `fallback` its fallback slots."""
    chosen = np.zeros(len(slots), dtype=bool)
    if not len(slots) or budget <= 0:
        return chosen
    counts = np.bincount(slots.entry)[slots.entry]
    if rule == "best":
        chosen = hidden_join.best_slots(slots.own_row, slots.bucket, per_row, 0, fallback)
        # The first `budget` in the slots' order, should the rows' own bounds pass it.
        chosen[np.flatnonzero(chosen)[budget:]] = False
        return chosen
    if rule == "highest":
        # Within each row its slots by bucket, highest first (the fewer rows an entry holds,
        # the likelier its slot's row pins the key); then the rows' first slots, their
        # seconds, and so on.
        order = np.lexsort((counts, -slots.bucket, slots.own_row))
        rows = slots.own_row[order]
        rank = np.arange(len(order)) - np.searchsorted(rows, rows, side="left")
        turn = order[np.lexsort((counts[order], -slots.bucket[order], rank))]
        chosen[turn[:budget]] = True
        return chosen
    if rule == "lookalikes":
        # Where the row's partner is least likely: below the row's best bucket first (the
        # partner takes the best), highest first; then each row's best, the weakest first (a
        # row whose best is low has no partner there), a slot of a larger entry first (a
        # one-row entry's best is the partner); the row's other copies of its best (its
        # partner again, in another entry) last.
        top = np.zeros(int(slots.own_row.max()) + 1, dtype=np.int64)
        np.maximum.at(top, slots.own_row, slots.bucket.astype(np.int64))
        is_top = slots.bucket == top[slots.own_row]
        by_row = np.lexsort((-counts, ~is_top, slots.own_row))
        rows = slots.own_row[by_row]
        copy = np.zeros(len(slots), dtype=np.int64)
        copy[by_row] = np.arange(len(by_row)) - np.searchsorted(rows, rows, side="left")
        copy[~is_top] = 0
        turn = np.lexsort(
            (-counts, np.where(is_top, slots.bucket, -slots.bucket), is_top, copy > 0)
        )
        chosen[turn[:budget]] = True
        return chosen
    if rule != "values":
        raise ValueError(f"naming rule {rule!r}: one of {', '.join(NAMING_RULES)}")
    value_counts = slots.value_counts()
    entry_score = np.bincount(slots.entry, weights=slots.bucket)
    # One entry a value, the one whose slots' buckets sum highest (the first of ties).
    present = np.unique(slots.entry)
    value_of_entry = np.zeros(len(entry_score), dtype=np.int64)
    value_of_entry[slots.entry] = slots.value
    by_value: dict[int, int] = {}
    for entry in present[np.argsort(-entry_score[present], kind="stable")].tolist():
        by_value.setdefault(int(value_of_entry[entry]), entry)
    best_bucket = np.zeros(len(value_counts), dtype=np.int64)
    np.maximum.at(best_bucket, slots.value, slots.bucket.astype(np.int64))
    values = sorted(by_value, key=lambda v: (value_counts[v], -best_bucket[v], v))
    left = budget
    members = np.argsort(slots.entry, kind="stable")
    starts = np.searchsorted(slots.entry[members], np.arange(int(slots.entry.max()) + 2))
    for value in values:
        cost = int(value_counts[value])
        if cost > left:
            break
        entry = by_value[value]
        chosen[members[starts[entry] : starts[entry + 1]]] = True
        left -= cost
    if left > 0:
        after = resolved(slots, chosen).known
        rest = np.flatnonzero(~after)
        rest = rest[np.lexsort((counts[rest], -slots.bucket[rest]))]
        chosen[rest[:left]] = True
    return chosen
