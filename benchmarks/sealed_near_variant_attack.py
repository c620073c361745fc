"""A peer that crafts its records file of near-variants, under the hidden join: what it then
learns of who is in the other party's file beyond the agreed linkage.

Bob, the attacker, holds a list of people: everyone in both files and some people in
neither. For each listed person his honest file lacks he adds a near-variant to it, one
letter of one name replaced (`near_variant`: among the record's non-blank names one drawn
uniformly, a position in it drawn uniformly, its letter replaced by another of A-Z drawn
uniformly), and runs his unmodified daemon: his classifier trained on his crafted file as his
daemon trains it, both directions of the hidden join as the daemons run them
(pprl.protocol.sealed.hidden_join; `hidden_entries.resolved_matches`): entries, the
evaluator's join (exact counts, or `[method] sealed_slots = C`: `hidden_join.fixed`), every
slot's bucket, each row's best accepted slots named (at most NAMES_PER_ROW a row), one to one
by the agreed assignment, the agreed linkage their intersection. Buckets come from the scaled
scores in the clear (`--plaintext` of sealed_hidden_join.py: as CKKS gives them up to its
rare sign errors), keys are joined unblinded (blinding changes no join), and the scorer's
check entries (1-2% of its entries, never named) are left out.

The files, from the true pairs (the mirror of sealed_count_membership.py's `--bob-only` and
`--absent`, the roles swapped): `--alice-only` of them lose Bob's record (Alice's people
without a partner in his honest file, the people at risk), `--absent` lose both (in neither
file), the rest stay in both. Bob's list holds Alice's records of her partners and of the
people at risk (the strongest list: their exact values) and his own of the absent; he lacks
the people at risk and the absent, and adds a near-variant of each.

What Bob learns, by channel, each turned into evidence about the listed people he lacks
(his partners are known to him, with her rows that hold them: the most he could know):

1. **counts** (exact counts only; with a fixed count they are one number): of each of his
   entries, how many of her rows hold its key. Less his partners among them, that many of
   the listed people holding it are hers (a count unit).
2. **evaluator**: of each of Alice's entries, which of his own key values it holds (its
   signature; sealed_count_membership.Signatures); count units per signature likewise.
3. **scorer**: his own classifier's bucket in every slot of his entries. With exact counts,
   of each entry and bucket, how many of her rows holding the entry his classifier puts in
   that bucket against his row (count units: `accepted` the accepted buckets alone, `buckets`
   every bucket, which include the counts); with a fixed count, each entry's one slot, filled
   by one of her rows holding its key or, when none does, by a row drawn among those that do
   not (an occupant unit: one of the people who fit is in her file; and where no partner
   holds the entry, a bucket none of the listed holders gives says none of them is). And
   `resolution`: each slot he names resolves to her row number, so every slot that names one
   row is the same person (occupants grouped by row; a partner's row explains its slot).
4. **linked**: a member whose near-variant the agreed linkage links to her is output, not a
   leak: counted apart, and left out of the people at risk below.
5. **her choices** (not in the brief's list; with her exact classifier, the strongest case):
   which of his rows her named slots hold (he resolves them) and her one-to-one links that
   REVEAL tells him, each her row accepting his, tied by her row number to his resolutions.

Evidence scores a listed person (`Evidence.guess`): a count unit ("r of these m listed people
are in her file") gives each of them r / m, and 0 or 1 decides (sealed_count_membership's
`combined`); an occupant unit ("one of her rows is one of these people"; grouped by her row
number when told, a partner's row left out) gives each 1 / (people left), 1 when one is left.
Reported per channel and combined: the share of the people at risk placed in her file with
certainty (score 1), the share of the absent wrongly placed there (0 if the rules are sound),
the share of the absent placed outside it with certainty, and the AUC of the score between
the people at risk and the absent (those no evidence reaches at the prior). `--honest` runs
Bob's honest file alone (no near-variants) for comparison.

    python benchmarks/sealed_near_variant_attack.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml [--slots 1] --json out.json
"""

from __future__ import annotations

import argparse
import string
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sealed_count_membership import combined
from sklearn.metrics import roc_auc_score

