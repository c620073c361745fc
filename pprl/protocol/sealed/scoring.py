"""Encrypted scoring: a party's linear classifier evaluated on candidate pairs, neither party
seeing the other's vectors, with CKKS in Microsoft SEAL (through TenSEAL's `sealapi`).

The score of the scoring party's classifier on pair (i, j) is linear in the peer's vector:
s_ij = c_i + <x_i, y_j>, with x_i and c_i the scoring party's (its weights folded into its
own vectors) and y_j the evaluator's. The scoring party encrypts x and c (one more
coordinate) under its own secret key, in the layout both derive from the candidate pairs
(`layout`), two coordinates a ciphertext: a CKKS slot holds a complex number, x_a + i x_b.
It sends the ciphertexts seeded (the second polynomial as the seed SEAL drew it from: half
the bytes) with its public key and a conjugation key, both seeded too (`secret_keys`). The
evaluator multiplies each by its plaintext (y_a - i y_b) / 2, whose product's real part is
(x_a y_a + x_b y_b) / 2, sums, and adds the sum's complex conjugate (one key switch a round,
under the conjugation key), which leaves the score in the real part and cancels the
imaginary, where the cross terms x_b y_a - x_a y_b would otherwise tell the scoring party
more of y than its score. Then it subtracts each agreed threshold t_k, multiplies each
pair's difference by its own random positive factor r_ijk (log-uniform), rescales once, adds
a fresh public-key encryption of Gaussian noise in every slot's real and imaginary part
(flooding, which also re-randomises the ciphertext) and returns one ciphertext per batch,
round and two thresholds: the score is real, so a complex factor r_ijk + i r_ij(k+1) puts
each threshold's blinded difference in a part of its own (`EvaluatorTools.blinded`). The scoring
party decrypts r_ijk (s_ij - t_k) + e and keeps the signs: accept or not, and the score's
bucket among the thresholds, which the one-to-one step needs on names (docs/research/sealed.md).
Only for pairs in conflict (`layout.conflicted`): elsewhere the factor of every threshold but 0
is zero, so those slots decrypt to the flooding noise alone and the party learns only accept
or reject, all the one-to-one step needs there.

Parameters (`CkksSetting`, docs in `parameters`): N = 8192 (4,096 slots) and a 170-bit
modulus chain, under the 218 bits the Homomorphic Encryption Standard (2018) allows N = 8192
for 128-bit security; SEAL refuses chains beyond that bound. One rescale (depth 1): the
factors multiply the score before it. What the flooding buys is measured, not proved here:
the noise's deviation is 2^flood_bits, about 2^5 above the computation's own error at the
largest factor (tests/test_sealed_scoring.py). Bytes in and out of SEAL's objects are the
daemon's business (`pprl.files.sealed_bytes`): SEAL saves only through a path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tenseal import sealapi as seal

from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.linear_form import Alternative
from pprl.protocol.sealed.parameters import CkksSetting

__all__ = ["BucketCount", "Ciphertext", "CkksSetting", "ConjugationKey", "EvaluationKeys"]
__all__ += ["PublicKey", "SecretKeys", "buckets", "conjugation_refusal", "encrypted_batches"]
__all__ += ["EvaluatorTools", "check_received", "encrypted_columns", "evaluate", "evaluated_batch"]
__all__ += ["packed", "seal_context"]
__all__ += ["flood", "secret_keys"]

# What the evaluator loads a received ciphertext and keys as (`pprl.files.sealed_bytes`).
Ciphertext = seal.Ciphertext
PublicKey = seal.PublicKey
ConjugationKey = seal.GaloisKeys


def seal_context(setting: CkksSetting) -> Any:
    """SEAL's context for the agreed parameters; SEAL checks them against the standard's
    128-bit table (TC128) and refuses a weaker chain."""
    parameters = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
    parameters.set_poly_modulus_degree(setting.poly_modulus_degree)
    parameters.set_coeff_modulus(
        seal.CoeffModulus.Create(setting.poly_modulus_degree, list(setting.coeff_mod_bit_sizes))
    )
    context = seal.SEALContext(parameters, True, seal.SEC_LEVEL_TYPE.TC128)
    if not context.parameters_set():
        raise ValueError(f"SEAL refuses the parameters: {context.parameters_error_message()}")
    return context


@dataclass(frozen=True)
class SecretKeys:
    """The scoring party's keys for one run: the secret key never leaves it; the public key
    and the conjugation key go to the evaluator, which needs them only to encrypt its
    flooding noise and to conjugate its sums (both seeded, still to be saved)."""

    setting: CkksSetting
    context: Any
    secret: Any
    public: Any
    conjugation: Any


@dataclass(frozen=True)
class EvaluationKeys:
    """The scoring party's keys as the evaluator holds them."""

    public: Any
    conjugation: Any


