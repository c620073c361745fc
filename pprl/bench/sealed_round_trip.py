"""Encrypted scoring with both parties in one process, every object passed as the bytes the
wire carries: what the benchmarks time and count, and what the tests check."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pprl.files.sealed_bytes import dumped, dumped_ciphertext, evaluation_keys, loaded_ciphertext
from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.linear_form import Alternative


@dataclass
class RoundTrip:
    """The scoring party's ciphertexts, public key and conjugation key as sent, the
    evaluator's results as returned, the same read back by the scoring party, and the seconds
    of each step."""

    sent: list[list[bytes]]
    public: bytes
    conjugation: bytes
    back: list[list[bytes]]
    returned: list[list[Any]]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def bytes_sent(self) -> int:
        keys = len(self.public) + len(self.conjugation)
        return keys + sum(len(data) for batch in self.sent for data in batch)

    @property
    def bytes_returned(self) -> int:
        return sum(len(data) for batch in self.back for data in batch)


def round_trip(
    keys: scoring.SecretKeys,
    x: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    placed: Layout,
    rng: np.random.Generator,
    alternative: Alternative | None = None,
    live: np.ndarray | None = None,
) -> RoundTrip:
    """The scoring party's (x, c) scored on the evaluator's y over the layout's pairs, of
    their columns those `live` (linear_form.Peer.live; all when None)."""
    seconds = {}
    began = time.perf_counter()
    sent = [
        [dumped_ciphertext(item, keys.context) for item in batch]
        for batch in scoring.encrypted_batches(keys, x, c, placed, alternative, live)
    ]
    public, conjugation = dumped(keys.public), dumped(keys.conjugation)
    seconds["encrypt"] = time.perf_counter() - began
    began = time.perf_counter()
    context = scoring.seal_context(keys.setting)
    held = evaluation_keys(context, public, conjugation)
    received = [[loaded_ciphertext(context, data) for data in batch] for batch in sent]
    ratios = None if alternative is None else alternative.ratios
    evaluated = scoring.evaluate(
        context, held, received, y, placed, keys.setting, rng, ratios, live
    )
    back = [[dumped_ciphertext(item, context) for item in batch] for batch in evaluated]
    seconds["evaluate"] = time.perf_counter() - began
    returned = [[loaded_ciphertext(keys.context, data) for data in batch] for batch in back]
    return RoundTrip(sent, public, conjugation, back, returned, seconds)
