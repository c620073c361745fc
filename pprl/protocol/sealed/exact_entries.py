"""The entries sealed scoring reads exactly instead of through random features.

An entry whose values are few and public is one a kernel model takes only a few values on:
an initial ("middle:initial") holds one of 26 letters, and a category (sex, state) one of
the values its reference column lists. With those values' own unit vectors as landmarks
both parties compute the kernel on it exactly in as many coordinates
(pprl.protocol.sealed.kernel_features, `Exact`), where random features approximate it in D.
Both smash the values from the agreement alone (the reference set and the mapping), so they
lay out the same coordinates without telling each other anything. A value outside them (an
accented initial, a state the reference does not list) still scores exactly against each
of them and near it against another such value.
"""

from __future__ import annotations

from string import ascii_uppercase

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.combined import base_names, is_initial, parts
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.sealed.kernel_features import Exact
from pprl.protocol.sealed.linear_form import Peer, peer_of

LETTERS = tuple(ascii_uppercase)
CATEGORY = "category"


def exact_values(agreement: AgreementView, entry: int) -> list[str] | None:
    """The values entry `entry` can hold, when they are few and public: an initial's
    letters, a category's values in its reference column; None for any other entry."""
    name, column = agreement.mapping[entry]
    if is_initial(name):
        return list(LETTERS)
    if agreement.kinds.get(name) == CATEGORY:
        return sorted({value for value in agreement.reference.columns[column] if value})
    return None


def exact_entries(agreement: AgreementView) -> tuple[Exact, ...]:
    """Each entry of the agreed mapping that `exact_values` names, with its values' unit
    vectors."""
    attributes = base_names(name for name, _ in agreement.mapping)
    out = []
    for m, (name, _) in enumerate(agreement.mapping):
        values = exact_values(agreement, m)
        if not values:
            continue
        columns = {attribute: [""] * len(values) for attribute in attributes}
        columns[parts(name)[0]] = values
        units = unit_vectors(agreement.smash(columns, None), agreement.standardise)
        out.append(Exact(m, units[:, m, :]))
    return tuple(out)


def evaluator_plaintext(agreement: AgreementView, model: Model, digest: str) -> Peer:
    """What the evaluator multiplies in for a scoring party's `model`, as the daemons derive
    it: the agreed random features (from `digest`), the exact entries by their values."""
    exact = exact_entries(agreement) if model.widths is not None else ()
    return peer_of(model, agreement.method.kernel_features, digest, exact)
