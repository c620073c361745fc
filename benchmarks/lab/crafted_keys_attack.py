"""A scoring party that crafts its ciphertexts and its keys, against the evaluator of sealed
scoring: what it reads of the evaluator's plaintext coordinates in the returned ciphertexts.

The evaluator computes, per batch, sum_d Enc(x_d) * y_d, adds its conjugate (one key switch
under the scoring party's conjugation key), multiplies by its secret factors r, rescales,
subtracts the thresholds' offsets and adds a fresh encryption of flooding noise under the
scoring party's public key (`scoring`). Decrypting gives r (s - t) + noise, as designed. But
the scoring party also holds the returned ciphertext's two polynomials (c0, c1), and if it
chose what goes into them, they need not be flooded:

- a public key of zeros, so the flooding's encryption adds no mask to c1;
- a conjugation key whose first parts are zero and second parts one, so the key switch adds
  next to nothing to c1 (zero would make SEAL refuse the result as transparent);
- fresh ciphertexts whose c1 it writes itself: 2^scale for one targeted coordinate, 1 (next
  to nothing) for the others, and c0 = 0.

Then the returned c1, read as a plaintext at the ciphertext's scale, holds in each slot the
evaluator's targeted complex coordinate (y_a - i y_b) / 2 times the factor r_k + i r_(k+1),
and the returned c0 holds the offsets -(t_k r_k + i t_(k+1) r_(k+1)) plus the flooding noise.
Where the pair is in conflict (the factors of every threshold drawn), a ciphertext whose
thresholds are both above 0 gives both factors from c0, and c1 / (r_k + i r_(k+1)) gives the
coordinate itself; elsewhere only threshold 0's factor is drawn, r_0 > 0, and c1's angle
gives the coordinate's direction (for a kernel's cosine and sine of a frequency, its phase).

A fresh ciphertext sent seeded holds c0 and a seed from which SEAL draws c1 on loading, so
its sender cannot choose c1: the evaluator reads fresh ciphertexts only in that form
(`pprl.files.sealed_bytes.loaded_ciphertext`), and the conjugation key too, whose second
parts SEAL then draws likewise (`evaluation_keys`; a public key cannot be sent seeded).
Seeded ciphertexts, even under the same crafted keys handed over, leave the returned c1 a
sum of products with pseudo-random polynomials, and the reading above gives noise. (c0 is
the sender's to choose either way; crafting it is crafting the vectors it encrypts, which
the evaluator's blinding and flooding answer as for any vectors.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pprl.files import packed_ciphertexts
from pprl.files.sealed_bytes import (
    dumped,
    dumped_ciphertext,
    evaluation_keys,
    loaded,
    loaded_ciphertext,
)
from pprl.protocol.sealed import scoring, session
from pprl.protocol.sealed.layout import Layout, best_rounds, layout
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS


@dataclass(frozen=True)
class Reading:
    """What the crafted ciphertexts read of the evaluator's targeted coordinates, against
    the truth: for pairs in no conflict the angle's error (radians; a guess's is about
    pi / 2), for pairs in conflict the coordinate's error relative to its size (a guess's is
    about 1)."""

    pairs_in_no_conflict: int
    angle_error_median: float
    pairs_in_conflict: int
    relative_error_median: float
    relative_error_95: float


def crafted_keys(context: Any) -> tuple[bytes, bytes]:
    """SEAL's bytes of a public key of zeros and of a conjugation key whose parts are (0, 1),
    neither seeded: SEAL loads both, since every coefficient lies below its prime."""
    from tenseal import sealapi

    generator = sealapi.KeyGenerator(context)
    public = sealapi.PublicKey()
    generator.create_public_key(public)
    conjugation = sealapi.GaloisKeys()
    element = 2 * context.key_context_data().parms().poly_modulus_degree() - 1
    generator.create_galois_keys([element], conjugation)
    saved = dumped(conjugation)
    return (
        _rewritten(dumped(public), [0], second=0),
        _rewritten(saved, packed_ciphertexts.key_set_offsets(saved), second=1),
    )


def crafted_ciphertexts(
    keys: scoring.SecretKeys, placed: Layout, ciphertexts: int, target: int
) -> list[list[Any]]:
    """Each batch's fresh ciphertexts with c0 = 0 and c1 chosen: the scale for the
    `target`-th, 1 for the others (both polynomials whole, neither from a seed)."""
    from tenseal import sealapi

    context = keys.context
    plain = sealapi.Plaintext()
    scale = 2.0**keys.setting.scale_bits
    sealapi.CKKSEncoder(context).encode([0.0] * keys.setting.slots, scale, plain)
    primes = [q.value() for q in context.first_context_data().parms().coeff_modulus()]
    made = []
    for value in (1, int(scale)):
        whole = sealapi.Ciphertext()
        sealapi.Encryptor(context, keys.secret).encrypt_symmetric(plain, whole)
        saved = dumped(whole)
        words = np.zeros_like(packed_ciphertexts.coefficients(saved))
        for index, prime in enumerate(primes):
            words[1, index, :] = value % prime  # a constant is constant in NTT form too
        rewritten = packed_ciphertexts.with_coefficients(saved, words)
        made.append(loaded(scoring.Ciphertext, context, rewritten))
    other, targeted = made
    return [
        [targeted if d == target else other for d in range(ciphertexts)]
        for _ in range(placed.batches)
    ]


def reading(
    context: Any,
    setting: scoring.CkksSetting,
    placed: Layout,
    returned: list[list[Any]],
    y: np.ndarray,
    target: int,
) -> Reading:
    """The evaluator's targeted coordinates read from the returned ciphertexts' c0 and c1
    (no secret key needed), each against the truth."""
    truth = y[:, 2 * target] + 1j * y[:, 2 * target + 1]
    per_round = setting.threshold_ciphertexts
    parts = _Parts(context)
    angles: list[np.ndarray] = []
    relative: list[np.ndarray] = []
    for batch, results in enumerate(returned):
        span = slice(batch * placed.slots, (batch + 1) * placed.slots)
        for round_ in range(placed.batch_rounds(batch)):
            peers, ranked = placed.peers[round_, span], placed.ranked[round_, span]
            present = peers >= 0
            (first,) = parts.read(results[round_ * per_round], 1)
            first = first[: len(peers)]
            alone = present & ~ranked
            read = np.angle(np.conj(first[alone]))  # r_0 > 0: the angle of y_a + i y_b
            angles.append(np.abs(np.angle(np.exp(1j * (read - np.angle(truth[peers[alone]]))))))
            if per_round < 2:
                continue
            both = present & ranked
            offsets, product = (
                part[: len(peers)] for part in parts.read(results[round_ * per_round + 1], 0, 1)
            )
            low, high = setting.thresholds[2:4]  # both above 0: each factor times it
            factors = -(offsets.real / low + 1j * offsets.imag / high)
            coordinate = 2 * np.conj(product[both] / factors[both])
            wanted = truth[peers[both]]
            relative.append(np.abs(coordinate - wanted) / np.abs(wanted))
    angle, rel = np.concatenate(angles), np.concatenate(relative or [np.zeros(0)])
    return Reading(
        pairs_in_no_conflict=len(angle),
        angle_error_median=float(np.median(angle)) if len(angle) else float("nan"),
        pairs_in_conflict=len(rel),
        relative_error_median=float(np.median(rel)) if len(rel) else float("nan"),
        relative_error_95=float(np.quantile(rel, 0.95)) if len(rel) else float("nan"),
    )


@dataclass(frozen=True)
class Refusals:
    """What the evaluator's reading refuses of what the attack sends (the attack itself hands
    everything to the evaluation as SEAL reads any, as the evaluator did before)."""

    ciphertexts: bool
    conjugation_key: bool
    public_key: bool


def kernel_problem(
    size: int, pairs: int, width: int, slots: int, rng: np.random.Generator
) -> tuple[np.ndarray, Layout]:
    """The attacks' random problem: the evaluator's `size` rows of `width` coordinates (a
    kernel's cosine and sine of `width` / 2 random phases, scaled to unit length) and the
    layout of `pairs` candidate pairs drawn at random (repeats dropped)."""
    drawn = np.unique(rng.integers(0, size, size=(pairs, 2)), axis=0)
    phases = rng.uniform(0, 2 * np.pi, (size, width // 2))
    y = np.empty((size, width))
    y[:, 0::2], y[:, 1::2] = np.cos(phases), np.sin(phases)
    y /= np.sqrt(width)
    return y, layout(drawn, slots, best_rounds(drawn, slots))


def attack(
    size: int, pairs: int, width: int, seeded: bool, rng: np.random.Generator
) -> tuple[Reading, Refusals]:
    """The attack on a random problem: `size` rows a side, `pairs` candidate pairs, the
    evaluator's rows `width` coordinates (a kernel's cosine and sine of `width` / 2 random
    phases), the default parameters and thresholds. `seeded`: the crafted ciphertexts
    replaced by seeded ones of zeros, read as the evaluator reads them. Returns the reading,
    and what the evaluator's reading refuses."""
    ckks = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
    keys = scoring.secret_keys(ckks)
    y, placed = kernel_problem(size, pairs, width, ckks.slots, rng)
    context = scoring.seal_context(ckks)
    if seeded:
        zeros = np.zeros((size, width)), np.zeros(size)
        batches = scoring.encrypted_batches(keys, *zeros, placed)
        sent = [[dumped_ciphertext(item, keys.context) for item in batch] for batch in batches]
        received = [[loaded_ciphertext(context, data, seeded=True) for data in b] for b in sent]
    else:
        received = crafted_ciphertexts(keys, placed, ckks.ciphertexts(width + 1), target=0)
        sent = [[dumped_ciphertext(item, context) for item in batch] for batch in received]
    public, conjugation = crafted_keys(context)
    held = scoring.EvaluationKeys(
        loaded(scoring.PublicKey, context, public),
        loaded(scoring.ConjugationKey, context, conjugation),
    )
    returned = scoring.evaluate(context, held, received, y, placed, ckks, rng)
    honest = scoring.secret_keys(ckks)  # each crafted key beside an honest one of the other
    refused = Refusals(
        _refused(context, sent),
        _keys_refused(context, dumped(honest.public), conjugation),
        _keys_refused(context, public, dumped(honest.conjugation)),
    )
    return reading(context, ckks, placed, returned, y, target=0), refused


