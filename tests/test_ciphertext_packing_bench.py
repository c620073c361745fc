"""The same-run comparison of ciphertexts as SEAL saves them and packed
(benchmarks/ciphertext_packing.py): what it counts for each form."""

from __future__ import annotations

import numpy as np

from pprl.files.sealed_bytes import dumped, dumped_ciphertext
from pprl.protocol.sealed import scoring
from tests.scripts import benchmark_script

packing = benchmark_script("ciphertext_packing")


def test_both_forms_are_counted_on_the_same_ciphertexts() -> None:
    from tenseal import sealapi

    setting = scoring.CkksSetting()
    keys = scoring.secret_keys(setting)
    encryptor = sealapi.Encryptor(keys.context, keys.secret)
    objects = []
    for value in (0.25, -0.5, 0.75):
        plain = sealapi.Plaintext()
        sealapi.CKKSEncoder(keys.context).encode([value] * setting.slots, 2.0**30, plain)
        objects.append(encryptor.encrypt_symmetric(plain))
    row = packing._compared("fresh", objects, keys.context, seeded=True)
    assert row["ciphertexts"] == 3
    assert row["bytes_seal"] == sum(len(dumped(item)) for item in objects)
    assert row["bytes_packed"] == sum(
        len(dumped_ciphertext(item, keys.context)) for item in objects
    )
    assert np.isclose(row["saved"], 1 - row["bytes_packed"] / row["bytes_seal"])
    assert 0.09 < row["saved"] < 0.12
    assert all(row[key] > 0 for key in row if key.endswith("_ms_seal") or key.endswith("_packed"))