from lab.in_process import (
    ScoringForm,
    SealedParties,
    add_table_arguments,
    noise_free_units,
    run_command,
    scoring_forms,
    sealed_inputs,
    sealed_parties,
)
from lab.result_file import write_result
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.records import RecordTable
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.sealed import hidden_join, linear_form, session
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.recipes import entry_groups, group_size, recipe_keys

PARTNER, MEMBER, ABSENT = 0, 1, 2
LETTERS = string.ascii_uppercase


# -- the files ------------------------------------------------------------------------------
def near_variant(values: Sequence[str], rng: np.random.Generator) -> list[str]:
    """The names with one letter of one replaced: among the non-blank names one drawn
    uniformly, a position in it, and another letter of A-Z (the names as they are when all
    are blank)."""
    out = list(values)
    filled = [i for i, value in enumerate(out) if value]
    if not filled:
        return out
    which = filled[int(rng.integers(len(filled)))]
    name = out[which]
    at = int(rng.integers(len(name)))
    others = [letter for letter in LETTERS if letter != name[at].upper()]
    out[which] = name[:at] + others[int(rng.integers(len(others)))] + name[at + 1 :]
    return out


@dataclass(frozen=True)
class Files:
    """Bob's list of people as Alice would hold them (her partners and the people at risk by
    her records, the absent by his), their kinds; her file (the partners and the people at
    risk, person i her table's row i) and his crafted one (his records of the partners, his
    row i person i's, then one near-variant of each listed person he lacks)."""

    people: dict[str, list[str]]
    kind: np.ndarray  # PARTNER, MEMBER, ABSENT per listed person
    alice: RecordTable
    bob: RecordTable
    variant_of: np.ndarray  # per row of his table: the listed person it varies, -1 if honest


def split_pairs(
    truth: Iterable[tuple[str, str]], alice_only: float, absent: float, rng: np.random.Generator
) -> dict[int, list[tuple[str, str]]]:
    """The true pairs by kind, one draw each in sorted order (as sealed_count_membership)."""
    pairs = sorted(truth)
    draw = rng.random(len(pairs))
    kinds = np.where(draw < alice_only, MEMBER, np.where(draw < alice_only + absent, ABSENT, 0))
    return {k: [p for p, d in zip(pairs, kinds, strict=True) if d == k] for k in range(3)}


def make_files(
    tables: Mapping[str, RecordTable],
    truth: Iterable[tuple[str, str]],
    args: argparse.Namespace,
    rng: np.random.Generator,
) -> Files:
    alice, bob = tables["alice"], tables["bob"]
    row_a = {record: row for row, record in enumerate(alice.ids)}
    row_b = {record: row for row, record in enumerate(bob.ids)}
    by_kind = split_pairs(truth, args.alice_only, args.absent, rng)
    # By kind: her records of her partners and of the people at risk, his of the absent.
    sources = [(alice, row_a, 0), (alice, row_a, 0), (bob, row_b, 1)]
    people: dict[str, list[str]] = {name: [] for name in alice.attributes}
    ids, kind = [], []
    for k, (table, rows, side) in enumerate(sources):
        for pair in by_kind[k]:
            ids.append(pair[side])
            kind.append(k)
            for name, values in table.attributes.items():
                people[name].append(values[rows[pair[side]]])
    kind_array = np.array(kind)
    held = int(np.count_nonzero(kind_array != ABSENT))
    honest = [row_b[b] for _, b in by_kind[PARTNER]]
    bob_columns = {name: [values[i] for i in honest] for name, values in bob.attributes.items()}
    bob_ids = [bob.ids[i] for i in honest]
    variant_of = [-1] * len(honest)
    if not args.honest:
        lacked = np.flatnonzero(kind_array != PARTNER).tolist()
        for person in lacked:
            changed = near_variant([people[name][person] for name in people], rng)
            for name, value in zip(people, changed, strict=True):
                bob_columns[name].append(value)
            bob_ids.append(f"variant-{person}")
        variant_of += lacked
    return Files(
        people,
        kind_array,
        RecordTable(alice.path, ids[:held], {n: v[:held] for n, v in people.items()}),
        RecordTable(bob.path, bob_ids, bob_columns),
        np.array(variant_of, dtype=np.int64),
    )


