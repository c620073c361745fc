"""A scoring party that crafts the first parts of its conjugation key (sent seeded, as the
evaluator requires: the second parts SEAL's from seeds) and sends one seeded ciphertext for
every column of a batch, against the evaluator of sealed scoring: what it reads of the
evaluator's plaintext in what it decrypts.

The evaluator's sum for a batch is S = sum_d ct_d y_d = (A, B), with B = sum_d y_d a_d, a_d
each ciphertext's second polynomial (SEAL's from its seed), and adds S's conjugate, one key
switch of sigma(B) under the conjugation key. An honest key for digit i holds
P sigma(s) at prime i (P the special prime, s the secret key) beside an encryption of zero,
and the switch turns sigma(B) into sigma(B) sigma(s), so the conjugate decrypts to the sum's
conjugate. The key's first parts are the sender's to write: P (sigma(s) + delta) instead
makes the sum decrypt to the score plus sigma(B) delta. With distinct seeds that is
sum_d sigma(y_d a_d) delta, a sum of the evaluator's unknown plaintexts times pseudo-random
polynomials, which is uniform modulo q whatever delta is: nothing to read. With one seed for
every column, B = a Y (Y = sum_d y_d), and delta = Delta sigma(a)^-1 makes it Delta sigma(Y):
the evaluator's plaintext sum conjugated, at the product's scale. The scorer's ciphertexts
encrypt 0, so for a pair in no conflict (only threshold 0's factor r_0 > 0 drawn) it decrypts
r_0 conj(Y_slot) + noise, whose angle is the angle of that pair's evaluator sum, free of the
secret factor: the ratio of two real linear functions of the evaluator's row, where an honest
slot gives one function's sign. The conjugation is there to cancel that imaginary part
(`scoring`). The evaluator now refuses a stream of fresh ciphertexts in which a seed repeats
(`pprl.files.sealed_bytes.FreshCiphertexts`); SEAL draws a fresh seed for each encryption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lab.crafted_keys_attack import kernel_problem
from pprl.files import packed_ciphertexts, sealed_bytes
from pprl.protocol.sealed import scoring, session
from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS


@dataclass(frozen=True)
class AngleReading:
    """What the scorer reads of the pairs in no conflict: the angle of the evaluator's
    plaintext sum conjugated, against the truth (radians; a guess's error is about pi / 2 on
    the median), and whether the evaluator's reading refuses the ciphertexts sent."""

    pairs_in_no_conflict: int
    angle_error_median: float
    angle_error_95: float
    ciphertexts_refused: bool


def conjugation_order(context: Any, secret: Any) -> np.ndarray:
    """The permutation the conjugation X -> X^(2N - 1) makes of a polynomial's NTT values in
    SEAL's order: the same for every prime of the first level (checked), found by encoding
    random slots and their conjugates and multiplying each into a ciphertext of ones."""
    slots = context.first_context_data().parms().poly_modulus_degree() // 2
    values = np.random.default_rng(0).normal(size=(slots, 2)) @ np.array([1, 1j])
    plain, conjugate = (_ntt_words(context, secret, v) for v in (values, np.conj(values)))
    orders = []
    for prime in range(plain.shape[0]):
        order = np.argsort(plain[prime])
        found = order[np.searchsorted(plain[prime][order], conjugate[prime])]
        if not np.array_equal(plain[prime][found], conjugate[prime]):
            raise RuntimeError("the conjugation is not a permutation of the NTT values")
        orders.append(found)
    if any(not np.array_equal(orders[0], other) for other in orders[1:]):
        raise RuntimeError("the conjugation permutes each prime's NTT values differently")
    return orders[0]


def crafted_conjugation_key(keys: scoring.SecretKeys, a: np.ndarray, order: np.ndarray) -> bytes:
    """SEAL's bytes of the scorer's honest conjugation key, seeded, with each digit's first
    part at its own prime raised by P delta, delta = Delta sigma(a)^-1 at that prime (`a` the
    shared second polynomial's NTT values at the first level's primes)."""
    context = keys.context
    primes = [q.value() for q in context.first_context_data().parms().coeff_modulus()]
    special = context.key_context_data().parms().coeff_modulus()[-1].value()
    scale = 2**keys.setting.scale_bits
    raw = packed_ciphertexts.uncompressed(sealed_bytes.dumped(keys.conjugation))
    for digit, at in enumerate(packed_ciphertexts.key_set_offsets(raw)):
        prime = primes[digit]
        words = packed_ciphertexts.coefficients(raw, at)
        inverse = [scale * pow(int(value), -1, prime) % prime for value in a[digit][order]]
        first = words[0, digit].astype(object)
        raised = (first + special % prime * np.array(inverse, dtype=object)) % prime
        words[0, digit] = raised.astype(np.uint64)
        raw = packed_ciphertexts.with_coefficients(raw, words, at)
    return raw