def _conjugation(setting: CkksSetting) -> int:
    """SEAL's Galois element for complex conjugation: X -> X^(2N - 1)."""
    return 2 * setting.poly_modulus_degree - 1


def secret_keys(setting: CkksSetting) -> SecretKeys:
    """Fresh keys under the agreed parameters, and the one key-switching key the evaluator
    needs (conjugation; no rotation keys, so nothing else can be switched).

    The public key is made as SEAL makes one, a symmetric encryption of zero at the key level
    (KeyGenerator::generate_pk), but kept seeded: its second polynomial is then SEAL's from a
    seed, which the scoring party cannot choose, where a key of its own making could leave
    the flooding's second polynomial unmasked (`pprl.files.sealed_bytes.evaluation_keys`).
    TenSEAL returns no seeded public key from the generator, but SEAL loads this one as a
    public key."""
    context = seal_context(setting)
    generator = seal.KeyGenerator(context)
    secret = generator.secret_key()
    public = seal.Encryptor(context, secret).encrypt_zero_symmetric(context.key_parms_id())
    conjugation = generator.create_galois_keys([_conjugation(setting)])
    return SecretKeys(setting, context, secret, public, conjugation)


def conjugation_refusal(keys: Any, setting: CkksSetting) -> str | None:
    """Why a loaded key-switching key is not the conjugation key evaluation needs, or None."""
    if keys.size() != 1 or not keys.has_key(_conjugation(setting)):
        return "the conjugation key must hold the conjugation element and no other"
    return None


def packed(columns: np.ndarray) -> np.ndarray:
    """(rows, ceil(d / 2)) complex: columns 2k and 2k + 1 as one complex coordinate, the real
    part and the imaginary (an odd last column alone, in the real part)."""
    if columns.shape[1] % 2:
        columns = np.concatenate([columns, np.zeros((len(columns), 1))], axis=1)
    return columns[:, 0::2] + 1j * columns[:, 1::2]


def encrypted_batches(
    keys: SecretKeys,
    x: np.ndarray,
    c: np.ndarray,
    layout: Layout,
    alternative: Alternative | None = None,
    live: np.ndarray | None = None,
) -> Iterator[list[Any]]:
    """Per batch, one ciphertext per two columns (`packed`) of x (those `live`, Peer.live:
    the others are zero on both sides), then c (then, with a movers' alternative, its own
    columns): slot s holds the values of the own row the layout puts there. One batch at a
    time, for a stream that need not hold them all; each ciphertext still to be saved,
    seeded (`pprl.files.sealed_bytes.dumped`)."""
    columns = np.concatenate([x if live is None else x[:, live], c[:, None]], axis=1)
    if alternative is not None:
        columns = np.concatenate([columns, alternative.columns()], axis=1)
    encoder = seal.CKKSEncoder(keys.context)
    encryptor = seal.Encryptor(keys.context, keys.secret)
    scale = 2.0**keys.setting.scale_bits
    for batch in range(layout.batches):
        rows = layout.rows[batch * layout.slots : (batch + 1) * layout.slots]
        yield encrypted_columns(encoder, encryptor, packed(columns[rows]), scale)


def encrypted_columns(encoder: Any, encryptor: Any, values: np.ndarray, scale: float) -> list[Any]:
    """One ciphertext per column of `values` (a value a slot) at `scale`, from an encryptor
    under the scoring party's secret key: to be saved seeded."""
    sealed = []
    for d in range(values.shape[1]):
        plain = seal.Plaintext()
        encoder.encode(values[:, d].tolist(), scale, plain)
        sealed.append(encryptor.encrypt_symmetric(plain))
    return sealed


