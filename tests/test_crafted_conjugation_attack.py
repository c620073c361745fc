"""A scoring party that crafts its seeded conjugation key's first parts and sends one seed for
every ciphertext of a batch reads, for each pair in no conflict, the angle of the evaluator's
plaintext sum, free of the secret factor; with an honest key, or a seed a ciphertext, it reads
nothing. The evaluator now refuses a stream in which a seed repeats."""

from __future__ import annotations

import numpy as np
import pytest

from lab.crafted_conjugation_attack import attack
from pprl.files import packed_ciphertexts
from pprl.files.sealed_bytes import FreshCiphertexts, dumped, dumped_ciphertext
from pprl.protocol.sealed import scoring

# 1,500 rows a side, 2,500 candidate pairs (about 90 of them in no conflict), 16 coordinates.
SIZE, PAIRS, WIDTH = 1500, 2500, 16


def test_a_crafted_conjugation_key_and_one_seed_read_the_evaluators_sum() -> None:
    read = attack(SIZE, PAIRS, WIDTH, np.random.default_rng(3), shared_seed=True, crafted_key=True)
    assert read.pairs_in_no_conflict > 50
    assert read.angle_error_median < 0.01 and read.angle_error_95 < 0.1
    assert read.ciphertexts_refused  # as the evaluator reads a stream now


@pytest.mark.parametrize(
    ("shared_seed", "crafted_key"), [(True, False), (False, True)], ids=["honest-key", "seed-each"]
)
def test_an_honest_key_or_a_seed_each_reads_nothing(shared_seed: bool, crafted_key: bool) -> None:
    read = attack(
        SIZE,
        PAIRS,
        WIDTH,
        np.random.default_rng(3),
        shared_seed=shared_seed,
        crafted_key=crafted_key,
    )
    # A guess's angle is off by pi / 2 on the median.
    assert read.angle_error_median > 1.0
    assert read.ciphertexts_refused == shared_seed


def _seeded(keys: scoring.SecretKeys) -> bytes:
    from tenseal import sealapi

    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.25] * keys.setting.slots, 2.0**30, plain)
    return dumped_ciphertext(
        sealapi.Encryptor(keys.context, keys.secret).encrypt_symmetric(plain), keys.context
    )


def test_a_stream_reads_distinct_seeds_and_refuses_a_repeat() -> None:
    keys = scoring.secret_keys(scoring.CkksSetting())
    first, second = _seeded(keys), _seeded(keys)
    fresh = FreshCiphertexts(keys.context)
    assert fresh.read(first) is not None and fresh.read(second) is not None
    with pytest.raises(ValueError, match="one seed"):
        fresh.read(first)
    # Another stream starts afresh.
    assert FreshCiphertexts(keys.context).read(first) is not None


def test_a_seed_is_read_only_as_seal_saves_it() -> None:
    keys = scoring.secret_keys(scoring.CkksSetting())
    saved = dumped(keys.public)  # a seeded save: one polynomial, then the seed
    drawn = packed_ciphertexts.seed(saved)
    assert len(drawn) == 65  # the generator's type and 64 bytes
    raw = packed_ciphertexts.uncompressed(saved)
    compressed_flag = len(raw) - 81 + 5  # the seed save's compression mode
    altered = raw[:compressed_flag] + b"\x02" + raw[compressed_flag + 1 :]
    with pytest.raises(ValueError, match="as SEAL saves one"):
        packed_ciphertexts.seed(altered)
    with pytest.raises(ValueError, match="as SEAL saves one"):
        packed_ciphertexts.seed(raw[:-1])