def attack(
    size: int,
    pairs: int,
    width: int,
    rng: np.random.Generator,
    *,
    shared_seed: bool,
    crafted_key: bool,
) -> AngleReading:
    """The attack on a random problem: `size` rows a side, `pairs` candidate pairs, the
    evaluator's rows `width` coordinates (a kernel's cosine and sine of `width` / 2 random
    phases, as `crafted_keys_attack`), the default parameters and thresholds. The scorer's
    ciphertexts encrypt 0: one seeded ciphertext for every column of every batch
    (`shared_seed`), else each its own; its conjugation key crafted for the first one's
    second polynomial (`crafted_key`), else honest."""
    ckks = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
    keys = scoring.secret_keys(ckks)
    context = scoring.seal_context(ckks)
    y, placed = kernel_problem(size, pairs, width, ckks.slots, rng)
    columns = ckks.ciphertexts(width + 1)
    sent = _zeros_sent(keys, placed.batches, columns, shared_seed)
    first = sealed_bytes.loaded_ciphertext(context, sent[0][0], seeded=True)
    a = packed_ciphertexts.coefficients(sealed_bytes.dumped(first))[1]
    conjugation = sealed_bytes.dumped(keys.conjugation)
    if crafted_key:
        conjugation = crafted_conjugation_key(keys, a, conjugation_order(context, keys.secret))
    held = sealed_bytes.evaluation_keys(context, sealed_bytes.dumped(keys.public), conjugation)
    received = [
        [sealed_bytes.loaded_ciphertext(context, data, seeded=True) for data in b] for b in sent
    ]
    returned = scoring.evaluate(context, held, received, y, placed, ckks, rng)
    truth = scoring.plaintext_columns(y, None)[0].sum(axis=1)
    errors = _angle_errors(keys, placed, returned, np.conj(truth))
    return AngleReading(
        pairs_in_no_conflict=len(errors),
        angle_error_median=float(np.median(errors)),
        angle_error_95=float(np.quantile(errors, 0.95)),
        ciphertexts_refused=_refused(context, sent),
    )


def _zeros_sent(
    keys: scoring.SecretKeys, batches: int, columns: int, shared_seed: bool
) -> list[list[bytes]]:
    """The wire's bytes of seeded encryptions of 0, `columns` a batch: one ciphertext's bytes
    everywhere when `shared_seed`, else a fresh encryption (and seed) each."""
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    scale = 2.0**keys.setting.scale_bits
    sealapi.CKKSEncoder(keys.context).encode([0.0] * keys.setting.slots, scale, plain)
    encryptor = sealapi.Encryptor(keys.context, keys.secret)

    def fresh() -> bytes:
        return sealed_bytes.dumped_ciphertext(encryptor.encrypt_symmetric(plain), keys.context)

    if shared_seed:
        one = fresh()
        return [[one] * columns for _ in range(batches)]
    return [[fresh() for _ in range(columns)] for _ in range(batches)]


def _angle_errors(
    keys: scoring.SecretKeys, placed: Layout, returned: list[list[Any]], wanted: np.ndarray
) -> np.ndarray:
    """Per pair in no conflict, how far the angle of what the scorer decrypts from threshold
    0's ciphertext lies from the angle of `wanted` at the pair's evaluator row (radians)."""
    from tenseal import sealapi

    decryptor = sealapi.Decryptor(keys.context, keys.secret)
    encoder = sealapi.CKKSEncoder(keys.context)
    per_round = keys.setting.threshold_ciphertexts
    errors = []
    for batch, results in enumerate(returned):
        span = slice(batch * placed.slots, (batch + 1) * placed.slots)
        for round_ in range(placed.batch_rounds(batch)):
            peers, ranked = placed.peers[round_, span], placed.ranked[round_, span]
            plain = sealapi.Plaintext()
            decryptor.decrypt(results[round_ * per_round], plain)
            values = np.asarray(encoder.decode_complex(plain))[: len(peers)]
            alone = (peers >= 0) & ~ranked
            off = np.angle(values[alone]) - np.angle(wanted[peers[alone]])
            errors.append(np.abs(np.angle(np.exp(1j * off))))
    return np.concatenate(errors)


def _refused(context: Any, sent: list[list[bytes]]) -> bool:
    """Whether the evaluator's reading of one stream refuses any of `sent`."""
    fresh = sealed_bytes.FreshCiphertexts(context)
    try:
        for batch in sent:
            for data in batch:
                fresh.read(data)
    except ValueError:
        return True
    return False


def _ntt_words(context: Any, secret: Any, values: np.ndarray) -> np.ndarray:
    """(primes, N) the NTT values of `values` encoded at the first level: the product of the
    plaintext with a ciphertext whose words are all 1 (both of its parts, so that SEAL does
    not refuse the product as transparent)."""
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(context).encode(values.tolist(), 2.0**30, plain)
    whole = sealapi.Ciphertext()
    sealapi.Encryptor(context, secret).encrypt_symmetric(plain, whole)
    saved = sealed_bytes.dumped(whole)
    ones = np.ones_like(packed_ciphertexts.coefficients(saved))
    base = sealed_bytes.loaded(
        scoring.Ciphertext, context, packed_ciphertexts.with_coefficients(saved, ones)
    )
    product = sealapi.Ciphertext()
    sealapi.Evaluator(context).multiply_plain(base, plain, product)
    return packed_ciphertexts.coefficients(sealed_bytes.dumped(product))[0]