def evaluate(
    context: Any,
    keys: EvaluationKeys,
    received: Sequence[Sequence[Any]],
    y: np.ndarray,
    layout: Layout,
    setting: CkksSetting,
    rng: np.random.Generator,
    ratios: np.ndarray | None = None,
    live: np.ndarray | None = None,
) -> list[list[Any]]:
    """The evaluator's side: per batch, round and threshold t_k,
    Enc(r_ijk (c_i + <x_i, y_j> - t_k) + noise), each with its own random factor (then, with
    a movers' alternative, its score at 0 likewise)."""
    return [
        evaluated_batch(context, keys, batch, ciphertexts, y, layout, setting, rng, ratios, live)
        for batch, ciphertexts in enumerate(received)
    ]


def plaintext_columns(
    y: np.ndarray, ratios: np.ndarray | None, live: np.ndarray | None = None
) -> list[np.ndarray]:
    """(rows, ciphertexts) plaintexts the evaluator multiplies the received ciphertexts by,
    per form: the first form's (y, then 1 for its constant, 0 for the alternative's columns)
    and, with `ratios`, the alternative's (each entry's vector scaled by its ratio, 0 for the
    first form's indicators and constant, then its own indicators and 1); of y's columns only
    those `live`, as the scoring party encrypted them; packed as its ciphertexts are, each
    complex value conjugated and halved, so that a product's real part is the two columns'
    products' sum over 2 (the conjugate added doubles it back)."""
    forms = _forms(y, ratios)
    if live is not None:
        kept = np.concatenate([live, np.ones(forms[0].shape[1] - len(live), dtype=bool)])
        forms = [form[:, kept] for form in forms]
    return [np.conj(packed(form)) / 2 for form in forms]


def _forms(y: np.ndarray, ratios: np.ndarray | None) -> list[np.ndarray]:
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
    context: Any,
    keys: EvaluationKeys,
    batch: int,
    ciphertexts: Sequence[Any],
    y: np.ndarray,
    layout: Layout,
    setting: CkksSetting,
    rng: np.random.Generator,
    ratios: np.ndarray | None = None,
    live: np.ndarray | None = None,
) -> list[Any]:
    """`evaluate` for one batch: its rounds (`layout.batch_rounds`) x the thresholds'
    ciphertexts, two thresholds each (and the alternative's one per round after them), in
    that order. ValueError
    for a ciphertext that is not a fresh one of the agreed parameters (its level, size or
    scale)."""
    span = slice(batch * layout.slots, (batch + 1) * layout.slots)
    rounds = layout.batch_rounds(batch)
    peered = layout.peers[:rounds, span]
    # Only the evaluator's rows this batch meets, packed: a batch is a small share of y.
    met = np.unique(peered[peered >= 0])
    forms = plaintext_columns(y[met], ratios, live)
    check_received(context, setting, ciphertexts, forms[0].shape[1], f"batch {batch}")
    tools = EvaluatorTools(context, keys, setting)
    results = []
    for peers, ranked in zip(peered, layout.ranked[:rounds, span], strict=True):
        present = peers >= 0
        at = np.searchsorted(met, np.where(present, peers, met[0]))
        first, *alternative = (tools.score(ciphertexts, columns[at]) for columns in forms)
        # Above 0, a bucket only where the pair is in conflict: elsewhere a factor of 0 leaves
        # the flooding noise alone in the slot's part.
        told = [present] + [ranked] * (len(setting.thresholds) - 1)
        for k in range(0, len(setting.thresholds), 2):
            pair = slice(k, k + 2)
            results.append(tools.blinded(first, setting.thresholds[pair], told[pair], rng))
        for score in alternative:
            results.append(tools.blinded(score, (0.0,), [present], rng))
    return results


def check_received(
    context: Any, setting: CkksSetting, ciphertexts: Sequence[Any], agreed: int, where: str
) -> None:
    """ValueError for a count of received ciphertexts other than `agreed`, or one that is
    not a fresh one of the agreed parameters (its level, size or scale): anything else would
    change what the evaluation computes."""
    if len(ciphertexts) != agreed:
        raise ValueError(f"{where}: {len(ciphertexts)} ciphertexts where {agreed} were agreed")
    scale = 2.0**setting.scale_bits
    for index, ciphertext in enumerate(ciphertexts):
        fresh = ciphertext.parms_id() == context.first_parms_id() and ciphertext.size() == 2
        if not fresh or ciphertext.scale != scale:
            raise ValueError(f"{where}, ciphertext {index}: not a fresh one at the agreed scale")


