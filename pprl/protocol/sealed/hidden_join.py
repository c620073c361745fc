"""A join only the evaluator computes: the scoring party's keys travel as entries that carry
no row, so neither party can tie one key match to another of the same peer row
(docs/research/sealed.md, "A join neither party reads").

With the graph join (session.candidates) both parties hold every row's doubly blinded keys
and see which of the peer's rows share which keys with which of their own: a party combines a
peer row's key matches into a person, which is what the list-of-people attack measures. Here,
for one party's classifier (the scorer's), with the peer as the evaluator:

1. The scorer sends one entry per distinct key of each row (a grouped recipe's keys of a row
   as one entry, padded: recipes.entry_groups), blinded once with its entry scalar, in a
   secret random order and without its row (`entries`). The evaluator sends its
   rows' keys blinded once with its row scalar, one to a message in a secret order of its own
   (so that neither their rows nor a row's number of keys show); the scorer blinds them again
   with its entry scalar and returns them in order. The evaluator blinds the scorer's entries again
   with its row scalar. Only the evaluator holds both sides under the same two scalars, so
   only it joins them (`joined`); the scorer never sees a peer row's doubly blinded key.
2. The evaluator tells the scorer each entry's count of its rows (`Join.counts`): how many
   of the evaluator's records hold each of the scorer's key values. Both lay out that many
   slots per entry (`slot_pairs`), the entry's row's vector encrypted as with the graph join;
   the evaluator fills each slot with one of its rows, in a random order of its own
   (`evaluator_layout`).
3. The scorer decrypts one bucket per slot: per entry, how many of the evaluator's rows
   sharing that key its classifier accepts, never which. It names only its rows' best
   accepted slots (`best_slots`); the evaluator resolves each to its row (`Join.resolve`). A
   pair that shares two keys is scored once per key (`accepted_pairs` keeps its highest
   bucket).

Before it names any, the scorer checks the evaluator: a few of its entries were scored on a
constant of its choosing instead of a vector (`checks`), so their slots must decrypt to
buckets only it knows (`checked`). An evaluator returning anything but its computation, to
read the scorer's key in what the scorer names, fails them.

Each party uses two scalars, one for its entries and one for its rows, so the values of the
two directions cannot be matched with each other.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.recipes import entry_groups, fallback_key, grouped_key

# What begins a padding key: no recipe's key does (recipes.recipe_keys tags each "recipe").
PAD = "pad|"


# The most slots a scorer names a row of its own (`best_slots`), and so the most an evaluator
# resolves a row the scorer declared: what one to one needs. A row's best bucket mostly holds
# its partner, once in each entry they share; two let a row whose best bucket holds two
# records sharing every value (a register's duplicates) name both, so that both parties'
# one-to-one steps can agree on the same one (one a row lost such pairs). In plaintext, F1
# within -0.0006..+0.0020 of naming every best slot at one or two a row (FEBRL4 names, the
# namesakes). A scorer naming every slot would learn the keys' graph. Measured:
# docs/research/sealed.md, "At most K slots a row, and what a dummy slot shows".
NAMES_PER_ROW = 2

# Of a scorer's entries, the share made checks (`checks`), at least this many, but never
# more than the last share: on a few hundred entries 32 checks would take a fifth of them.
# A check entry costs its row only the pairs no other key of the row joins, and the more
# checks, the fewer slots an evaluator can replace unnoticed (benchmarks/sealed_check_power.py;
# docs/research/sealed.md, "Checks of the evaluator").
CHECK_SHARE = 0.01
CHECK_LEAST = 32
CHECK_MOST_SHARE = 0.02


@dataclass(frozen=True)
class Entries:
    """The scoring party's entries, in the order it sends them: entry e holds the keys
    `keys[e]` of row `rows[e]` (one key, or a grouped recipe's keys padded to the agreed
    size: recipes.entry_groups). Only the scorer holds `rows`."""

    rows: np.ndarray  # (E,) own row of each entry
    keys: list[tuple[str, ...]]  # (E,) each entry's keys, before blinding

    @property
    def fallback(self) -> np.ndarray:
        """(E,) whether each entry is a fallback recipe's key (recipes.fallback_key)."""
        return np.array([fallback_key(keys[0]) for keys in self.keys], dtype=bool)

    def __len__(self) -> int:
        return len(self.keys)


