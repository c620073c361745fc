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
(docs/sealed.md). Only for pairs in conflict (`layout.conflicted`): elsewhere the factor of
every threshold but 0 is zero, so those slots decrypt to the flooding noise alone and the
party learns only accept or reject, all the one-to-one step needs there.

Parameters (`CkksSetting`): N = 8192 (4,096 slots) and a 180-bit modulus chain, under the
218 bits the Homomorphic Encryption Standard (2018) allows N = 8192 for 128-bit security;
SEAL refuses chains beyond that bound. Two plaintext products (depth 2): the vectors, then
the factors. What the flooding buys is measured, not proved here: the noise's deviation is
2^flood_bits, a few bits above the computation's own error for the largest factors
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import tenseal as ts

from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.parameters import CkksSetting

__all__ = ["CkksSetting", "accepted", "buckets", "encrypt", "evaluate", "public_context"]
__all__ += ["encrypted_batches", "evaluated_batch", "secret_context"]


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


def encrypt(
    context: ts.Context,
    x: np.ndarray,
    c: np.ndarray,
    layout: Layout,
    alternative: Alternative | None = None,
) -> list[list[bytes]]:
    """Per batch, one ciphertext per coordinate of x and one for c (then, with a movers'
    alternative, one per column of its own): slot s holds the value of the own row the
    layout puts there."""
    return list(encrypted_batches(context, x, c, layout, alternative))


def encrypted_batches(
    context: ts.Context,
    x: np.ndarray,
    c: np.ndarray,
    layout: Layout,
    alternative: Alternative | None = None,
) -> Iterator[list[bytes]]:
    """`encrypt` one batch at a time, for a stream that need not hold them all."""
    columns = np.concatenate([x, c[:, None]], axis=1)
    if alternative is not None:
        columns = np.concatenate([columns, alternative.columns()], axis=1)
    for batch in range(layout.batches):
        rows = layout.rows[batch * layout.slots : (batch + 1) * layout.slots]
        values = columns[rows]
        yield [
            bytes(ts.ckks_vector(context, values[:, d].tolist()).serialize())
            for d in range(values.shape[1])
        ]


def evaluate(
    public: bytes,
    received: Sequence[Sequence[bytes]],
    y: np.ndarray,
    layout: Layout,
    setting: CkksSetting,
    rng: np.random.Generator,
    ratios: np.ndarray | None = None,
) -> list[list[bytes]]:
    """The evaluator's side: per batch, round and threshold t_k,
    Enc(r_ijk (c_i + <x_i, y_j> - t_k) + noise), each with its own random factor (then, with
    a movers' alternative, its score at 0 likewise)."""
    context = ts.context_from(public)
    return [
        evaluated_batch(context, batch, ciphertexts, y, layout, setting, rng, ratios)
        for batch, ciphertexts in enumerate(received)
    ]


def plaintext_columns(y: np.ndarray, ratios: np.ndarray | None) -> list[np.ndarray]:
    """(rows, ciphertexts) plaintexts the evaluator multiplies the received ciphertexts by,
    per form: the first form's (y, then 1 for its constant, 0 for the alternative's columns)
    and, with `ratios`, the alternative's (each entry's vector scaled by its ratio, 0 for the
    first form's indicators and constant, then its own indicators and 1)."""
    n = len(y)
    first = np.concatenate([y, np.ones((n, 1))], axis=1)
    if ratios is None:
        return [first]
    entries = len(ratios)
    blocks = y.reshape(n, entries, -1)
    scaled = blocks.copy()
    scaled[:, :, :-1] *= ratios[None, :, None]
    scaled[:, :, -1] = 0.0
    missing = blocks[:, :, -1]
    extra = entries + 1
    first = np.concatenate([first, np.zeros((n, extra))], axis=1)
    second = np.concatenate(
        [scaled.reshape(n, -1), np.zeros((n, 1)), missing, np.ones((n, 1))], axis=1
    )
    return [first, second]