def replaced(
    context: Any,
    keys: EvaluationKeys,
    setting: CkksSetting,
    results: Sequence[Any],
    rng: np.random.Generator,
) -> list[Any]:
    """Fresh encryptions under the scorer's key of values drawn here, one at each result's
    level and scale, in its place: what an evaluator that does not compute returns (a
    daemon's tamper-scores failpoint), of the size an honest result decrypts to, so that only
    the scorer's checks (hidden_join.checked) can tell."""
    tools = EvaluatorTools(context, keys, setting)
    bound = 2.0 ** setting.factor_bits[1] * max(abs(t) for t in setting.thresholds)
    return [
        tools.encrypted(
            rng.uniform(-bound, bound, setting.slots)
            + 1j * rng.uniform(-bound, bound, setting.slots),
            result.parms_id(),
            result.scale,
        )
        for result in results
    ]


class EvaluatorTools:
    """The evaluator's SEAL objects for one batch: an encoder, an evaluator, an encryptor
    under the peer's public key and its conjugation key."""

    def __init__(self, context: Any, keys: EvaluationKeys, setting: CkksSetting) -> None:
        self.context = context
        self.setting = setting
        self.encoder = seal.CKKSEncoder(context)
        self.evaluator = seal.Evaluator(context)
        self.encryptor = seal.Encryptor(context, keys.public)
        self.conjugation = keys.conjugation

    def plain(self, values: Any, parms_id: Any, scale: float) -> Any:
        """`values` (a slot's each, or one constant for every slot) encoded at the level
        `parms_id` and `scale`."""
        plain = seal.Plaintext()
        self.encoder.encode(values, parms_id, scale, plain)
        return plain

    def score(self, ciphertexts: Sequence[Any], plain: np.ndarray) -> Any:
        """sum_d Enc(v_d) * plain[:, d] over the columns that are not all 0 once encoded, plus
        its conjugate: the real part of the sum twice, the imaginary 0 (`plaintext_columns`);
        not rescaled (its scale is the two encodings' product). A column can be all but 0: an
        exact entry's features are far below the encoding's precision for values far from
        its own (kernel_features.Exact), and a product by a zero plaintext is refused."""
        used = [d for d in range(plain.shape[1]) if np.any(plain[:, d])]
        parms_id = self.context.first_parms_id()
        scale = 2.0**self.setting.scale_bits
        total = None
        for d in used:
            multiplier = self.plain(plain[:, d].tolist(), parms_id, scale)
            if multiplier.is_zero():
                continue
            product = seal.Ciphertext()
            self.evaluator.multiply_plain(ciphertexts[d], multiplier, product)
            if total is None:
                total = product
            else:
                self.evaluator.add_inplace(total, product)
        conjugate = seal.Ciphertext()
        self.evaluator.complex_conjugate(total, self.conjugation, conjugate)
        self.evaluator.add_inplace(total, conjugate)
        return total

    def blinded(
        self,
        score: Any,
        thresholds: Sequence[float],
        told: Sequence[np.ndarray],
        rng: np.random.Generator,
    ) -> Any:
        """Enc(r_a (score - t_a) + i r_b (score - t_b) + noise) for one or two thresholds (the
        real part, then the imaginary), each r log-uniform where its `told`, 0 elsewhere. The
        score is real in every slot (`score`), so the complex factor r_a + i r_b keeps the two
        apart; each threshold's offset r t is subtracted after the rescale."""
        setting = self.setting
        low, high = setting.factor_bits
        drawn = np.array([np.where(t, 2.0 ** rng.uniform(low, high, len(t)), 0.0) for t in told])
        parts = np.array([1.0, 1j][: len(drawn)])[:, None]
        factors = (parts * drawn).sum(axis=0)
        offsets = (parts * np.asarray(thresholds)[:, None] * drawn).sum(axis=0)
        noise = flood(rng, setting.slots, setting.flood_bits)
        factor_scale = 2.0**setting.factor_scale_bits
        if not np.any(factors):
            # Every factor 0: the product would be all zero, which SEAL refuses to return;
            # the flooding alone, at the level and scale the product would have had.
            data = self.context.get_context_data(score.parms_id())
            dropped = data.parms().coeff_modulus()[-1].value()
            parms_id = data.next_context_data().parms_id()
            return self.encrypted(noise, parms_id, score.scale * factor_scale / dropped)
        shifted = seal.Ciphertext()
        multiplier = self.plain(factors.tolist(), score.parms_id(), factor_scale)
        self.evaluator.multiply_plain(score, multiplier, shifted)
        self.evaluator.rescale_to_next_inplace(shifted)
        if np.any(offsets):
            offset = self.plain(offsets.tolist(), shifted.parms_id(), shifted.scale)
            self.evaluator.sub_plain_inplace(shifted, offset)
        self.evaluator.add_inplace(
            shifted, self.encrypted(noise, shifted.parms_id(), shifted.scale)
        )
        return shifted

    def encrypted(self, values: np.ndarray, parms_id: Any, scale: float) -> Any:
        """A fresh encryption of `values` under the peer's public key."""
        fresh = seal.Ciphertext()
        self.encryptor.encrypt(self.plain(values.tolist(), parms_id, scale), fresh)
        return fresh


