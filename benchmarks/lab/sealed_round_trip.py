"""Encrypted scoring with both parties in one process, every object passed as the bytes the
wire carries: what the benchmarks time and count, and what the tests check."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
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
    received = [[loaded_ciphertext(context, data, seeded=True) for data in batch] for batch in sent]
    ratios = None if alternative is None else alternative.ratios
    evaluated = scoring.evaluate(
        context, held, received, y, placed, keys.setting, rng, ratios, live
    )
    back = [[dumped_ciphertext(item, context) for item in batch] for batch in evaluated]
    seconds["evaluate"] = time.perf_counter() - began
    returned = [
        [loaded_ciphertext(keys.context, data, seeded=False) for data in batch] for batch in back
    ]
    return RoundTrip(sent, public, conjugation, back, returned, seconds)


def scoring_arguments(description: str, size: int, pairs: int) -> argparse.ArgumentParser:
    """The command line of a benchmark on `random_scoring`'s problem, with its defaults."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", type=int, default=size, help="rows a side")
    parser.add_argument("--pairs", type=int, default=pairs, help="candidate pairs drawn")
    parser.add_argument("--width", type=int, default=64, help="coordinates a row")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    return parser


def random_scoring(
    size: int, pairs: int, width: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the scoring benchmarks score: the scoring party's x and c and the evaluator's y,
    `size` rows a side of `width` unit-scale coordinates, and `pairs` candidate pairs drawn
    at random (repeats dropped)."""
    x = rng.normal(size=(size, width)) / np.sqrt(width)
    y = rng.normal(size=(size, width)) / np.sqrt(width)
    c = rng.normal(size=size) * 0.3
    return x, y, c, np.unique(rng.integers(0, size, size=(pairs, 2)), axis=0)
