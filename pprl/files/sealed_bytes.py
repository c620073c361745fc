"""Bytes for sealed linkage's encryption objects. Microsoft SEAL, through TenSEAL's `sealapi`,
saves and loads a key or a ciphertext only through a path, so each goes through a private
temporary file (in memory where the system has /dev/shm) that is removed at once.

Only through `sealapi` does SEAL save a ciphertext encrypted under the secret key in its
seeded form: the second polynomial as the seed it was drawn from, half the bytes of one
encrypted under the public key (pprl/protocol/sealed/scoring.py). A ciphertext goes on the
wire with its coefficients packed at their primes' widths (`packed_ciphertexts`): 10-13% fewer
bytes than SEAL's own compressed form.

The evaluator reads a fresh ciphertext, and the conjugation key, only in that seeded form
(`loaded_ciphertext`, `evaluation_keys`). With a second polynomial of its own choosing and a
public and a conjugation key crafted to match (near zero), a scoring party reads the
evaluator's plaintext coordinates out of the returned ciphertexts, flooding or not
(`benchmarks/lab/crafted_keys_attack.py`); drawn by SEAL from a seed, that polynomial is
pseudo-random and the attack does not apply. The public key is read only seeded too (since
2026-11-29; `scoring.secret_keys` makes it so), so its second polynomial is pseudo-random and
masks the flooding's; a first polynomial of zeros or small values is refused besides
(`evaluation_keys`). No two fresh ciphertexts of a stream may come from one seed
(`FreshCiphertexts`): a shared second polynomial lets a conjugation key crafted for it read
the evaluator's sum (`benchmarks/lab/crafted_conjugation_attack.py`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from pprl.files import packed_ciphertexts
from pprl.protocol.sealed import scoring

# Memory-backed where there is one: each file lives for one save or load.
_DIRECTORY = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@contextmanager
def _scratch() -> Iterator[str]:
    """A private file's name for one save or load, removed afterwards."""
    handle, name = tempfile.mkstemp(prefix="pprl-seal-", dir=_DIRECTORY)
    os.close(handle)
    try:
        yield name
    finally:
        os.unlink(name)


def dumped(item: Any) -> bytes:
    """The bytes of a SEAL object that can save itself (a key, a ciphertext, or a seeded
    ciphertext still to be saved)."""
    with _scratch() as name:
        item.save(name)
        return Path(name).read_bytes()


def loaded(kind: type, context: Any, data: bytes) -> Any:
    """A SEAL object of `kind` (Ciphertext, PublicKey) read from `data` under `context`:
    ValueError when the bytes are not one, or not valid for the context's parameters (SEAL
    checks the parameters' id and every coefficient against its modulus)."""
    with _scratch() as name:
        Path(name).write_bytes(data)
        item = kind()
        try:
            item.load(context, name)
        except Exception as error:  # SEAL raises several kinds for bytes that are not one
            raise ValueError(f"not a {kind.__name__} under the agreed parameters") from error
        return item


def dumped_ciphertext(item: Any, context: Any) -> bytes:
    """The bytes the wire carries for a ciphertext (or a seeded one still to be saved) under
    `context`: SEAL's, with the coefficients packed (`packed_ciphertexts`)."""
    return packed_ciphertexts.packed(dumped(item), _widths(context))


def loaded_ciphertext(context: Any, data: bytes, *, seeded: bool) -> Any:
    """A ciphertext from the bytes `dumped_ciphertext` made: ValueError when they are not one
    under the context's parameters (the packing's shape checked here, the rest by SEAL).
    `seeded`: a fresh one from the scoring party, which must store one polynomial and the
    seed of its second (SEAL draws that polynomial from the seed, so its sender cannot
    choose it); else an evaluated one, two polynomials."""
    return loaded(scoring.Ciphertext, context, _unpacked(context, data, seeded))


def _unpacked(context: Any, data: bytes, seeded: bool) -> bytes:
    """SEAL's bytes of the ciphertext `dumped_ciphertext` packed: ValueError when the packing
    does not fit the context's ring and chain."""
    degree = context.key_context_data().parms().poly_modulus_degree()
    try:
        return packed_ciphertexts.unpacked(data, _widths(context), degree, 1 if seeded else 2)
    except ValueError as error:
        raise ValueError("not a Ciphertext under the agreed parameters") from error


