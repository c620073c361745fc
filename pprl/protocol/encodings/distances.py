"""The paper's encoding: each value's edit distances to the reference set's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.combined import with_combined
from pprl.protocol.encodings.base import Columns, Encoding, Runner
from pprl.protocol.linkage import candidates, matching
from pprl.protocol.method_settings import PAPER_ENCODING, MethodParams
from pprl.protocol.model.classifier import Model
from pprl.protocol.own_training import fit, training_sample
from pprl.protocol.privacy import noise
from pprl.protocol.privacy.audit import AuditReport
from pprl.protocol.progress import Progress
from pprl.protocol.release_attacks import Attack, audit_distances
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.release import released_width
from pprl.protocol.vectors.smashing import smash


class Distances(Encoding):
    """Each value's edit distances to the reference set's values (the paper's smashing),
    released as distances or projected coordinates, with the agreed noise."""

    name = PAPER_ENCODING
    cuts = True
    # One edit of one value moves each distance by at most this much, in this unit.
    unit: ClassVar[str] = "edits"

    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        """Every distance setting applies; method_params checks each."""

    def change_per_edit(self, method: MethodParams) -> float:
        return 1.0

    def wire_shape(
        self, mapping: Sequence[tuple[str, str]], method: MethodParams, reference_rows: int
    ) -> tuple[int, int]:
        return len(mapping), released_width(
            method.release, reference_rows, method.projected_components
        )

    def smash(
        self,
        agreement: AgreementView,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        return smash(
            with_combined(attributes, [attribute for attribute, _ in agreement.mapping]),
            agreement.reference.columns,
            agreement.entries(keyed=key is not None),
            agreement.method.clamp,
            progress=progress,
            rng=rng,
            key=key,
        )

    def audit(self, agreement: AgreementView, attack: Attack) -> AuditReport:
        return audit_distances(agreement, attack)

    def train(
        self, agreement: AgreementView, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        return fit(agreement, training_sample(agreement, attributes, rng), rng)

    def match(
        self,
        agreement: AgreementView,
        own: candidates.TensorRows,
        peer: candidates.TensorRows,
        model: Model,
        run: Runner,
        progress: Progress | None,
        threshold: float = 0.0,
    ) -> matching.Matched:
        """Algorithm 3 on candidates: the pairs scoring all pairs would keep (best `top_k`
        per own row), those above the party's `threshold` (>= 0: the candidates' bounds hold
        above 0, and a row's best top_k above a higher cut are its best top_k cut), then the
        agreed one-to-one assignment."""
        selection = matching.Selection(model, agreement.method.top_k)
        outcome = candidates.accepted_pairs(
            own, peer, selection, run=run, progress=progress, standardise=agreement.standardise
        )
        kept = matching.above(outcome.matches, threshold)
        assigned = matching.one_to_one(kept, agreement.method.assignment)
        return matching.Matched(assigned, outcome.candidates)

    def match_words(self, where: str) -> str:
        return f"grouping distinct vectors; blocks run {where}"

    def noise_words(self, agreement: AgreementView) -> str:
        """sigma, its units, tau and epsilon, over the coordinates one attribute spans."""
        coordinates, change, unit = agreement.sensitivity
        return noise.describe(
            agreement.method.noise_sigma, agreement.sigma0, coordinates, unit=unit, change=change
        )