def evaluated_batch(
    context: ts.Context,
    batch: int,
    ciphertexts: Sequence[bytes],
    y: np.ndarray,
    layout: Layout,
    setting: CkksSetting,
    rng: np.random.Generator,
    ratios: np.ndarray | None = None,
) -> list[bytes]:
    """`evaluate` for one batch: its rounds x thresholds ciphertexts (and the alternative's
    one per round after them), in that order."""
    forms = plaintext_columns(y, ratios)
    if len(ciphertexts) != forms[0].shape[1]:
        agreed = forms[0].shape[1]
        raise ValueError(
            f"batch {batch}: {len(ciphertexts)} ciphertexts where {agreed} were agreed"
        )
    vectors = [ts.ckks_vector_from(context, blob) for blob in ciphertexts]
    span = slice(batch * layout.slots, (batch + 1) * layout.slots)
    results = []
    for peers, ranked in zip(layout.peers[:, span], layout.ranked[:, span], strict=True):
        present = peers >= 0
        at = np.where(present, peers, 0)
        first, *alternative = (_score(vectors, columns[at]) for columns in forms)
        for k, threshold in enumerate(setting.thresholds):
            # Above 0, a bucket only where the pair is in conflict: elsewhere a factor of 0
            # leaves the flooding noise alone in the slot.
            told = present if k == 0 else ranked
            results.append(_blinded(context, first - threshold, told, setting, rng))
        for score in alternative:
            results.append(_blinded(context, score, present, setting, rng))
    return results


def _score(vectors: Sequence[ts.CKKSVector], plain: np.ndarray) -> ts.CKKSVector:
    """sum_d Enc(v_d) * plain[:, d] over the columns that are not all 0."""
    used = [d for d in range(plain.shape[1]) if np.any(plain[:, d])]
    score = vectors[used[0]] * plain[:, used[0]].tolist()
    for d in used[1:]:
        score += vectors[d] * plain[:, d].tolist()
    return score


def _blinded(
    context: ts.Context,
    score: ts.CKKSVector,
    told: np.ndarray,
    setting: CkksSetting,
    rng: np.random.Generator,
) -> bytes:
    """Enc(r (score) + noise), r log-uniform where `told`, 0 elsewhere: serialized."""
    low, high = setting.factor_bits
    factors = np.where(told, 2.0 ** rng.uniform(low, high, len(told)), 0.0)
    blinded = score * factors.tolist()
    blinded += ts.ckks_vector(context, rng.normal(0.0, 2.0**setting.flood_bits, len(told)).tolist())
    return bytes(blinded.serialize())


def buckets(
    context: ts.Context,
    returned: Sequence[Sequence[bytes]],
    layout: Layout,
    pairs: int,
    setting: CkksSetting,
    alternative: bool = False,
) -> np.ndarray:
    """(pairs,) how many of the thresholds each candidate pair's score passes, read from the
    signs of its blinded differences: 0 is rejected, and higher buckets rank the accepted.
    A pair in no conflict is told only its sign: its bucket is 0 or 1. With a movers'
    alternative, a pair only it accepts is in bucket 1."""
    count = np.zeros(pairs, dtype=np.int64)
    thresholds = len(setting.thresholds)
    per_round = thresholds + int(alternative)
    for batch, results in enumerate(returned):
        span = slice(batch * layout.slots, (batch + 1) * layout.slots)
        for position, blob in enumerate(results):
            values = np.asarray(ts.ckks_vector_from(context, blob).decrypt())
            round_, k = divmod(position, per_round)
            index = layout.pair_of[round_, span]
            used = index >= 0 if k in (0, thresholds) else layout.ranked[round_, span]
            passed = values[: len(index)][used] > 0
            if k < thresholds:
                count[index[used]] += passed
            else:
                chosen = index[used][passed]
                count[chosen] = np.maximum(count[chosen], 1)
    return count


def accepted(
    context: ts.Context,
    returned: Sequence[Sequence[bytes]],
    layout: Layout,
    pairs: int,
    setting: CkksSetting,
    alternative: bool = False,
) -> np.ndarray:
    """(pairs,) booleans: the scoring party's decision on each candidate pair."""
    return buckets(context, returned, layout, pairs, setting, alternative) > 0