class FreshCiphertexts:
    """Reads one stream's fresh ciphertexts, each seeded (`loaded_ciphertext`), and refuses
    one whose seed an earlier one of the stream was drawn from. SEAL draws a fresh seed for
    every encryption, so an honest stream never repeats one. Ciphertexts that share a seed
    share their second polynomial a; under a conjugation key whose first parts are crafted
    for that a, the conjugated sum then carries the evaluator's plaintext sum conjugated,
    which decrypts beside the score and with it the ratio of two of its linear functions,
    free of the secret factors (`benchmarks/lab/crafted_conjugation_attack.py`, measured). A
    batch is read whole before it is evaluated, so a repeat within one is refused before
    anything of it is computed."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self._seeds: set[bytes] = set()

    def read(self, data: bytes) -> Any:
        """The ciphertext `data` holds: ValueError as `loaded_ciphertext`, or for a seed this
        stream has read before."""
        saved = _unpacked(self.context, data, seeded=True)
        ciphertext = loaded(scoring.Ciphertext, self.context, saved)
        drawn = packed_ciphertexts.seed(saved)
        if drawn in self._seeds:
            raise ValueError("two fresh ciphertexts drawn from one seed")
        self._seeds.add(drawn)
        return ciphertext


def _widths(context: Any) -> list[int]:
    """The bits of each prime of the context's chain, first to last."""
    return [prime.bit_count() for prime in context.key_context_data().parms().coeff_modulus()]


def evaluation_keys(context: Any, public: bytes, conjugation: bytes) -> scoring.EvaluationKeys:
    """The scoring party's public and conjugation keys as the evaluator holds them, loaded
    under `context`: ValueError naming the key that is not one under its parameters."""
    held = []
    for kind, name, data in (
        (scoring.PublicKey, "public", public),
        (scoring.ConjugationKey, "conjugation", conjugation),
    ):
        try:
            held.append(loaded(kind, context, data))
        except ValueError:
            raise ValueError(
                f"the {name} key is not one under the agreed ring and modulus chain"
            ) from None
    if not _seeded_key_set(conjugation):
        raise ValueError("the conjugation key must be sent seeded, as SEAL makes it")
    stored = packed_ciphertexts.coefficients(public)
    if stored.shape[0] != 1:
        raise ValueError("the public key must be sent seeded, its second polynomial from a seed")
    if not _spread(context, stored):
        raise ValueError(
            "the public key's polynomials are not spread over their primes as a key's are"
        )
    return scoring.EvaluationKeys(*held)


# An honest public key's polynomials are uniform modulo each prime (the second drawn from
# its seed, the first the second times the secret key plus a small error), so about 1
# coefficient in 512 lies within a 1,024th of its prime of 0. A polynomial of zeros or of
# small values (the crafted-keys attack's public key of zeros left the flooding's second
# polynomial unmasked; sent seeded, only the first is stored) has nearly all of them there.
_NEAR_ZERO = 1 / 1024
_MOST_NEAR_ZERO = 0.02


def _spread(context: Any, words: np.ndarray) -> bool:
    """Whether each stored polynomial of a public key SEAL loaded (its coefficients,
    `packed_ciphertexts.coefficients`) holds at most _MOST_NEAR_ZERO of them near 0 modulo
    each prime. It does not show the key was made honestly, only that it is not one of the
    degenerate keys measured."""
    primes = [q.value() for q in context.key_context_data().parms().coeff_modulus()]
    if words.shape[1] != len(primes):
        return False
    for j, prime in enumerate(primes):
        part = words[:, j, :]
        near = np.minimum(part, np.uint64(prime) - part) < np.uint64(int(prime * _NEAR_ZERO))
        if np.any(near.mean(axis=1) > _MOST_NEAR_ZERO):
            return False
    return True


def _seeded_key_set(saved: bytes) -> bool:
    """Whether every key of a key set SEAL loaded stores one polynomial and a seed: its
    second polynomials are then SEAL's from seeds, which the sender cannot choose
    (`benchmarks/lab/crafted_keys_attack.py` chose them)."""
    raw = packed_ciphertexts.uncompressed(saved)  # once: the key set is hundreds of KB
    offsets = packed_ciphertexts.key_set_offsets(raw)
    return bool(offsets) and all(
        packed_ciphertexts.stored_polynomials(raw, at) == 1 for at in offsets
    )
