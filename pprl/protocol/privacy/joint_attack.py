"""An attacker who decodes a record's names together, through a combined entry.

A combined entry ("first+middle+last") releases the sorted words of several names: a
further noisy look at names the per-attribute attackers (audit) guess one at a time. A
careful peer uses it. For each name attribute that is a part of a combined entry it keeps
the attribute's SHORTLISTS likeliest dictionary names (frequency-weighted as the "prior"
attacker, with the prior that recovers most on that attribute), then scores every
combination of the parts' shortlists with the combined entry's released vector as well, and
takes the most probable combination. Under noise of one scale in every coordinate of an
entry (the projected release: pprl.protocol.vectors.release) the sum over the parts' and the
combined entry's coordinates of squared distances in units of each entry's noise, plus
-2 log prior per part, is minus twice the log posterior, so the smallest sum is the Bayes
choice among the combinations shortlisted (tests/test_joint_attack.py holds it to the
brute-force decision over every pair of a small dictionary). Name attributes in no combined
entry are guessed alone, as the prior attacker guesses them.

Measured beside the gate's other attackers (benchmarks/combined_entry_attack.py, which holds
an independent version of it): with first, last and first+last at sigma 1 on generated
census names it re-identified about half the records where the per-attribute attackers found
about a third. Frequency only: it does not add the counts attacker's Poisson term.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol.data.combined import entries_by_attribute, is_combined, parts
from pprl.protocol.privacy.audit import AuditReport, Dictionary, guessed_report, within
from pprl.protocol.vectors.release import ProjectedRelease
from pprl.protocol.vectors.smashing import Entry

ATTACK = "joint"  # its words are in audit.ATTACK_NAMES
# Candidates kept per part, by the number of parts decoded together (fewer for more parts),
# and the most combinations of them scored a record (best-first, each smashed against the
# combined reference column). At sigma 2 on generated names 12 a part missed a quarter of
# what the brute-force decision over every pair finds, 40 none (tests/test_joint_attack.py);
# scoring the 300 combinations of smallest parts' sum instead of all 1,600 lost at most
# 0.003 of the records re-identified at sigma 1-2 (measured on 300 and 120 generated
# records), 150 up to 0.017; 400 are scored.
SHORTLISTS = {2: 40, 3: 12}
_SMALLEST_SHORTLIST = 6
MAX_COMBINATIONS = 400
_BATCH = 64


@dataclass(frozen=True)
class Joined:
    """A combined entry of attacked names, as the attacker reads it: its released codes (n, W),
    its release, and its reference column's values."""

    name: str
    codes: np.ndarray
    release: ProjectedRelease
    column: Sequence[str]


def joinable(specs: Sequence[Entry], attacked: set[str]) -> list[int]:
    """Indices of the combined entries among `specs` whose parts are all attacked names and
    which are released projected, with every entry of those names: what attack_jointly
    decodes (a raw distance release would need every dictionary name's full distances)."""
    projected = {
        spec.attribute
        for spec in specs
        if isinstance(spec.release, ProjectedRelease) and spec.release.noise > 0
    }
    return [
        m
        for m, spec in enumerate(specs)
        if is_combined(spec.attribute)
        and spec.attribute in projected
        and all(part in attacked and part in projected for part in parts(spec.attribute))
    ]


