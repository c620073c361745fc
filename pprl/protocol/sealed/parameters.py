"""The cryptographic parameters of sealed linkage, named: the agreement carries a name
(`[method] sealed_crypto`), and the name stands for every parameter below, so the digest
covers them all. Kept apart from `scoring` so that reading an agreement does not need the
homomorphic-encryption library.

CKKS at N = 8192 (4,096 slots) with a 170-bit modulus chain (50, 60, 60): under the 218 bits
the Homomorphic Encryption Standard (2018) allows N = 8192 for 128-bit security, and SEAL
(built with that table, `sec_level` TC128) refuses a chain beyond it. The last prime is
SEAL's special prime, used by the one key switch a round (the conjugation that sums a slot's
two packed coordinates, `scoring`). The scoring party's vectors and the
evaluator's are encoded at 2^30 each and the evaluator's per-pair factors at 2^20; their
product (2^80) is rescaled once by the 60-bit prime, so the decrypted score r (s - t) sits at
about 2^20 in the 50-bit prime, with room for |r (s - t)| up to 2^29. One level where the earlier
set, (60, 30, 30, 60), spent two (the vectors, then the factors, each
rescaled): the factors now multiply before the one rescale, so the rescaling's rounding is
not multiplied by them. Measured (`tests/test_sealed_scoring.py`): at the largest factor the
computation's own error stays under 0.5, 2^5 below the flooding's deviation (it was about
2^4 below), and a slot whose factor is 0 decrypts to the flooding alone. A fresh ciphertext
has two primes, not three, and is sent seeded (`scoring`): 126 KB where it was 279 KB; an
evaluated one is 118 KB (131 KB). Each holds two coordinates, as a slot's real and imaginary
parts (since 2026-11-28, later: half the ciphertexts), for one conjugation key (381 KB,
seeded) sent with the public key. A chain (40, 60, 60) would return 94 KB but leaves the
result at 2^10, where the rescaling's rounding (about 8) rivals the flooding: not taken.
Blocking keys are blinded on X25519 (about 128-bit security; `blinding`).

On the wire a ciphertext is now SEAL's save with its coefficients packed at their primes'
widths (`pprl.files.packed_ciphertexts`): 113 KB fresh where SEAL's compressed save is 126 KB,
103 KB evaluated where it is 118 KB. The form is named in the agreement (`CIPHERTEXT_FORM`),
so a party that sends SEAL's compressed form instead fails AGREE rather than MATCH; since
2026-11-29 it names the public key sent seeded as well (191 KB where it was 382 KB).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CkksSetting:
    """The agreed encryption parameters and blinding of scores (all in the agreement)."""

    poly_modulus_degree: int = 8192
    coeff_mod_bit_sizes: tuple[int, ...] = (50, 60, 60)
    # Both parties' vectors are encoded at 2^scale_bits, the factors at 2^factor_scale_bits;
    # one rescale by the 60-bit prime leaves a score at 2^(2 scale_bits + factor_scale_bits
    # - 60) = 2^20 in the 50-bit prime.
    scale_bits: int = 30
    factor_scale_bits: int = 20
    # r_ij is drawn log-uniformly between these powers of two.
    factor_bits: tuple[int, int] = (10, 18)
    # The flooding noise's standard deviation, as a power of two.
    flood_bits: int = 4
    # The scores the scoring party compares each pair's with: 0 (accept or not) first, then
    # any higher ones whose bucket the one-to-one step orders by (docs/research/sealed.md).
    thresholds: tuple[float, ...] = (0.0,)

    def __post_init__(self) -> None:
        ordered = list(self.thresholds) == sorted(set(self.thresholds))
        if not self.thresholds or self.thresholds[0] != 0.0 or not ordered:
            raise ValueError(f"thresholds must rise from 0, got {self.thresholds}")

    @property
    def slots(self) -> int:
        return self.poly_modulus_degree // 2

    @staticmethod
    def ciphertexts(columns: int) -> int:
        """Ciphertexts a batch for `columns` coordinates: two a ciphertext, a slot's real and
        imaginary parts (`scoring.packed`)."""
        return (columns + 1) // 2

    @property
    def threshold_ciphertexts(self) -> int:
        """Ciphertexts a round returns for the thresholds: two thresholds a ciphertext, in a
        slot's real and imaginary parts (`scoring`)."""
        return self.ciphertexts(len(self.thresholds))


# How a ciphertext is written on the wire; the agreement digest covers it in sealed mode.
CIPHERTEXT_FORM = "SEAL 4 save, coefficients packed at their primes' bit widths; keys seeded"

# Every named parameter set a run may agree on (thresholds are agreed apart).
CRYPTO: dict[str, CkksSetting] = {"ckks-8192-q170-conj-x25519": CkksSetting()}
DEFAULT_CRYPTO = "ckks-8192-q170-conj-x25519"
