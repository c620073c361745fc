"""The peer's dictionary attack on a Bloom-filter release, with the key in hand.

In a two-party run the peer holds the key (both must build their filters alike), so it can
encode every name of a public list exactly as the party did and compare. A filter equal to a
name's is that name unless two names share a filter (exact lookup); otherwise the name of
highest Dice similarity is the guess (nearest neighbour). The figures are the reference
release's (audit.AuditReport): the share of values recovered per attribute, of records whose
every attacked value is recovered, and of records with at least one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pprl.protocol.data.combined import (
    derived_values,
    is_combined,
    is_derived,
    is_initial,
    revealed,
)
from pprl.protocol.data.kinds import DEFAULT_KIND, KINDS
from pprl.protocol.linkage.bloom_linkage import BloomAgreement
from pprl.protocol.privacy.audit import AttributeAudit, AuditReport, EntryAudit
from pprl.protocol.vectors.bloom import BloomKey, BloomParams, FilterEncoder, unpack

_BLOCK = 256


def _nearest(filters: np.ndarray, dictionary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the dictionary filter of highest Dice similarity to each filter, and whether
    it is the only one that high (a tie is no answer)."""
    released, names = unpack(filters[:, None, :]), unpack(dictionary[:, None, :])
    a, b = released.bits[:, 0, :], names.bits[:, 0, :]
    count_a, count_b = released.counts[:, 0], names.counts[:, 0]
    best = np.empty(len(a), dtype=np.int64)
    alone = np.empty(len(a), dtype=bool)
    for start in range(0, len(a), _BLOCK):
        stop = start + _BLOCK
        dice = 2 * (a[start:stop] @ b.T) / (count_a[start:stop, None] + count_b[None, :])
        best[start:stop] = dice.argmax(axis=1)
        top = dice.max(axis=1, keepdims=True)
        alone[start:stop] = (dice >= top - 1e-6).sum(axis=1) == 1
    return best, alone


def attack_attribute(
    key: BloomKey,
    params: BloomParams,
    attribute: str,
    kind: str,
    filters: np.ndarray,
    truth: Sequence[str],
    names: Sequence[str],
) -> EntryAudit:
    """The attack on one attribute's filters, over the records that hold a value."""
    listed = sorted(set(names))
    dictionary = FilterEncoder(key, params, attribute, kind).encode(listed)
    by_filter: dict[bytes, list[int]] = {}
    for index, row in enumerate(dictionary):
        by_filter.setdefault(row.tobytes(), []).append(index)
    held = [t for t, value in enumerate(truth) if value]
    exact = np.zeros(len(held), dtype=bool)
    candidates = np.zeros(len(held), dtype=np.int64)
    for i, t in enumerate(held):
        found = by_filter.get(filters[t].tobytes(), [])
        candidates[i] = len(found)
        exact[i] = len(found) == 1 and listed[found[0]] == truth[t]
    nearest = exact.copy()
    rest = np.flatnonzero(~exact & (candidates == 0))
    if len(rest):
        rows = np.array(held)[rest]
        guesses, alone = _nearest(filters[rows], dictionary)
        for i, row, guess, unique in zip(
            rest.tolist(), rows.tolist(), guesses.tolist(), alone.tolist(), strict=True
        ):
            nearest[i] = unique and listed[guess] == truth[row]
    return EntryAudit(exact, nearest, candidates)


def audit_filters(
    agreement: BloomAgreement,
    filters: np.ndarray,
    truth: Mapping[str, Sequence[str]],
    names: Sequence[str],
) -> AuditReport:
    """The attack on released (n, attributes, bits / 8) filters of records holding `truth`,
    on every attribute of kind name and every surname's first part (the dictionary holds
    names), by a peer holding the agreement's key."""
    key, params, kinds = agreement.key, agreement.params, agreement.kinds
    n = len(filters)
    recovered_all = np.ones(n, dtype=bool)
    exact_all = np.ones(n, dtype=bool)
    exposed = np.zeros(n, dtype=bool)
    audits = []
    listed = set(names)
    for m, attribute in enumerate(agreement.attributes):
        kind = kinds.get(attribute, DEFAULT_KIND)
        if is_combined(attribute) or is_initial(attribute) or not KINDS[kind].names_people:
            continue
        # A derived entry (a surname's first part) is attacked for what it holds; it is not
        # one of the record's names, so it exposes a record but is not needed to re-identify it.
        own = not is_derived(attribute)
        values = derived_values(attribute, truth[revealed(attribute)])
        present = np.array([bool(v) for v in values])
        result = attack_attribute(key, params, attribute, kind, filters[:, m, :], values, names)
        full_exact, full_recovered = np.ones(n, dtype=bool), np.ones(n, dtype=bool)
        full_exact[present], full_recovered[present] = result.exact, result.nearest
        if own:
            exact_all &= full_exact
            recovered_all &= full_recovered
        exposed |= present & full_recovered
        held = [v for v in values if v]
        share = sum(v in listed for v in held) / max(1, len(held))
        audits.append(AttributeAudit(attribute, len(held), share, result))
    if not audits:
        return AuditReport(n, [], 0.0, 0.0, 0.0)
    return AuditReport(
        n,
        audits,
        float(exact_all.mean()),
        float(recovered_all.mean()),
        float(exposed.mean()),
        attack="bloom-dictionary",
    )
