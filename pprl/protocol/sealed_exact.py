"""The entries sealed scoring reads exactly instead of through random features.

An initial entry ("middle:initial") holds one letter, so a kernel model's value on it is one
of 26 x 26: with the letters' own unit vectors as landmarks both parties compute it exactly
in 26 coordinates (pprl.protocol.sealed.kernel_features, `Exact`), where random features
approximate it in D. Both smash the letters from the agreement alone (the reference set and
the mapping), so they lay out the same coordinates without telling each other anything. A
value outside A-Z (an accented initial) still scores exactly against every letter and near
it against another such value.
"""

from __future__ import annotations

from string import ascii_uppercase

from pprl.protocol.agreement import Agreement
from pprl.protocol.data.combined import base_names, is_initial, parts
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.sealed.kernel_features import Exact
from pprl.protocol.sealed.linear_form import Peer, peer_of

LETTERS = tuple(ascii_uppercase)


def exact_entries(agreement: Agreement) -> tuple[Exact, ...]:
    """Each initial entry of the agreed mapping with the unit vectors of its 26 letters."""
    initials = [m for m, (name, _) in enumerate(agreement.mapping) if is_initial(name)]
    if not initials:
        return ()
    attributes = base_names(name for name, _ in agreement.mapping)
    out = []
    for m in initials:
        columns = {attribute: [""] * len(LETTERS) for attribute in attributes}
        columns[parts(agreement.mapping[m][0])[0]] = list(LETTERS)
        units = unit_vectors(agreement.smash(columns, None), agreement.standardise)
        out.append(Exact(m, units[:, m, :]))
    return tuple(out)


def evaluator_plaintext(agreement: Agreement, model: Model, digest: str) -> Peer:
    """What the evaluator multiplies in for a scoring party's `model`, as the daemons derive
    it: the agreed random features (from `digest`), the initial entries exactly."""
    exact = exact_entries(agreement) if model.widths is not None else ()
    return peer_of(model, agreement.method.kernel_features, digest, exact)
