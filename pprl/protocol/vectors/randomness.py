"""Where a party's random draws come from.

In a real run every draw (the secret row order, the noise, the training sample, the gate's
sample) comes from the operating system's secure source: noise a peer could regenerate from a
known seed would protect nothing, and a shuffle it could replay would undo the secret order.
A development seed makes a run replayable instead, so a benchmark or a test can reproduce a
daemon's linkage exactly in one process. Each purpose gets its own stream, so a phase redone
after a restart draws what it drew the first time, whatever ran before it.
"""

from __future__ import annotations

import secrets
import zlib

import numpy as np

from pprl.protocol.errors import SettingError
from pprl.protocol.vectors.keyed_noise import NoiseKey

# The purposes a party draws for, one stream each.
SHUFFLE = "shuffle"
RELEASE = "release"
GATE = "gate"
TRAINING = "training"
EXPECTATION = "expectation"
# Sealed linkage: the evaluator's random factors and flooding noise on the peer's scores.
SEALED_SCORES = "sealed scores"
# The hidden join's secret orders: of the key entries, of the rows' keys as sent, of each
# entry's rows in its slots.
SEALED_JOIN = "sealed join"
# The keys' graph's checks of the evaluator: which rows, and their buckets.
SEALED_CHECKS = "sealed checks"


def secret_generator() -> np.random.Generator:
    """A generator seeded with 256 bits from the operating system's secure source."""
    return np.random.default_rng(secrets.randbits(256))


class Randomness:
    """One party's random streams: secret ones, or replayable ones from a development seed."""

    def __init__(
        self, seed: int | None = None, party: str = "", noise_key: NoiseKey | None = None
    ) -> None:
        if seed is not None and seed < 0:
            raise SettingError(f"a seed must be >= 0, got {seed}")
        self.seed = seed
        self.party = party
        self._noise_key = noise_key

    @property
    def noise_key(self) -> NoiseKey | None:
        """The key release noise is derived from: for a replayable run one the seed gives (so
        a daemon's release can be reproduced in one process), else the party's own; None draws
        fresh noise each run (pprl.protocol.vectors.keyed_noise)."""
        if self.seed is not None:
            return NoiseKey.for_development(self.seed, self.party)
        return self._noise_key

    @property
    def replayable(self) -> bool:
        return self.seed is not None

    def generator(self, purpose: str) -> np.random.Generator:
        if self.seed is None:
            return secret_generator()
        words = [self.party, purpose]
        return np.random.default_rng([self.seed, *(zlib.crc32(w.encode()) for w in words)])