# -- the run --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Direction:
    """One classifier's pass of the hidden join: the scorer's entries, the evaluator's join,
    per slot (entry, scorer row, evaluator row, bucket), the slots named, and the scorer's
    pairs one to one as (scorer row, evaluator row)."""

    entries: hidden_join.Entries
    join: hidden_join.Join
    entry: np.ndarray
    own: np.ndarray
    peer: np.ndarray
    buckets: np.ndarray
    named: np.ndarray
    linked: set[tuple[int, int]]


def encoded(keys: Iterable[Iterable[str]]) -> list[list[bytes]]:
    return [[key.encode() for key in row] for row in keys]


def direction(
    scorer: str,
    evaluator: str,
    agreement: Agreement,
    parties: SealedParties,
    forms: Mapping[str, ScoringForm],
    rng: np.random.Generator,
) -> Direction:
    method = agreement.method
    keys = parties.keys
    entries = hidden_join.entries(keys[scorer], rng, group_size(method.sealed_keys))
    join = hidden_join.joined(encoded(entries.keys), encoded(keys[evaluator]), rng)
    if method.sealed_slots:
        join = hidden_join.fixed(join, method.sealed_slots, len(keys[evaluator]), rng)
    slots = hidden_join.slot_pairs(join.counts())
    own, peer = entries.rows[slots[:, 0]], join.rows[slots[:, 1]]
    y = linear_form.evaluator_part(parties.units[evaluator], forms[scorer].evaluator)
    thresholds = session.thresholds(method.sealed_thresholds)
    buckets = forms[scorer].buckets(y, own, peer, thresholds)
    most = np.minimum(np.bincount(entries.rows), hidden_join.NAMES_PER_ROW)
    fallback = entries.fallback[slots[:, 0]]
    named = hidden_join.best_slots(own, buckets, most, method.sealed_names_within, fallback)
    pairs, best = hidden_join.accepted_pairs(own[named], peer[named], buckets[named])
    found = session.one_to_one(
        pairs, best, scorer == "alice", agreement.digest(), method.assignment
    )
    linked = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
    return Direction(entries, join, slots[:, 0], own, peer, buckets, named, linked)


# -- what Bob can compute of his listed people ---------------------------------------------
@dataclass(frozen=True)
class Sight:
    """Bob's knowledge: per listed person their keys as Alice keys them, the rows that hold
    each key, his classifier's bucket for each of his rows against each person (`bob`, rows
    his released ones) and hers for each person against each of his rows (`alice`); her
    released row of each person she holds; his own key values."""

    keys: list[list[str]]
    holders: dict[str, np.ndarray]
    bob: np.ndarray  # (his rows, people)
    alice: np.ndarray  # (people, his rows)
    person_of_row: np.ndarray  # her released row -> person
    row_of_person: np.ndarray  # person -> her released row, -1 if not hers
    own_keys: frozenset[str]
    kind: np.ndarray

    def holding(self, keys: Iterable[str]) -> np.ndarray:
        """The people holding any of `keys` (an entry holds a row holding any of its keys)."""
        found = [self.holders[k] for k in keys if k in self.holders]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def signatures(self, person: int) -> set[frozenset[str]]:
        """The signatures of a person's entries were she to hold them (empty ones too)."""
        return {frozenset(group) & self.own_keys for group in entry_groups(self.keys[person])}


def bucket_matrix(x: np.ndarray, c: np.ndarray, y: np.ndarray, th: Sequence[float]) -> np.ndarray:
    """Every (form row, peer row) pair's bucket, as ScoringForm.buckets computes it."""
    out = np.zeros((len(x), len(y)), dtype=np.int8)
    for start in range(0, len(x), 512):
        scores = c[start : start + 512, None] + x[start : start + 512] @ y.T
        out[start : start + 512] = np.searchsorted(np.asarray(th), scores, side="left")
    return out


