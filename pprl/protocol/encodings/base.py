"""What every encoding provides: the agreement's checks, the wire's shape, smash, the gate's
attack, train, match and the words it prints (see pprl.protocol.encodings)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from pprl.protocol.agreement_view import AgreementView
from pprl.protocol.data.distances import Metric
from pprl.protocol.linkage import candidates, matching, plans
from pprl.protocol.method_settings import ENCODING_SETTINGS, EncodingSettings, MethodParams
from pprl.protocol.model.classifier import Model
from pprl.protocol.privacy.audit import AuditReport
from pprl.protocol.progress import Progress
from pprl.protocol.release_attacks import Attack
from pprl.protocol.vectors.keyed_noise import NoiseKey

Columns = Mapping[str, Sequence[str]]
Runner = Callable[[plans.Plan, Progress | None], plans.Outcome]


class Encoding(ABC):
    """One way of encoding records for the peer (see the module's docstring)."""

    # Its name in ENCODING_SETTINGS, which says what the settings tell of it: `settings`,
    # `keyed` and `sealed` below.
    name: ClassVar[str]
    # Whether its release takes noise, which the gate then chooses.
    takes_noise: ClassVar[bool] = True
    # [method] keys that make no sense for it: refused rather than ignored.
    refused_keys: ClassVar[tuple[str, ...]] = ()
    # Method settings it needs at one value (method_params refuses any other).
    fixed: ClassVar[Mapping[str, Any]] = {}
    # Whether MATCH can keep only pairs scoring above a party's own threshold ([matching]
    # threshold) before its one-to-one step.
    cuts: ClassVar[bool] = False
    # Whether the cut applies to the matches MATCH kept, at REVEAL, in match probability (0
    # to 1): a coordinator's new cut then needs no new MATCH.
    cuts_at_reveal: ClassVar[bool] = False
    # The classifiers (pprl.protocol.model.classifier.TRAINERS) whose decision it can
    # evaluate; None: any.
    trainers: ClassVar[tuple[str, ...] | None] = None

    @property
    def declared(self) -> EncodingSettings:
        """What the settings tell of it (method_settings.ENCODING_SETTINGS)."""
        return ENCODING_SETTINGS[self.name]

    @property
    def settings(self) -> tuple[str, ...]:
        """Method settings only it reads: in the agreement's description only when it is
        agreed."""
        return self.declared.settings

    @property
    def keyed(self) -> bool:
        """Whether it needs the key both parties hold ([privacy] bloom_key)."""
        return self.declared.keyed

    @property
    def sealed(self) -> bool:
        """Whether the peer never receives the vectors: candidates and scores are computed
        under blinding and encryption with the peer (pprl.protocol.sealed), not on a sent
        tensor."""
        return self.declared.sealed

    @abstractmethod
    def check(self, noise_sigma: float, soft_top_k: int, settings: Mapping[str, Any]) -> None:
        """Refuse method settings this encoding cannot honour (a ValueError that says why)."""

    def metric(self, agreement: AgreementView) -> Metric | None:
        """The distance that replaces the kinds' own; None for the kinds' own."""
        return None

    @abstractmethod
    def wire_shape(
        self, mapping: Sequence[tuple[str, str]], method: MethodParams, reference_rows: int
    ) -> tuple[int, int]:
        """Values per record and bytes per value on the wire."""

    @abstractmethod
    def smash(
        self,
        agreement: AgreementView,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None,
        key: NoiseKey | None,
    ) -> np.ndarray:
        """The records encoded as agreed: the tensor the peer receives."""

    @abstractmethod
    def audit(self, agreement: AgreementView, attack: Attack) -> AuditReport:
        """The peer's strongest attack on the attacked rows of a released tensor."""

    @abstractmethod
    def train(
        self, agreement: AgreementView, attributes: Columns, rng: np.random.Generator
    ) -> tuple[Model, int]:
        """A classifier from the party's own records only, and its pair count."""

    @abstractmethod
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
        """The one-to-one pairs the party's own classifier accepts, scoring above
        `threshold` (above 0 unless the encoding `cuts`)."""

    @abstractmethod
    def noise_words(self, agreement: AgreementView) -> str:
        """What the release is and how much noise it carries, for the operator."""

    @abstractmethod
    def match_words(self, where: str) -> str:
        """What MATCH says it is doing; `where` the candidate blocks run."""