def _keys_refused(context: Any, public: bytes, conjugation: bytes) -> bool:
    """Whether the evaluator's reading of the scorer's keys refuses them."""
    try:
        evaluation_keys(context, public, conjugation)
    except ValueError:
        return True
    return False


def _refused(context: Any, sent: list[list[bytes]]) -> bool:
    """Whether the evaluator's reading of fresh ciphertexts refuses any of `sent`."""
    try:
        for batch in sent:
            for data in batch:
                loaded_ciphertext(context, data, seeded=True)
    except ValueError:
        return True
    return False


class _Parts:
    """The polynomials of returned ciphertexts, each decoded as a plaintext at its
    ciphertext's scale: as a ciphertext (part, 0), which any secret key decrypts to it."""

    def __init__(self, context: Any) -> None:
        from tenseal import sealapi

        self.context = context
        self.decryptor = sealapi.Decryptor(context, sealapi.KeyGenerator(context).secret_key())
        self.encoder = sealapi.CKKSEncoder(context)

    def read(self, ciphertext: Any, *which: int) -> list[np.ndarray]:
        """Polynomials `which` (0: c0, 1: c1) of `ciphertext`, decoded."""
        from tenseal import sealapi

        saved = dumped(ciphertext)
        words = packed_ciphertexts.coefficients(saved)
        decoded = []
        for part in which:
            alone = np.zeros_like(words)
            alone[0] = words[part]
            rewritten = packed_ciphertexts.with_coefficients(saved, alone)
            plain = sealapi.Plaintext()
            self.decryptor.decrypt(loaded(scoring.Ciphertext, self.context, rewritten), plain)
            decoded.append(np.asarray(self.encoder.decode_complex(plain)))
        return decoded


def _rewritten(saved: bytes, offsets: list[int], second: int) -> bytes:
    """SEAL's bytes of a key or key set with each key at `offsets` rewritten: its first
    polynomial 0, its second `second` in every coefficient."""
    raw = packed_ciphertexts.uncompressed(saved)
    for at in offsets:
        words = packed_ciphertexts.coefficients(raw, at)
        words[0], words[1] = 0, second
        raw = packed_ciphertexts.with_coefficients(raw, words, at)
    return raw