def people_form(
    agreement: Agreement, parties: SealedParties, name: str, units: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A party's scaled scorer form (x, c) on other records' units, scaled as its daemon
    scales its own (linear_form.scaled_forms on its file's records)."""
    model, own = parties.models[name], parties.units[name]
    evaluator = evaluator_plaintext(agreement, model, agreement.digest())
    x, c = linear_form.scorer_part(model, own, evaluator)
    own_y = linear_form.evaluator_part(own, evaluator)
    shift = linear_form.margin(linear_form.identity_score(x, c, own_y))
    scale = linear_form.score_scale(x, c + shift, own_y, own.shape[1])
    px, pc = linear_form.scorer_part(model, units, evaluator)
    return px * scale, (pc + shift) * scale


def sight(
    files: Files, agreement: Agreement, parties: SealedParties, forms: Mapping[str, ScoringForm]
) -> Sight:
    recipes = session.recipes(agreement.method.sealed_keys, list(files.people))
    keys = recipe_keys(files.people, recipes, True)
    units = noise_free_units(agreement, files.people)
    order = parties.released["alice"].order  # her released row -> her table row = person
    assert [keys[p] for p in order] == parties.keys["alice"], "keys not as Alice keys them"
    assert np.allclose(units[order], parties.units["alice"]), "vectors not as she holds them"
    holders: defaultdict[str, list[int]] = defaultdict(list)
    for person, row_keys in enumerate(keys):
        for key in dict.fromkeys(row_keys):
            holders[key].append(person)
    th = session.thresholds(agreement.method.sealed_thresholds)
    y_people = linear_form.evaluator_part(units, forms["bob"].evaluator)
    bob = bucket_matrix(forms["bob"].x, forms["bob"].c, y_people, th)
    px, pc = people_form(agreement, parties, "alice", units)
    y_bob = linear_form.evaluator_part(parties.units["bob"], forms["alice"].evaluator)
    alice = bucket_matrix(px, pc, y_bob, th)
    row_of_person = np.full(len(keys), -1, dtype=np.int64)
    row_of_person[order] = np.arange(len(order))
    own = frozenset(k for row in parties.keys["bob"] for k in row)
    return Sight(
        keys,
        {k: np.array(v, dtype=np.int64) for k, v in holders.items()},
        bob,
        alice,
        np.asarray(order, dtype=np.int64),
        row_of_person,
        own,
        files.kind,
    )


# -- evidence -------------------------------------------------------------------------------
@dataclass
class Evidence:
    """What Bob concludes: count units (listed people he lacks, how many of them are hers)
    and occupant units (her row number, -1 if not told; the people, any listed, it may be)."""

    counts: list[tuple[np.ndarray, int]] = field(default_factory=list)
    occupants: list[tuple[int, np.ndarray]] = field(default_factory=list)

    def __add__(self, other: Evidence) -> Evidence:
        return Evidence(self.counts + other.counts, self.occupants + other.occupants)

    def guess(self, kind: np.ndarray, partner_rows: set[int]) -> tuple[np.ndarray, np.ndarray]:
        """(score, seen) per listed person (partners' left at NaN): count shares combined as
        sealed_count_membership combines them (the prior without any), raised to the occupant
        shares 1 / (people left), which are floors; a count share of 0 decides."""
        count_shares: defaultdict[int, list[float]] = defaultdict(list)
        for people, members in self.counts:
            for person in people.tolist():
                count_shares[person].append(members / len(people))
        floor: defaultdict[int, float] = defaultdict(float)
        for left in self.occupant_sets(kind, partner_rows):
            for person in left:
                floor[person] = max(floor[person], 1.0 / len(left))
        listed = kind != PARTNER
        prior = float(np.mean(kind[listed] == MEMBER)) if listed.any() else 0.0
        scores = np.where(listed, prior, np.nan)
        seen = np.zeros(len(kind), dtype=bool)
        for person in set(count_shares) | set(floor):
            shares = count_shares.get(person)
            by_counts = combined(shares) if shares else None
            lowest = prior if by_counts is None else by_counts
            scores[person] = 0.0 if by_counts == 0.0 else max(lowest, floor.get(person, 0.0))
            seen[person] = True
        return scores, seen

    def occupant_sets(self, kind: np.ndarray, partner_rows: set[int]) -> list[set[int]]:
        """Per occupant the listed people left: units of one told row intersected, a
        partner's row or a unit a partner may explain dropped."""
        by_row: dict[int, set[int]] = {}
        loose = []
        for row, people in self.occupants:
            if row in partner_rows:
                continue
            outside = {int(p) for p in people if kind[p] != PARTNER}
            if row >= 0:
                by_row[row] = by_row[row] & outside if row in by_row else outside
            elif len(outside) == len(people):  # no partner may be the one
                loose.append(outside)
        return [left for left in [*by_row.values(), *loose] if left]


def count_unit(
    people: np.ndarray, kind: np.ndarray, told: int, what: str
) -> tuple[np.ndarray, int] | None:
    """The unit "so many of these are hers" over the listed people a count speaks of: the
    count `told` less his partners among them, which the list must explain (`what` names the
    count if it does not)."""
    outside = people[kind[people] != PARTNER]
    if not len(outside):
        return None
    partners = len(people) - len(outside)
    hers = int(np.count_nonzero(kind[outside] == MEMBER))
    assert told - partners == hers, f"{what} the list does not explain"
    return outside, hers


def counts_evidence(bob_side: Direction, seen: Sight) -> Evidence:
    """Channel 1: each distinct entry's count (told: the join's), less his partners."""
    evidence, done = Evidence(), set()
    told = bob_side.join.counts()
    for e, keys in enumerate(bob_side.entries.keys):
        if keys in done:
            continue
        done.add(keys)
        unit = count_unit(seen.holding(keys), seen.kind, int(told[e]), "a count")
        if unit is not None:
            evidence.counts.append(unit)
    return evidence


def evaluator_evidence(alice_side: Direction, seen: Sight) -> Evidence:
    """Channel 2: how many of her entries show each signature, less his partners'."""
    told: defaultdict[frozenset[str], int] = defaultdict(int)
    for keys in alice_side.entries.keys:
        told[frozenset(keys) & seen.own_keys] += 1
    showing: defaultdict[frozenset[str], list[int]] = defaultdict(list)
    for person in range(len(seen.keys)):
        for signature in seen.signatures(person):
            showing[signature].append(person)
    evidence = Evidence()
    for signature, people in showing.items():
        if not signature:
            continue
        holders = np.array(people, dtype=np.int64)
        unit = count_unit(holders, seen.kind, told[signature], "a signature")
        if unit is not None:
            evidence.counts.append(unit)
    return evidence


def slots_of(side: Direction) -> list[np.ndarray]:
    """Per entry, its slots' indices."""
    starts = side.join.starts
    return [np.arange(starts[e], starts[e + 1]) for e in range(len(starts) - 1)]


def scorer_evidence(bob_side: Direction, seen: Sight, accepted_only: bool) -> Evidence:
    """Channel 3 with exact counts: per entry and bucket, how many of her rows holding it
    (told: the slots in that bucket), less his partners; only accepted buckets if
    `accepted_only`."""
    evidence = Evidence()
    for e, slots in enumerate(slots_of(bob_side)):
        if not len(slots):
            continue
        row = int(bob_side.entries.rows[e])
        holders = seen.holding(bob_side.entries.keys[e])
        theirs = seen.bob[row, holders]
        observed = np.bincount(bob_side.buckets[slots], minlength=256)
        for b in np.unique(theirs).tolist():
            if accepted_only and b == 0:
                continue
            unit = count_unit(holders[theirs == b], seen.kind, int(observed[b]), "a bucket")
            if unit is not None:
                evidence.counts.append(unit)
    return evidence


def fixed_evidence(bob_side: Direction, seen: Sight) -> Evidence:
    """Channel 3 with a fixed count of one: each entry's one slot, filled by one of her rows
    holding its key or, when none does, by one of hers that does not. The people whose
    bucket is the slot's may fill it (a partner among them explains it); where no partner
    holds the key, a bucket none of the listed holders gives says none of them is hers."""
    evidence = Evidence()
    for e, slots in enumerate(slots_of(bob_side)):
        for slot in slots.tolist():
            row = int(bob_side.entries.rows[e])
            b = int(bob_side.buckets[slot])
            holders = seen.holding(bob_side.entries.keys[e])
            partner_holds = bool(np.any(seen.kind[holders] == PARTNER))
            fits = seen.bob[row] == b
            if partner_holds:
                mask = np.zeros(len(fits), dtype=bool)
                mask[holders] = True
                fits &= mask
            evidence.occupants.append((-1, np.flatnonzero(fits)))
            listed = holders[seen.kind[holders] != PARTNER]
            if not partner_holds and len(listed) and b not in set(seen.bob[row, listed].tolist()):
                evidence.counts.append((listed, 0))
    return evidence


def resolution_evidence(bob_side: Direction, seen: Sight, fixed: bool) -> Evidence:
    """Channel 3, naming: each slot he names is her row number told; the people who may
    fill it (as the slot's unit says) are that row."""
    evidence = Evidence()
    for slot in np.flatnonzero(bob_side.named).tolist():
        e, row = int(bob_side.entry[slot]), int(bob_side.own[slot])
        b = int(bob_side.buckets[slot])
        holders = seen.holding(bob_side.entries.keys[e])
        fits = seen.bob[row] == b
        holds = np.zeros(len(fits), dtype=bool)
        holds[holders] = True
        if not (fixed and not np.any(seen.kind[holders] == PARTNER)):
            fits &= holds
        evidence.occupants.append((int(bob_side.peer[slot]), np.flatnonzero(fits)))
    return evidence


def choices_evidence(alice_side: Direction, seen: Sight) -> Evidence:
    """Channel 5, with her exact classifier: each slot she names holds one of his rows, her
    entry's row accepting it (its signature he knows); each of her one-to-one links, her
    row number told, accepts his row and shows one of the signatures of the entries his row
    filled."""
    signature = [frozenset(keys) & seen.own_keys for keys in alice_side.entries.keys]
    sets: defaultdict[frozenset[str], list[int]] = defaultdict(list)
    for person in range(len(seen.keys)):
        for s in seen.signatures(person):
            sets[s].append(person)
    showing = {s: np.array(people, dtype=np.int64) for s, people in sets.items()}
    nobody = np.zeros(0, dtype=np.int64)
    filled: defaultdict[int, set[frozenset[str]]] = defaultdict(set)
    for slot, row in enumerate(alice_side.peer.tolist()):
        filled[row].add(signature[int(alice_side.entry[slot])])
    evidence = Evidence()
    for slot in np.flatnonzero(alice_side.named).tolist():
        row = int(alice_side.peer[slot])
        may = showing.get(signature[int(alice_side.entry[slot])], nobody)
        evidence.occupants.append((-1, may[seen.alice[may, row] > 0]))
    for her_row, row in alice_side.linked:
        people = np.unique(np.concatenate([nobody, *(showing.get(s, nobody) for s in filled[row])]))
        evidence.occupants.append((her_row, people[seen.alice[people, row] > 0]))
    return evidence


# -- the report -----------------------------------------------------------------------------
def share(flags: Sequence[bool] | np.ndarray) -> float:
    """The share of true flags; 0 of none."""
    return float(np.mean(flags)) if len(flags) else 0.0


def summary(
    scores: np.ndarray, seen: np.ndarray, kind: np.ndarray, at_risk: np.ndarray
) -> dict[str, float | None]:
    """Certain shares (of the people at risk, of all her people without a partner, of the
    absent) and the AUC between the people at risk and the absent (None with either
    empty)."""
    absent = kind == ABSENT
    truth = np.r_[np.ones(int(at_risk.sum())), np.zeros(int(absent.sum()))]
    both = np.r_[scores[at_risk], scores[absent]]
    return {
        "at_risk_in_file_certain": share(scores[at_risk] >= 1.0),
        "at_risk_outside_certain": share(scores[at_risk] <= 0.0),
        "alice_only_in_file_certain": share(scores[kind == MEMBER] >= 1.0),
        "absent_in_file_certain": share(scores[absent] >= 1.0),
        "absent_outside_certain": share(scores[absent] <= 0.0),
        # Any evidence at all, however weak (an occupant unit of thousands reaches them all).
        "at_risk_reached": share(seen[at_risk]),
        "absent_reached": share(seen[absent]),
        "auc": float(roc_auc_score(truth, both)) if 0 < truth.sum() < len(truth) else None,
    }


def channel_evidence(
    alice_side: Direction, bob_side: Direction, seen: Sight, fixed: bool
) -> dict[str, Evidence]:
    """Each channel's evidence, and their combinations."""
    out: dict[str, Evidence] = {}
    if not fixed:
        out["1 counts"] = counts_evidence(bob_side, seen)
    out["2 evaluator"] = evaluator_evidence(alice_side, seen)
    if fixed:
        out["3 scorer: buckets"] = fixed_evidence(bob_side, seen)
    else:
        out["3 scorer: accepted buckets"] = scorer_evidence(bob_side, seen, True)
        out["3 scorer: buckets (with the counts)"] = scorer_evidence(bob_side, seen, False)
    out["3 scorer: naming resolved"] = resolution_evidence(bob_side, seen, fixed)
    # Beyond the counts: with exact counts the accepted buckets, with a fixed count all.
    alone = "3 scorer: buckets" if fixed else "3 scorer: accepted buckets"
    out["3 scorer"] = out[alone] + out["3 scorer: naming resolved"]
    out["5 her choices"] = choices_evidence(alice_side, seen)
    together = out["2 evaluator"] + out["3 scorer: naming resolved"]
    if fixed:
        together += out["3 scorer: buckets"]
    else:
        together += out["1 counts"] + out["3 scorer: buckets (with the counts)"]
    out["1-3 combined"] = together
    out["all combined"] = together + out["5 her choices"]
    return out


@dataclass(frozen=True)
class Simulation:
    """One run of both daemons on the crafted files, and what Bob can compute."""

    files: Files
    truth: set[tuple[str, str]]
    recipes: str
    bob_order: np.ndarray  # his released row -> his table row
    alice_side: Direction
    bob_side: Direction
    agreed: set[tuple[int, int]]  # (her released row, his released row)
    seen: Sight


def simulate(args: argparse.Namespace) -> Simulation:
    inputs = sealed_inputs(args, args.recipes)
    rng = np.random.default_rng(args.seed)
    files = make_files(inputs.tables, inputs.truth, args, rng)
    changes: dict[str, Any] = {"sealed_join": "hidden"}
    if args.slots:
        changes["sealed_slots"] = args.slots
    agreement = inputs.daemon_agreement(**changes)
    tables = {"alice": files.alice, "bob": files.bob}
    parties = sealed_parties(agreement, tables, inputs.recipes, args.seed)
    forms = scoring_forms(agreement, parties)
    alice_side = direction("alice", "bob", agreement, parties, forms, rng)
    bob_side = direction("bob", "alice", agreement, parties, forms, rng)
    agreed = alice_side.linked & {(a, b) for b, a in bob_side.linked}
    return Simulation(
        files,
        set(inputs.truth),
        inputs.recipes,
        np.asarray(parties.released["bob"].order, dtype=np.int64),
        alice_side,
        bob_side,
        agreed,
        sight(files, agreement, parties, forms),
    )


def own_links(sim: Simulation) -> set[int]:
    """Channel 4: her people without a partner whom the agreed linkage links to their
    near-variant (output, not leak)."""
    row_of = np.empty(len(sim.bob_order), dtype=np.int64)
    row_of[sim.bob_order] = np.arange(len(sim.bob_order))
    variant = {int(p): int(row_of[t]) for t, p in enumerate(sim.files.variant_of) if p >= 0}
    return {
        int(p)
        for p in np.flatnonzero(sim.files.kind == MEMBER)
        if (int(sim.seen.row_of_person[p]), variant.get(int(p), -1)) in sim.agreed
    }


def honest_quality(sim: Simulation) -> tuple[float, int]:
    """F1 of the agreed pairs his honest rows hold, on the true pairs both files hold, and
    how many agreed pairs hold a near-variant."""
    files, order = sim.files, sim.bob_order
    honest = {(a, b) for a, b in sim.agreed if files.variant_of[order[b]] < 0}
    found = {
        (files.alice.ids[sim.seen.person_of_row[a]], files.bob.ids[order[b]]) for a, b in honest
    }
    held = set(files.bob.ids[: int(np.count_nonzero(files.variant_of < 0))])
    quality = linkage_quality(found, {(a, b) for a, b in sim.truth if b in held})
    return quality.f1, len(sim.agreed) - len(honest)


def run(args: argparse.Namespace) -> dict[str, Any]:
    sim = simulate(args)
    files, seen = sim.files, sim.seen
    kind = files.kind
    linked = own_links(sim)
    at_risk = kind == MEMBER
    at_risk[list(linked)] = False
    linked_rows = {a for a, _ in sim.agreed}
    f1, with_variants = honest_quality(sim)
    result: dict[str, Any] = {
        "command": run_command(args),
        "recipes": sim.recipes,
        "alice_rows": len(files.alice.ids),
        "bob_rows": len(files.bob.ids),
        "near_variants": int(np.count_nonzero(files.variant_of >= 0)),
        "alice_only": int(np.count_nonzero(kind == MEMBER)),
        "absent": int(np.count_nonzero(kind == ABSENT)),
        "honest_rows_f1": f1,
        "agreed_pairs": len(sim.agreed),
        "agreed_pairs_with_near_variants": with_variants,
        "slots_bob_scores": len(sim.bob_side.buckets),
        "slots_bob_names": int(sim.bob_side.named.sum()),
        "linked_to_own_near_variant": share(
            [int(p) in linked for p in np.flatnonzero(kind == MEMBER)]
        ),
        "at_risk": int(at_risk.sum()),
        "at_risk_linked_to_another_row": share(
            [int(seen.row_of_person[p]) in linked_rows for p in np.flatnonzero(at_risk)]
        ),
        "channels": {},
    }
    partner_rows = {int(seen.row_of_person[p]) for p in np.flatnonzero(kind == PARTNER)}
    evidence = channel_evidence(sim.alice_side, sim.bob_side, seen, bool(args.slots))
    guesses = {name: found.guess(kind, partner_rows) for name, found in evidence.items()}
    for name, (scores, reached) in guesses.items():
        result["channels"][name] = summary(scores, reached, kind, at_risk)
    # Of all her people without a partner: linked to a near-variant, or placed with certainty.
    placed = guesses["all combined"][0] >= 1.0
    placed[list(linked)] = True
    result["alice_only_linked_or_certain"] = share(placed[kind == MEMBER])
    return result


def printed(result: Mapping[str, Any]) -> None:
    print(
        f"{result['alice_only']:,} of Alice's people without a partner, "
        f"{result['linked_to_own_near_variant']:.1%} linked to their near-variant; "
        f"{result['at_risk']:,} at risk against {result['absent']:,} in neither file; "
        f"F1 {result['honest_rows_f1']:.4f} (his honest rows)"
    )
    print(
        f"linked to a near-variant or placed with certainty by every channel: "
        f"{result['alice_only_linked_or_certain']:.1%} of Alice's people without a partner"
    )
    for name, row in result["channels"].items():
        auc = "-" if row["auc"] is None else f"{row['auc']:.3f}"
        print(
            f"{name:<38} certain {row['at_risk_in_file_certain']:6.1%}  AUC {auc}  absent "
            f"placed {row['absent_in_file_certain']:.1%}, outside "
            f"{row['absent_outside_certain']:.1%}  reached {row['at_risk_reached']:.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument("--alice-only", type=float, default=0.3)
    parser.add_argument("--absent", type=float, default=0.15)
    parser.add_argument(
        "--slots", type=int, default=0, help="[method] sealed_slots (0: exact counts)"
    )
    parser.add_argument(
        "--honest", action="store_true", help="Bob's honest file alone, no near-variants"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args)
    printed(result)
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
