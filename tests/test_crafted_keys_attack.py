"""A scoring party that crafts its fresh ciphertexts' second polynomial, its public key and its
conjugation key reads the evaluator's plaintext coordinates out of the returned ciphertexts,
flooding or not; the evaluator now reads fresh ciphertexts and the conjugation key only
seeded, which refuses them, and seeded ciphertexts under the same crafted keys read nothing."""

from __future__ import annotations

import numpy as np
import pytest

from lab.crafted_keys_attack import attack
from pprl.files import packed_ciphertexts
from pprl.files.sealed_bytes import dumped, evaluation_keys, loaded
from pprl.protocol.sealed import scoring
from tests.sealed_keys import held_public

# A small problem: 1,500 rows a side, 2,500 candidate pairs (some rows with one candidate, so
# some pairs in no conflict), the evaluator's rows 16 coordinates.
SIZE, PAIRS, WIDTH = 1500, 2500, 16


def test_crafted_ciphertexts_and_keys_read_the_evaluators_coordinates() -> None:
    read, refused = attack(SIZE, PAIRS, WIDTH, seeded=False, rng=np.random.default_rng(3))
    assert read.pairs_in_no_conflict > 50 and read.pairs_in_conflict > 500
    # Each pair's targeted coordinate: its angle to a millionth of a radian where only
    # threshold 0's factor is drawn, the coordinate itself to 1% where every factor is.
    assert read.angle_error_median < 1e-5
    assert read.relative_error_median < 0.01
    # As the evaluator reads them: every crafted part refused on its own.
    assert refused.ciphertexts and refused.conjugation_key and refused.public_key


def test_seeded_ciphertexts_read_nothing_under_the_same_crafted_keys() -> None:
    read, refused = attack(SIZE, PAIRS, WIDTH, seeded=True, rng=np.random.default_rng(3))
    assert not refused.ciphertexts and refused.conjugation_key and refused.public_key
    # A guess's angle is off by pi / 2 on the median, its coordinate by its whole size.
    assert read.angle_error_median > 1.0
    assert read.relative_error_median > 0.5


def test_a_key_sets_keys_are_found_and_an_honest_conjugation_key_is_seeded() -> None:
    setting = scoring.CkksSetting()
    keys = scoring.secret_keys(setting)
    saved = dumped(keys.conjugation)  # as the scorer sends it
    offsets = packed_ciphertexts.key_set_offsets(saved)
    assert len(offsets) == 2  # one key a data prime of the chain
    assert [packed_ciphertexts.stored_polynomials(saved, at) for at in offsets] == [1, 1]
    context = scoring.seal_context(setting)
    assert evaluation_keys(context, dumped(keys.public), saved) is not None
    with pytest.raises(ValueError, match="shorter than its counts"):
        packed_ciphertexts.key_set_offsets(saved[: len(saved) // 2])


def test_coefficients_rewritten_as_they_were_give_the_same_ciphertext() -> None:
    from tenseal import sealapi

    setting = scoring.CkksSetting()
    keys = scoring.secret_keys(setting)
    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.25] * setting.slots, 2.0**30, plain)
    whole = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, held_public(keys)).encrypt(plain, whole)
    saved = dumped(whole)
    words = packed_ciphertexts.coefficients(saved)
    assert words.shape == (2, 2, setting.poly_modulus_degree)
    again = packed_ciphertexts.with_coefficients(saved, words)
    assert dumped(loaded(scoring.Ciphertext, keys.context, again)) == dumped(whole)
    with pytest.raises(ValueError, match="another shape"):
        packed_ciphertexts.with_coefficients(saved, words[:1])


def test_a_public_key_is_read_only_seeded_and_with_its_polynomial_spread() -> None:
    """The public key goes seeded, as a symmetric encryption of zero at the key level (SEAL
    makes its keys so): its second polynomial is SEAL's from a seed. One stored whole is
    refused, however honest; so is a stored polynomial of zeros or of small values (a key for
    the secret 0: its error alone)."""
    from tenseal import sealapi

    setting = scoring.CkksSetting()
    keys = scoring.secret_keys(setting)
    context = scoring.seal_context(setting)
    conjugation = dumped(keys.conjugation)
    saved = dumped(keys.public)
    assert evaluation_keys(context, saved, conjugation) is not None
    words = packed_ciphertexts.coefficients(saved)
    assert words.shape == (1, 3, setting.poly_modulus_degree)  # one polynomial and a seed
    # It encrypts as SEAL's own public key does: the secret key decrypts.
    plain, back = sealapi.Plaintext(), sealapi.Plaintext()
    encoder = sealapi.CKKSEncoder(keys.context)
    encoder.encode([0.75] * setting.slots, 2.0**setting.scale_bits, plain)
    whole = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, held_public(keys)).encrypt(plain, whole)
    sealapi.Decryptor(keys.context, keys.secret).decrypt(whole, back)
    np.testing.assert_allclose(encoder.decode_double(back)[:8], 0.75, atol=1e-4)
    whole_key = sealapi.PublicKey()
    sealapi.KeyGenerator(keys.context, keys.secret).create_public_key(whole_key)
    with pytest.raises(ValueError, match="public key must be sent seeded"):
        evaluation_keys(context, dumped(whole_key), conjugation)
    primes = [q.value() for q in context.key_context_data().parms().coeff_modulus()]
    small = np.random.default_rng(4).integers(-20, 21, words.shape[2])
    for values in (0, small):
        crafted = words.copy()
        for j, prime in enumerate(primes):
            crafted[0, j] = np.asarray(values, dtype=np.int64) % prime
        public = packed_ciphertexts.with_coefficients(saved, crafted)
        loaded(scoring.PublicKey, context, public)  # SEAL itself reads it
        with pytest.raises(ValueError, match="public key's polynomials are not spread"):
            evaluation_keys(context, public, conjugation)