def entries(
    keys_by_row: Sequence[Sequence[str]], rng: np.random.Generator, group: int = 1
) -> Entries:
    """One entry per key of each row, a grouped recipe's keys of a row one entry padded to
    `group` keys with keys no row holds (recipes.group_size); shuffled: the order says
    nothing of the rows, and an entry's size nothing of its name."""
    rows, keys = [], []
    for row, row_keys in enumerate(keys_by_row):
        for found in entry_groups(row_keys):
            if grouped_key(found[0]):
                if len(found) > group:
                    raise ValueError(f"a grouped entry of {len(found)} keys, more than {group}")
                pads = [PAD + rng.bytes(16).hex() for _ in range(group - len(found))]
                found = (*found, *pads)
            rows.append(row)
            keys.append(found)
    order = rng.permutation(len(keys))
    return Entries(np.asarray(rows, dtype=np.int64)[order], [keys[i] for i in order.tolist()])


@dataclass(frozen=True)
class CheckDraws:
    """What the scorer draws for its checks when it makes its entries, before the evaluator's
    counts: a uniform number and a bucket for each entry. Which become checks waits for the
    counts (`checks`): an entry no row of the evaluator's holds has no slot to check, and an
    entry is taken with a chance that grows with its slots."""

    uniforms: np.ndarray  # (E,) in (0, 1]
    buckets: np.ndarray  # (E,) the bucket each entry's slots would decrypt to as a check


def check_count(units: int, share: float, most_share: float, least: int = CHECK_LEAST) -> int:
    """How many of `units` become checks: `share` of them, at least `least`, never more than
    `most_share` (a floor alone would take most of a small run). Both joins' rule."""
    return min(max(least, math.ceil(share * units)), math.ceil(most_share * units))


def check_draws(entries: int, buckets: int, rng: np.random.Generator) -> CheckDraws:
    return CheckDraws(1.0 - rng.random(entries), rng.integers(0, buckets, size=entries))


def weighted_sample(uniforms: np.ndarray, weights: np.ndarray, count: int) -> np.ndarray:
    """The indices of `count` items drawn one after another without replacement, each with a
    chance proportional to its weight among those left (Efraimidis and Spirakis: the largest
    u^(1/w)); items of weight 0 never."""
    with np.errstate(divide="ignore"):
        priority = np.where(weights > 0, np.log(uniforms) / np.maximum(weights, 1e-300), -np.inf)
    count = min(count, int(np.count_nonzero(weights > 0)))
    return np.argsort(-priority, kind="stable")[:count]


def checks(
    rows: np.ndarray,
    counts: np.ndarray,
    draws: CheckDraws,
    share: float = CHECK_SHARE,
    most_share: float = CHECK_MOST_SHARE,
) -> np.ndarray:
    """(E,) the bucket each check entry's slots must decrypt to, -1 for the others: `share` of
    the entries (at least CHECK_LEAST, at most `most_share`), drawn among the entries the
    evaluator's rows hold (`counts`) whose row has another entry they hold, each with a chance
    proportional to its slots, so that every slot an evaluator replaces risks a check alike
    and replacing the largest entries first buys it nothing. A check entry's key travelled as
    any other (it is one of the row's keys, so the evaluator cannot tell it apart), but its
    slots are scored on no vector: the scorer encrypts zeros and a constant in the middle of
    its drawn bucket (`check_forms`), so that every slot of it must decrypt to that bucket
    whatever the evaluator's rows (`checked`). The row loses the pairs only that key joins,
    and keeps a key the evaluator's rows hold."""
    made = np.full(len(rows), -1, dtype=np.int64)
    if not len(rows):
        return made
    held = counts > 0
    per_row = np.bincount(rows, weights=held, minlength=int(rows.max()) + 1)
    eligible = held & (per_row[rows] >= 2)
    count = check_count(len(rows), share, most_share)
    chosen = weighted_sample(draws.uniforms, np.where(eligible, counts, 0), count)
    made[chosen] = draws.buckets[chosen]
    return made


