"""The cryptographic parameters of sealed linkage, named: the agreement carries a name
(`[method] sealed_crypto`), and the name stands for every parameter below, so the digest
covers them all. Kept apart from `scoring` so that reading an agreement does not need the
homomorphic-encryption library.

CKKS at N = 8192 (4,096 slots) with a 200-bit modulus chain: under the 218 bits the
Homomorphic Encryption Standard (2018) allows N = 8192 for 128-bit security; SEAL refuses
chains beyond that bound. Blocking keys are blinded on X25519 (about 128-bit security;
`blinding`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CkksSetting:
    """The agreed encryption parameters and blinding of scores (all in the agreement)."""

    poly_modulus_degree: int = 8192
    coeff_mod_bit_sizes: tuple[int, ...] = (60, 40, 40, 60)
    scale_bits: int = 40
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
CRYPTO: dict[str, CkksSetting] = {"ckks-8192-x25519": CkksSetting()}
DEFAULT_CRYPTO = "ckks-8192-x25519"
