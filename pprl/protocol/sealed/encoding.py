"""Sealed linkage: nothing a peer can compare with a dictionary leaves the party. Each party
smashes its records as the reference method does (no noise: the vectors never leave it),
finds candidate pairs by blinded blocking keys and scores them under homomorphic encryption
(the rest of pprl.protocol.sealed; docs/research/sealed.md). Here: the encoding, registered as
"sealed" (pprl.protocol.encodings.registry): what the method agrees on and how a party
trains and, for its own estimate, links in plaintext."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.encodings.distances import Distances
from pprl.protocol.errors import SettingError
from pprl.protocol.model.features import RAW_JOINS
from pprl.protocol.privacy.audit import AuditReport
from pprl.protocol.release_attacks import Attack
from pprl.protocol.sealed.exact_entries import exact_entries
from pprl.protocol.sealed.kernel_features import usable
from pprl.protocol.sealed.recipes import BLANKS_AGREE, FALLBACK, UNORDERED, written_recipes
from pprl.protocol.sealed.session import check_settings


class Sealed(Distances):
    """The reference method's vectors, compared only under encryption."""

    name = "sealed"
    takes_noise = False
    # Its MATCH compares each pair's score with the agreed thresholds under encryption and
    # keeps each accepted pair's bucket: REVEAL cuts on the bucket's calibrated probability
    # (pprl.protocol.sealed.calibration), so a new cut needs no new comparison.
    cuts = True
    cuts_at_reveal = True
    # Each decision is a linear form evaluated under encryption (linear_form): no kernel.
    trainers = ("linear", "logistic")
    refused_keys = ("noise_sigma", "attack_success", "soft_top_k")
    # What the linear forms that sealed scoring evaluates need: the projected vectors and no
    # caps (pprl.protocol.sealed.linear_form; a movers' alternative is a second form). An
    # entry joining several attributes is read about as its raw cosine (RAW_JOINS,
    # release.raw_reading), which it links better by.
    fixed: ClassVar[Mapping[str, Any]] = {
        "feature": RAW_JOINS,
        "release": "projected",
        "saturation": 0.0,
    }

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        if noise_sigma:
            raise SettingError(
                'encoding "sealed" sends no vectors, so it takes no noise (noise_sigma must be 0)',
                setting="noise_sigma",
            )
        if soft_top_k:
            raise SettingError(
                'encoding "sealed" reveals no scores, so it cannot list soft links',
                setting="soft_top_k",
            )
        check_settings(settings)

    def audit(self, agreement: AgreementView, attack: Attack) -> AuditReport:
        raise SettingError(
            'encoding "sealed" releases no vectors for a gate to attack; what its blocking '
            "keys reveal is measured by benchmarks/sealed_bucket_attack.py "
            "(docs/research/sealed.md)"
        )

    def match_words(self, where: str) -> str:
        return "candidates from the blinded keys; scoring them under encryption with the peer"

    def noise_words(self, agreement: AgreementView) -> str:
        written = agreement.method.sealed_keys
        said = f"sealed linkage; blocking keys: {written.replace(',', ', ')}"
        meanings = [meaning for _, meaning in written_recipes(written)]
        marks = [
            f"{mark}: {words}"
            for mark, words, used in (
                (FALLBACK, "a fallback", any(m.fallback for m in meanings)),
                (UNORDERED, "parts in either order", any(m.unordered for m in meanings)),
                (BLANKS_AGREE, "blanks agree", any(m.blanks for m in meanings)),
            )
            if used
        ]
        if marks:
            said += f" ({'; '.join(marks)})"
        features = agreement.method.kernel_features
        if not features:
            return said + "; model: linear in the distances"
        said += f"; model: a kernel, {features} random features an entry"
        exact = usable(exact_entries(agreement), features)
        if exact:
            named = ", ".join(agreement.mapping[one.entry][0] for one in exact)
            said += f" ({named} exactly, by their values)"
        return said
