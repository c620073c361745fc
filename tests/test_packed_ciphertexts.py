"""Ciphertexts on the wire with their coefficients packed at their primes' widths: SEAL's
bytes come back exactly, the packed form is the size the widths say, and bytes that cannot be
a ciphertext of the agreed parameters are refused before or by SEAL."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest

from pprl.files import packed_ciphertexts
from pprl.files.sealed_bytes import dumped, dumped_ciphertext, loaded, loaded_ciphertext
from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.parameters import CkksSetting
from tests.sealed_keys import held_public

WIDTHS = list(CkksSetting().coeff_mod_bit_sizes)
DEGREE = CkksSetting().poly_modulus_degree


@pytest.fixture(scope="module")
def made() -> dict[str, Any]:
    """A fresh seeded ciphertext (two primes) and an evaluated-like one (one prime, two
    polynomials, at the chain's last level), both of random values."""
    from tenseal import sealapi

    setting = CkksSetting()
    keys = scoring.secret_keys(setting)
    values = np.random.default_rng(3).uniform(-1, 1, setting.slots)
    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode(values.tolist(), 2.0**setting.scale_bits, plain)
    fresh = sealapi.Encryptor(keys.context, keys.secret).encrypt_symmetric(plain)
    last = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, held_public(keys)).encrypt(plain, last)
    sealapi.Evaluator(keys.context).mod_switch_to_next_inplace(last)
    return {"keys": keys, "values": values, "fresh": fresh, "last": last}


def _decoded(keys: scoring.SecretKeys, ciphertext: Any) -> np.ndarray:
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    sealapi.Decryptor(keys.context, keys.secret).decrypt(ciphertext, plain)
    return np.asarray(sealapi.CKKSEncoder(keys.context).decode_double(plain))


def test_seal_bytes_come_back_exactly_and_decrypt_alike(made: dict) -> None:
    keys = made["keys"]
    for name, seeded in (("fresh", True), ("last", False)):
        saved = dumped(made[name])
        sent = dumped_ciphertext(made[name], keys.context)
        back = loaded_ciphertext(keys.context, sent, seeded=seeded)
        assert dumped(back) == dumped(loaded(scoring.Ciphertext, keys.context, saved))
    back = loaded_ciphertext(
        keys.context, dumped_ciphertext(made["fresh"], keys.context), seeded=True
    )
    assert np.abs(_decoded(keys, back) - made["values"]).max() < 1e-5


def test_the_packed_form_is_the_size_its_widths_say(made: dict) -> None:
    """A fresh ciphertext's one stored polynomial at 50 + 60 bits, an evaluated one's two at 50
    bits, with SEAL's own bytes around them (at most a few hundred): 10% and 13% below what
    SEAL saves compressed."""
    keys = made["keys"]
    fresh = dumped_ciphertext(made["fresh"], keys.context)
    last = dumped_ciphertext(made["last"], keys.context)
    assert 0 < len(fresh) - DEGREE * (50 + 60) // 8 < 300
    assert 0 < len(last) - 2 * DEGREE * 50 // 8 < 300
    assert len(fresh) < 0.91 * len(dumped(made["fresh"]))
    assert len(last) < 0.88 * len(dumped(made["last"]))


def test_bytes_that_are_not_a_packed_ciphertext_are_refused(made: dict) -> None:
    keys = made["keys"]
    sent = dumped_ciphertext(made["fresh"], keys.context)
    refused = [
        sent[:-1],  # cut short
        sent[: len(sent) // 2],
        sent + bytes(300),  # too long
        dumped(made["fresh"]),  # SEAL's own compressed bytes
        b"junk" + sent[4:],
    ]
    for data in refused:
        with pytest.raises(ValueError, match="not a Ciphertext"):
            loaded_ciphertext(keys.context, data, seeded=True)
    with pytest.raises(ValueError, match="another ring"):
        packed_ciphertexts.unpacked(sent, WIDTHS, DEGREE // 2, 1)
    with pytest.raises(ValueError, match="another ring or chain"):
        packed_ciphertexts.unpacked(sent, WIDTHS[:1], DEGREE, 1)


def test_each_kind_must_store_its_own_polynomials(made: dict) -> None:
    """A fresh ciphertext is read only seeded (one polynomial stored, the other SEAL's from
    the seed), an evaluated one only whole: each refused as the other."""
    keys = made["keys"]
    fresh = dumped_ciphertext(made["fresh"], keys.context)
    last = dumped_ciphertext(made["last"], keys.context)
    with pytest.raises(ValueError, match="not a Ciphertext"):
        loaded_ciphertext(keys.context, fresh, seeded=False)
    with pytest.raises(ValueError, match="not a Ciphertext"):
        loaded_ciphertext(keys.context, last, seeded=True)
    with pytest.raises(ValueError, match="2 stored polynomials where 1 were due"):
        packed_ciphertexts.unpacked(last, WIDTHS, DEGREE, 1)


def test_a_coefficient_beyond_its_prime_is_refused_by_seal(made: dict) -> None:
    """Every bit of the first coefficient set: it fits the 50 bits the packing gives it but
    not its prime, and SEAL's check of every coefficient refuses it."""
    keys = made["keys"]
    sent = bytearray(dumped_ciphertext(made["fresh"], keys.context))
    start = 16 + 73 + 24
    sent[start : start + 6] = b"\xff" * 6
    sent[start + DEGREE * 6] |= 0b11  # the first coefficient's two bits left over
    with pytest.raises(ValueError, match="not a Ciphertext"):
        loaded_ciphertext(keys.context, bytes(sent), seeded=True)


def test_a_shape_that_does_not_fit_its_count_is_refused(made: dict) -> None:
    keys = made["keys"]
    sent = bytearray(dumped_ciphertext(made["last"], keys.context))
    struct.pack_into("<Q", sent, 16 + 33 + 16, 3)  # three primes claimed, one held
    with pytest.raises(ValueError, match="does not fit"):
        packed_ciphertexts.unpacked(bytes(sent), WIDTHS, DEGREE, 2)
    with pytest.raises(ValueError, match="wider than its prime"):
        packed_ciphertexts.packed(dumped(made["fresh"]), [40, 60, 60])