def flood(rng: np.random.Generator, slots: int, bits: int) -> np.ndarray:
    """Flooding noise for every slot of a ciphertext, in its real and its imaginary part: a
    slot's value is complex, and before 2026-11-28 noise in the real parts of the used slots
    alone left the computation's own error readable in the imaginary parts and in the
    unused slots of a batch's last ciphertexts (about 0.02 and 0.002 there, decode_complex).
    The error spreads over every slot, so every slot is flooded."""
    deviation = 2.0**bits
    return rng.normal(0.0, deviation, slots) + 1j * rng.normal(0.0, deviation, slots)


class BucketCount:
    """Each candidate pair's bucket, read batch by batch as the evaluated ciphertexts arrive
    (a stream need not hold them all): how many of the thresholds the pair's score passes,
    from the signs of its blinded differences. 0 is rejected, and higher buckets rank the
    accepted. A pair in no conflict is told only its sign: its bucket is 0 or 1. With a
    movers' alternative, a pair only it accepts is in bucket 1."""

    def __init__(
        self, keys: SecretKeys, layout: Layout, pairs: int, alternative: bool = False
    ) -> None:
        self.layout = layout
        self.encoder = seal.CKKSEncoder(keys.context)
        self.decryptor = seal.Decryptor(keys.context, keys.secret)
        self.last = keys.context.last_parms_id()
        self.count = np.zeros(pairs, dtype=np.int64)
        self.thresholds = len(keys.setting.thresholds)
        self.packed = keys.setting.threshold_ciphertexts
        self.per_round = self.packed + int(alternative)

    def add(self, batch: int, results: Sequence[Any]) -> None:
        """One batch's evaluated ciphertexts, in the evaluator's order. ValueError for a count
        the layout does not give, or a ciphertext that is not an evaluated one of the agreed
        parameters."""
        layout, thresholds = self.layout, self.thresholds
        if len(results) != layout.batch_rounds(batch) * self.per_round:
            raise ValueError(f"batch {batch}: {len(results)} results where the layout has others")
        span = slice(batch * layout.slots, (batch + 1) * layout.slots)
        for position, ciphertext in enumerate(results):
            if ciphertext.parms_id() != self.last or ciphertext.size() != 2:
                raise ValueError(f"batch {batch}, result {position} is not an evaluated score")
            plain = seal.Plaintext()
            self.decryptor.decrypt(ciphertext, plain)
            values = np.asarray(self.encoder.decode_complex(plain))
            round_, j = divmod(position, self.per_round)
            index = layout.pair_of[round_, span]
            present, ranked = index >= 0, layout.ranked[round_, span]
            if j == self.packed:  # the alternative's score, in the real part
                chosen = index[present][values.real[: len(index)][present] > 0]
                self.count[chosen] = np.maximum(self.count[chosen], 1)
                continue
            for k, part in zip((2 * j, 2 * j + 1), (values.real, values.imag), strict=True):
                if k < thresholds:
                    used = present if k == 0 else ranked
                    self.count[index[used]] += part[: len(index)][used] > 0


def buckets(
    keys: SecretKeys,
    returned: Iterable[Sequence[Any]],
    layout: Layout,
    pairs: int,
    alternative: bool = False,
) -> np.ndarray:
    """(pairs,) each candidate pair's bucket (`BucketCount`) from every batch's results."""
    counted = BucketCount(keys, layout, pairs, alternative)
    for batch, results in enumerate(returned):
        counted.add(batch, results)
    return counted.count
