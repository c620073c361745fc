"""The cryptographic parameters of sealed linkage, named: the agreement carries a name
(`[method] sealed_crypto`), and the name stands for every parameter below, so the digest
covers them all. Kept apart from `scoring` so that reading an agreement does not need the
homomorphic-encryption library.

CKKS at N = 8192 (4,096 slots) with a 180-bit modulus chain (60, 30, 30, 60) and a scale of
2^30: under the 218 bits the Homomorphic Encryption Standard (2018) allows N = 8192 for
128-bit security; SEAL refuses chains beyond that bound. The first prime holds the result:
with a scale of 2^40 (the chain 60, 40, 40, 60, the set before 2026-11-26) it left 20 bits
for r (s - t), and a blinded score past about 2^19 in any slot wrapped and garbled the whole
ciphertext (measured: 4,000 pairs, scores up to 7.6, thresholds up to 16, factors up to
2^18: 1% of buckets right); at 2^30 every bucket was right with scores up to 1,500, the sign
errors near a threshold were the same (the flooding's), and a fresh ciphertext is 16%
smaller (279 KB, was 331 KB). Blocking keys are blinded on X25519 (about 128-bit security;
`blinding`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CkksSetting:
    """The agreed encryption parameters and blinding of scores (all in the agreement)."""

    poly_modulus_degree: int = 8192
    coeff_mod_bit_sizes: tuple[int, ...] = (60, 30, 30, 60)
    scale_bits: int = 30
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


# Every named parameter set a run may agree on (thresholds are agreed apart).
CRYPTO: dict[str, CkksSetting] = {"ckks-8192-s30-x25519": CkksSetting()}
DEFAULT_CRYPTO = "ckks-8192-s30-x25519"
