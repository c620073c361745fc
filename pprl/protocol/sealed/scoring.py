"""Encrypted scoring: a party's linear classifier evaluated on candidate pairs, neither party
seeing the other's vectors, with CKKS through TenSEAL (Microsoft SEAL underneath).

The score of the scoring party's classifier on pair (i, j) is linear in the peer's vector:
s_ij = c_i + <x_i, y_j>, with x_i and c_i the scoring party's (its weights folded into its own
vectors) and y_j the evaluator's. The scoring party encrypts x, coordinate by coordinate, and
c as one more coordinate, under its own key, in the layout both derive from the candidate
pairs (`layout`), and sends the ciphertexts with a public context (no secret key). The
evaluator multiplies in its plaintext vectors (and 1 for the constant coordinate), sums,
multiplies each pair's score by its own random positive factor r_ij (log-uniform), adds a
fresh encryption of Gaussian noise (flooding) and returns one ciphertext per batch, round and
threshold. The scoring party decrypts r_ij s_ij + e and keeps the sign; with further agreed
thresholds t_k it gets r_ijk (s_ij - t_k) + e for each, each with its own factor, and so the
bucket of the score among the thresholds, which the one-to-one step needs on names
(docs/sealed.md).

Parameters (`CkksSetting`): N = 8192 (4,096 slots) and a 200-bit modulus chain, under the
218 bits the Homomorphic Encryption Standard (2018) allows N = 8192 for 128-bit security;
SEAL refuses chains beyond that bound. Two plaintext products (depth 2): the vectors, then
the factors. What the flooding buys is measured, not proved here: the noise's deviation is
2^flood_bits, a few bits above the computation's own error for the largest factors
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tenseal as ts

from pprl.protocol.sealed.layout import Layout


@dataclass(frozen=True)
class CkksSetting:
    """The agreed encryption parameters and blinding of scores (all in the agreement)."""

    poly_modulus_degree: int = 8192
    coeff_mod_bit_sizes: tuple[int, ...] = (60, 40, 40, 60)
    scale_bits: int = 40
    # r_ij is drawn log-uniformly between these powers of two.
    factor_bits: tuple[int, int] = (10, 18)
    # The flooding noise's standard deviation, as a power of two.
    flood_bits: int = 4
    # The scores the scoring party compares each pair's with: 0 (accept or not) first, then
    # any higher ones whose bucket the one-to-one step orders by (docs/sealed.md).
    thresholds: tuple[float, ...] = (0.0,)

    def __post_init__(self) -> None:
        ordered = list(self.thresholds) == sorted(set(self.thresholds))
        if not self.thresholds or self.thresholds[0] != 0.0 or not ordered:
            raise ValueError(f"thresholds must rise from 0, got {self.thresholds}")

    @property
    def slots(self) -> int:
        return self.poly_modulus_degree // 2


def secret_context(setting: CkksSetting) -> ts.Context:
    """The scoring party's context: its secret key never leaves it."""
    context = ts.context(
        ts.SCHEME_TYPE.CKKS,
        poly_modulus_degree=setting.poly_modulus_degree,
        coeff_mod_bit_sizes=list(setting.coeff_mod_bit_sizes),
    )
    context.global_scale = 2.0**setting.scale_bits
    return context


def public_context(context: ts.Context) -> bytes:
    """What the evaluator receives to compute on the ciphertexts: no secret key."""
    public = context.copy()
    public.make_context_public()
    return bytes(public.serialize())


def encrypt(context: ts.Context, x: np.ndarray, c: np.ndarray, layout: Layout) -> list[list[bytes]]:
    """Per batch, one ciphertext per coordinate of x and one for c: slot s holds the value of
    the own row the layout puts there."""
    columns = np.concatenate([x, c[:, None]], axis=1)
    out = []
    for batch in range(layout.batches):
        rows = layout.rows[batch * layout.slots : (batch + 1) * layout.slots]
        values = columns[rows]
        out.append(
            [
                bytes(ts.ckks_vector(context, values[:, d].tolist()).serialize())
                for d in range(values.shape[1])
            ]
        )
    return out


def evaluate(
    public: bytes,
    received: Sequence[Sequence[bytes]],
    y: np.ndarray,
    layout: Layout,
    setting: CkksSetting,
    rng: np.random.Generator,
) -> list[list[bytes]]:
    """The evaluator's side: per batch, round and threshold t_k,
    Enc(r_ijk (c_i + <x_i, y_j> - t_k) + noise), each with its own random factor."""
    context = ts.context_from(public)
    low, high = setting.factor_bits
    columns = np.concatenate([y, np.ones((len(y), 1))], axis=1)
    out = []
    for batch, ciphertexts in enumerate(received):
        if len(ciphertexts) != columns.shape[1]:
            agreed = columns.shape[1]
            raise ValueError(
                f"batch {batch}: {len(ciphertexts)} ciphertexts where {agreed} were agreed"
            )
        vectors = [ts.ckks_vector_from(context, blob) for blob in ciphertexts]
        span = slice(batch * layout.slots, (batch + 1) * layout.slots)
        results = []
        for peers in layout.peers[:, span]:
            present = peers >= 0
            plain = columns[np.where(present, peers, 0)]
            score = vectors[0] * plain[:, 0].tolist()
            for d in range(1, len(vectors)):
                score += vectors[d] * plain[:, d].tolist()
            for threshold in setting.thresholds:
                factors = np.where(present, 2.0 ** rng.uniform(low, high, len(peers)), 0.0)
                blinded = (score - threshold) * factors.tolist()
                noise = rng.normal(0.0, 2.0**setting.flood_bits, len(peers))
                blinded += ts.ckks_vector(context, noise.tolist())
                results.append(bytes(blinded.serialize()))
        out.append(results)
    return out


def buckets(
    context: ts.Context,
    returned: Sequence[Sequence[bytes]],
    layout: Layout,
    pairs: int,
    setting: CkksSetting,
) -> np.ndarray:
    """(pairs,) how many of the thresholds each candidate pair's score passes, read from the
    signs of its blinded differences: 0 is rejected, and higher buckets rank the accepted."""
    count = np.zeros(pairs, dtype=np.int64)
    per_round = len(setting.thresholds)
    for batch, results in enumerate(returned):
        span = slice(batch * layout.slots, (batch + 1) * layout.slots)
        for position, blob in enumerate(results):
            values = np.asarray(ts.ckks_vector_from(context, blob).decrypt())
            index = layout.pair_of[position // per_round, span]
            used = index >= 0
            count[index[used]] += values[: len(index)][used] > 0
    return count


def accepted(
    context: ts.Context,
    returned: Sequence[Sequence[bytes]],
    layout: Layout,
    pairs: int,
    setting: CkksSetting,
) -> np.ndarray:
    """(pairs,) booleans: the scoring party's decision on each candidate pair."""
    return buckets(context, returned, layout, pairs, setting) > 0
