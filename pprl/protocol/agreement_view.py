"""What the modules below the agreement read of it: the encodings, own training and the
attacks on a release are each handed the agreement (pprl.protocol.agreement.Agreement), which
holds an encoding in turn. They name it by this protocol, so that each module imports only
what lies below it; the agreement provides every member."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from pprl.protocol.data.distances import Metric
from pprl.protocol.data.reference import MappingEntry, ReferenceSet
from pprl.protocol.linkage.bloom_linkage import BloomAgreement
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.features import Standardise
from pprl.protocol.progress import Progress
from pprl.protocol.vectors.bloom import BloomKey
from pprl.protocol.vectors.keyed_noise import NoiseKey
from pprl.protocol.vectors.release import Release
from pprl.protocol.vectors.smashing import Entry

Columns = Mapping[str, Sequence[str]]


class AgreementView(Protocol):
    """The agreement's members that the encodings, own training and the attacks read (each
    documented on Agreement)."""

    @property
    def mapping(self) -> tuple[MappingEntry, ...]: ...

    @property
    def method(self) -> MethodParams: ...

    @property
    def reference(self) -> ReferenceSet: ...

    @property
    def kinds(self) -> dict[str, str]: ...

    @property
    def scales(self) -> dict[str, float]: ...

    @property
    def bloom_key(self) -> BloomKey | None: ...

    @property
    def metric(self) -> Metric | None: ...

    @property
    def release(self) -> Release: ...

    @property
    def sigma0(self) -> float: ...

    @property
    def standardise(self) -> Standardise | None: ...

    @property
    def sensitivity(self) -> tuple[int, float, str]: ...

    def entries(self, keyed: bool = False) -> tuple[Entry, ...]: ...

    def smash(
        self,
        attributes: Columns,
        rng: np.random.Generator | None,
        progress: Progress | None = None,
        key: NoiseKey | None = None,
    ) -> np.ndarray: ...

    def bloom_agreement(self) -> BloomAgreement: ...
