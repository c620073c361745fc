"""A model of an evaluator that returns ciphertexts of its own making: how much of the scoring
party's secret key the signs of their decryptions give away. A model, not SEAL: plain ring
arithmetic in numpy at SEAL's ring, not a run of either party.

The scoring party decrypts each returned ciphertext (c0, c1) to m = c0 + c1 s, with s its
secret key (SEAL draws it uniformly from {-1, 0, 1} in each of the N coefficients), decodes m
to N / 2 complex slots (the canonical embedding: m evaluated at N / 2 primitive 2N-th roots
of unity, no two conjugate) and acts on the signs it reads (the slots it names, the pairs it
links). An evaluator that returns c0 = 0 and c1 = a, a ternary polynomial of its choosing,
makes each of those signs the sign of a linear function of s that it knows. Here it learns
every sign of the real and imaginary parts of every slot (an upper bound on what the
scorer's actions tell), `rounds` such ciphertexts, N signs each, and estimates s by the
linear estimator of one-bit measurements (the sum of each measurement's functional times
its sign), calling the third of the coefficients nearest 0 zero. With `bits`, it learns only
that many of one ciphertext's N signs, drawn at random: what it can read of the scorer's
actions while the checks miss it (docs/research/sealed.md, "Checks of the evaluator").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KeyEstimate:
    """How the estimate matches the secret key: the share of its coefficients guessed right
    (a guess of all zeros gets about 1/3), and of its non-zero ones the share whose sign is
    right (a guess gets 1/2)."""

    signs_per_coefficient: float
    coefficients_right: float
    signs_right_where_not_zero: float


class Ring:
    """Z[X] / (X^N + 1) over the reals, and the canonical embedding at N / 2 of its roots."""

    def __init__(self, degree: int) -> None:
        self.degree = degree
        self.twist = np.exp(1j * np.pi * np.arange(degree) / degree)

    def times(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The negacyclic product a b."""
        product = np.fft.ifft(np.fft.fft(a * self.twist) * np.fft.fft(b * self.twist))
        return np.real(product / self.twist)

    def transpose_times(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        """(multiplication by a)^T applied to g: multiplication by a(X^-1)."""
        reversed_a = np.concatenate([a[:1], -a[:0:-1]])
        return self.times(reversed_a, g)

    def slots(self, m: np.ndarray) -> np.ndarray:
        """m at the roots zeta^(2j + 1), j < N / 2 (zeta = exp(i pi / N)): no two conjugate."""
        return (np.fft.ifft(m * self.twist) * self.degree)[: self.degree // 2]

    def slots_transpose(self, w: np.ndarray) -> np.ndarray:
        """The gradient in m of sum_j Re(conj(w_j) slots(m)_j): the transpose of `slots`
        taken as a real map, for weights w."""
        full = np.zeros(self.degree, dtype=complex)
        full[: self.degree // 2] = np.conj(w)
        return np.real(self.twist * self.degree * np.fft.ifft(full))


def estimate(
    degree: int,
    rounds: int,
    rng: np.random.Generator,
    signs_known: bool = True,
    bits: int | None = None,
) -> KeyEstimate:
    """A ternary secret of `degree` coefficients estimated from `rounds` crafted ciphertexts'
    signs (`signs_known` False: each sign replaced by a coin's, the estimator's baseline;
    `bits`: only that many signs of each ciphertext, the others unread)."""
    if bits is not None and not 0 < bits <= degree:
        raise ValueError(f"bits must lie in 1..{degree}, got {bits}")
    ring = Ring(degree)
    secret = rng.integers(-1, 2, degree).astype(float)
    total = np.zeros(degree)
    for _ in range(rounds):
        a = rng.integers(-1, 2, degree).astype(float)
        values = ring.slots(ring.times(a, secret))
        if not signs_known:
            values = rng.normal(size=len(values)) + 1j * rng.normal(size=len(values))
        signs = np.sign(values.real) + 1j * np.sign(values.imag)
        if bits is not None:
            read = np.zeros(degree, dtype=bool)  # the real parts' signs, then the imaginary
            read[rng.choice(degree, bits, replace=False)] = True
            half = degree // 2
            signs = signs.real * read[:half] + 1j * signs.imag * read[half:]
        total += ring.transpose_times(a, ring.slots_transpose(signs))
    guess = np.sign(total)
    guess[np.argsort(np.abs(total))[: degree // 3]] = 0
    nonzero = secret != 0
    return KeyEstimate(
        signs_per_coefficient=rounds * (bits or degree) / degree,
        coefficients_right=float(np.mean(guess == secret)),
        signs_right_where_not_zero=float(np.mean(np.sign(total[nonzero]) == secret[nonzero])),
    )