def check_scores(checks: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """(E,) the constant a check entry's slots are scored on: the middle of its bucket
    (bucket b passes the b lowest thresholds; below the lowest, and above the highest, by
    half the gap next to it); NaN for the other entries."""
    edges = np.asarray(thresholds, dtype=np.float64)
    gap = float(np.diff(edges).min()) if len(edges) > 1 else 1.0
    middles = np.concatenate(
        [[edges[0] - gap / 2], (edges[:-1] + edges[1:]) / 2, [edges[-1] + gap / 2]]
    )
    return np.where(checks >= 0, middles[np.maximum(checks, 0)], np.nan)


def check_forms(
    x: np.ndarray,
    c: np.ndarray,
    alternative: Alternative | None,
    rows: np.ndarray,
    scores: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, Alternative | None]:
    """Each entry's forms (the layout's rows are the entries): its row's, or for a check
    entry (`scores` not NaN) zeros and its score as the constant, in both forms."""
    check = ~np.isnan(scores)
    x, c = x[rows], c[rows]  # copies: the rows are taken by index
    x[check], c[check] = 0.0, scores[check]
    if alternative is not None:
        alternative = alternative.taken(rows)
        alternative.indicator[check] = 0.0
        alternative.constant[check] = scores[check]
    return x, c, alternative


def checked(slot_entries: np.ndarray, checks: np.ndarray, buckets: np.ndarray) -> np.ndarray:
    """The slots' buckets with the check slots' set to 0 (never named, never linked);
    ValueError when a check slot decrypted to another bucket than its entry's (`met`)."""
    held = met(checks[slot_entries], buckets, "slots")
    return np.where(held, 0, buckets)


def met(due: np.ndarray, buckets: np.ndarray, what: str) -> np.ndarray:
    """Where a check is due (`due` >= 0, the bucket it must decrypt to); ValueError when any
    decrypted to another, naming how many of how many `what` (the evaluator returned
    something other than its computation)."""
    held = due >= 0
    wrong = held & (buckets != due)
    if wrong.any():
        raise ValueError(
            f"{int(wrong.sum()):,} of the {int(held.sum()):,} {what} this party can check "
            "decrypt to another bucket than they must"
        )
    return held


@dataclass(frozen=True)
class Join:
    """The evaluator's join: the rows holding entry e's key are
    `rows[starts[e]:starts[e + 1]]`, in a random order of the evaluator's."""

    starts: np.ndarray  # (E + 1,) offsets into rows
    rows: np.ndarray  # the evaluator's rows, entry after entry

    def counts(self) -> np.ndarray:
        """Per entry, how many of the evaluator's rows hold its key: all the scorer is told."""
        return np.diff(self.starts)

    def resolve(self, entry: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """The evaluator's row in each named slot (slot `slot[t]` of entry `entry[t]`);
        ValueError for a slot the join does not hold."""
        entry, slot = np.asarray(entry, dtype=np.int64), np.asarray(slot, dtype=np.int64)
        counts = self.counts()
        bad = (entry < 0) | (entry >= len(counts)) | (slot < 0)
        bad[~bad] |= slot[~bad] >= counts[entry[~bad]]
        if bad.any():
            t = int(np.argmax(bad))
            raise ValueError(f"slot {int(slot[t])} of entry {int(entry[t])} holds no row")
        return self.rows[self.starts[entry] + slot]


def joined(
    peer_entries: Sequence[Sequence[bytes]],
    own_rows: Sequence[Sequence[bytes]],
    rng: np.random.Generator,
) -> Join:
    """The evaluator's join of the scorer's doubly blinded entries with its own rows' doubly
    blinded keys (both under the scorer's entry scalar and its own row scalar): an entry's
    rows are those holding any of its values, each once."""
    rows_of: defaultdict[bytes, list[int]] = defaultdict(list)
    for row, keys in enumerate(own_rows):
        for key in dict.fromkeys(keys):
            rows_of[key].append(row)

    def holding(values: Sequence[bytes]) -> list[int]:
        if len(values) == 1:
            return rows_of.get(values[0], [])
        return sorted({row for value in values for row in rows_of.get(value, [])})

    parts = [rng.permutation(holding(values)) for values in peer_entries]
    counts = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    rows = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    return Join(starts, rows)


def fixed(join: Join, slots: int, rows: int, rng: np.random.Generator) -> Join:
    """The join with every entry given exactly `slots` slots, so that the counts the scorer
    is told are one number and say nothing of who is in the evaluator's file: an entry's rows
    cut to its first `slots` (the join's order is a random one), and the slots left filled
    with dummies, rows of the evaluator's own drawn at random among those not holding the
    entry's key, scored like any pair of unrelated people (a reject). A pair sharing several
    keys keeps a slot in most of them, so the cut costs little; but the evaluator's own view
    of the entries tells it as much as the counts did (docs/research/sealed.md, "Slots per
    entry")."""
    counts = join.counts()
    entries = len(counts)
    out = rng.integers(0, max(rows, 1), size=(entries, slots), dtype=np.int64)
    kept = np.minimum(counts, slots)
    for entry in np.flatnonzero(counts).tolist():
        holders = join.rows[join.starts[entry] : join.starts[entry + 1]]
        out[entry, : kept[entry]] = holders[: kept[entry]]
        if kept[entry] < slots and len(holders) < rows:
            held = set(holders.tolist())
            for slot in range(int(kept[entry]), slots):
                while int(out[entry, slot]) in held:
                    out[entry, slot] = rng.integers(0, rows)
    starts = np.arange(entries + 1, dtype=np.int64) * slots
    return Join(starts, out.reshape(-1))


def slot_pairs(counts: np.ndarray) -> np.ndarray:
    """(slots, 2) (entry, slot number across all entries): the pairs both parties lay out
    from the counts alone (session.score_layout), one layout row per entry."""
    counts = np.asarray(counts, dtype=np.int64)
    entry = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return np.stack([entry, np.arange(len(entry), dtype=np.int64)], axis=1)


def every_slot_ranked(placed: Layout) -> Layout:
    """Every used slot returns its bucket: the evaluator cannot tell which slots share the
    scorer's row, and the scorer cannot tell which share a peer row, so neither knows where
    the one-to-one step will need an order (a pair's order is needed only once it is named)."""
    return dataclasses.replace(placed, ranked=placed.pair_of >= 0)


def evaluator_layout(placed: Layout, join: Join) -> Layout:
    """The evaluator's copy of the layout: each slot's number replaced by the row it fills
    the slot with."""
    peers = np.where(placed.peers >= 0, join.rows[np.maximum(placed.peers, 0)], -1)
    return dataclasses.replace(placed, peers=peers)


def accepted_pairs(
    own_rows: np.ndarray, peer_rows: np.ndarray, buckets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The accepted slots (bucket > 0) as unique (own row, peer row) pairs, sorted, each with
    its highest bucket: a pair that shares two keys was scored in two slots."""
    keep = buckets > 0
    pairs = np.stack([own_rows[keep], peer_rows[keep]], axis=1).astype(np.int64)
    if not len(pairs):
        return pairs.reshape(0, 2), np.zeros(0, dtype=buckets.dtype)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    best = np.zeros(len(unique), dtype=buckets.dtype)
    np.maximum.at(best, inverse.reshape(-1), buckets[keep])
    return unique, best


def best_slots(
    own_rows: np.ndarray,
    buckets: np.ndarray,
    most: np.ndarray,
    levels: int = 0,
    fallback: np.ndarray | None = None,
) -> np.ndarray:
    """(slots,) the slots the scorer names for resolution: accepted, and within `levels`
    buckets of the highest its own row reached. Naming every accepted slot would tell it the
    peer row behind each, and on names alone a classifier accepts most look-alikes before the
    one-to-one step: the peer's rows without a partner would be as exposed as by the graph
    join (docs/research/sealed.md). At most `most[row]` a row (its entries), the first in the slots'
    order (the evaluator's random order within an entry): the evaluator resolves no more
    slots than it was sent entries, and with loose keys a row's ties in its best bucket
    outnumber them (FEBRL4 names, one name's code a key: 11,152 named for 9,840 entries)."""
    if not len(buckets):
        return np.zeros(0, dtype=bool)
    if fallback is not None:
        # A row that a key of its own values found accepted names none of its fallback
        # slots: scored on fewer values, a fallback slot can outrank the row's partner.
        found = np.zeros(int(own_rows.max()) + 1, dtype=bool)
        found[own_rows[(buckets > 0) & ~fallback]] = True
        buckets = np.where(fallback & found[own_rows], 0, buckets)
    top = np.zeros(int(own_rows.max()) + 1, dtype=np.int64)
    np.maximum.at(top, own_rows, buckets.astype(np.int64))
    best = np.flatnonzero((buckets > 0) & (buckets >= top[own_rows] - levels))
    order = np.argsort(own_rows[best], kind="stable")
    rows = own_rows[best][order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    named = np.zeros(len(buckets), dtype=bool)
    named[best[order[rank < most[rows]]]] = True
    return named