def attack_jointly(
    codes: np.ndarray,
    truth: Mapping[str, Sequence[str]],
    specs: Sequence[Entry],
    combined: Sequence[Joined],
    dictionary: Dictionary,
    tolerance: int = 1,
) -> AuditReport:
    """Attack (n, M, W) released codes of the attacked name entries `specs` (every one
    projected) together with the `combined` entries' codes of the same records; `truth`
    holds each attacked attribute's true values. A value counts as recovered when the chosen
    combination's value for it lies within `tolerance` edits of the true one."""
    mapping = [(spec.attribute, spec.column) for spec in specs]
    grouped = entries_by_attribute(mapping)
    n = len(codes)
    decoded = sorted({part for joined in combined for part in parts(joined.name)})
    width = SHORTLISTS.get(len(decoded), _SMALLEST_SHORTLIST)
    shortlists: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # (n, K) names and scores
    priors: dict[str, str] = {}
    for attribute, entries in grouped.items():
        releases = [specs[m].release for m in entries]
        assert all(isinstance(r, ProjectedRelease) for r in releases), "projected entries"
        grids = [r for r in releases if isinstance(r, ProjectedRelease)]
        released = np.concatenate(
            [grid.decode(codes[:, m, :]) for grid, m in zip(grids, entries, strict=True)], axis=1
        ).astype(np.float64)
        vectors, squares = dictionary.projected_space([specs[m].column for m in entries], grids)
        # (|v|^2 - 2 x.v) / noise^2: the row's own |x|^2 is the same for every guess and
        # left out; in units of each entry's noise, so entries of several scales add up.
        base = (squares[None, :] - 2.0 * released @ vectors.T) / grids[0].noise ** 2
        values = truth[attribute]
        present = np.array([v != "" for v in values])
        keep = width if attribute in decoded else 1
        best: tuple[int, str, np.ndarray, np.ndarray] | None = None
        for prior in dictionary.priors:
            scores = base - 2.0 * dictionary.priors[prior][None, :]
            top = np.argpartition(scores, min(keep, scores.shape[1] - 1), axis=1)[:, :keep]
            top_scores = np.take_along_axis(scores, top, axis=1)
            order = np.argsort(top_scores, axis=1)
            top = np.take_along_axis(top, order, axis=1)
            top_scores = np.take_along_axis(top_scores, order, axis=1)
            found = sum(
                within(dictionary.names[int(top[i, 0])], values[i], tolerance)
                for i in np.flatnonzero(present).tolist()
            )
            if best is None or found > best[0]:
                best = (found, prior, top, top_scores)
        assert best is not None
        _, priors[attribute], top, top_scores = best
        shortlists[attribute] = (top, top_scores)
    guesses = {
        a: [dictionary.names[j] for j in top[:, 0].tolist()] for a, (top, _) in shortlists.items()
    }
    seen = [joined.release.decode(joined.codes).astype(np.float64) for joined in combined]
    searches = []
    for i in range(n):
        options = []
        for part in decoded:
            if truth[part][i] == "":  # released as missing: the attacker sees it is
                options.append([("", 0.0)])
                continue
            top, top_scores = shortlists[part]
            names = [dictionary.names[j] for j in top[i].tolist()]
            options.append(list(zip(names, top_scores[i].tolist(), strict=True)))
        searches.append(_Search(options))
    _run(searches, decoded, combined, seen, dictionary)
    for i, search in enumerate(searches):
        for k, part in enumerate(decoded):
            guesses[part][i] = search.chosen()[k]
    listed = set(dictionary.names)
    held = {attribute: listed for attribute in grouped}
    chosen = {attribute: guesses[attribute] for attribute in grouped}
    return guessed_report(ATTACK, truth, chosen, held, tolerance, priors=priors)


class _Search:
    """One row's best-first search over the combinations of its parts' guesses (each part's
    (name, score) options), by the parts' summed score: a combined entry's fit
    |c - w|^2 / noise^2 is never negative, so once the parts alone score above the best total
    found, no later combination can win. At most MAX_COMBINATIONS are scored."""

    def __init__(self, options: Sequence[Sequence[tuple[str, float]]]) -> None:
        self.combos = list(itertools.product(*options))
        self.sums = np.array([sum(score for _, score in combo) for combo in self.combos])
        self.order = np.argsort(self.sums, kind="stable")[:MAX_COMBINATIONS]
        self.best, self.winner, self.position = np.inf, int(self.order[0]), 0

    def next_batch(self) -> np.ndarray:
        """The next combinations to score, none once the search is settled."""
        batch = self.order[self.position : self.position + _BATCH]
        if not len(batch) or self.sums[batch[0]] > self.best:
            return batch[:0]
        self.position += len(batch)
        return batch

    def scored(self, batch: np.ndarray, totals: np.ndarray) -> None:
        here = int(np.argmin(totals))
        if totals[here] < self.best:
            self.best, self.winner = float(totals[here]), int(batch[here])

    def chosen(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.combos[self.winner])


def _run(
    searches: Sequence[_Search],
    decoded: Sequence[str],
    combined: Sequence[Joined],
    released: Sequence[np.ndarray],
    dictionary: Dictionary,
) -> None:
    """Every row's search, a batch of each open row at a time: one row's combinations are
    few, and the words of all rows are smashed together."""
    while True:
        batches = [(i, search.next_batch()) for i, search in enumerate(searches)]
        batches = [(i, batch) for i, batch in batches if len(batch)]
        if not batches:
            return
        totals = [searches[i].sums[batch].copy() for i, batch in batches]
        for joined, seen in zip(combined, released, strict=True):
            at = [decoded.index(part) for part in parts(joined.name)]
            texts = [[_words(searches[i].combos[c], at) for c in batch] for i, batch in batches]
            space = dictionary.word_coordinates(
                [t for row in texts for t in row if t], joined.column, joined.release
            )
            for k, (i, _) in enumerate(batches):
                if not any(texts[k]):
                    continue  # every part missing: the combined entry is missing too
                guessed = np.array([space[t] for t in texts[k]])
                fit = ((guessed - seen[i][None, :]) ** 2).sum(axis=1)
                totals[k] += fit / joined.release.noise**2
        for (i, batch), total in zip(batches, totals, strict=True):
            searches[i].scored(batch, total)


def _words(combo: Sequence[tuple[str, float]], at: Sequence[int]) -> str:
    """A combination's value of a combined entry: its parts' non-empty names, sorted."""
    return " ".join(sorted(combo[k][0] for k in at if combo[k][0]))
