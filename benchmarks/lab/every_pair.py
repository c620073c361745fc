"""Every pair's sign under encryption, with no blocking keys: the alternative to sealed
linkage's keys that `benchmarks/sealed_every_pair.py` measures (docs/research/sealed.md, "Every
pair, no keys": it links worse and tells the scoring party far more, so the daemons keep the keys).

Blocking by shared keys tells someone which keys meet: on names alone, who is in the peer's
file among the people sharing a key with one's own records (docs/research/privacy.md), and keys that
leak less join fewer of the pairs the linker would link. Scoring every pair needs no keys.
The scoring party encrypts its columns of (x, c) once, one real column a ciphertext and one
own row a slot (`encrypted_blocks`: ceil(rows / slots) blocks); the evaluator multiplies each
by its plaintext coordinates of one peer row at a time, a constant across the slots, which
SEAL encodes without a transform, and sums: slot s then holds s_ij = c_i + <x_i, y_j>, real.
Two peer rows share a returned ciphertext, one in the real parts and one in the imaginary
(the second multiplied by i r'), each slot by its own random positive factor, rescaled once
and flooded as `pprl.protocol.sealed.scoring` does, so the scoring party decrypts r s_ij + e
and keeps the signs: its classifier's accept or reject for every pair. The evaluator holds
only ciphertexts under a key it does not have; the scoring party learns one sign a pair.
The work is pairs x columns / slots constant products (about 0.2 ms each here, SEAL through
sealapi, N = 8192) and the bytes back pairs / (2 slots) evaluated ciphertexts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from tenseal import sealapi as seal

from pprl.protocol.sealed.parameters import CkksSetting
from pprl.protocol.sealed.scoring import (
    EvaluationKeys,
    EvaluatorTools,
    SecretKeys,
    check_received,
    encrypted_columns,
    flood,
)


def blocks(rows: int, setting: CkksSetting) -> int:
    """Blocks of the scoring party's rows, one row a slot."""
    return math.ceil(rows / setting.slots)


def returned_count(rows: int, peer_rows: int, setting: CkksSetting) -> int:
    """Ciphertexts the evaluator returns: per block, one per two peer rows."""
    return blocks(rows, setting) * math.ceil(peer_rows / 2)


def columns_of(x: np.ndarray, c: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
    """(rows, columns) what the scoring party encrypts: x's columns `live`, then c."""
    kept = x if live is None else x[:, live]
    return np.concatenate([kept, c[:, None]], axis=1)


def peer_columns(y: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
    """(peer rows, columns) what the evaluator multiplies them by: y's columns `live`, then
    1 for the constant."""
    kept = y if live is None else y[:, live]
    return np.concatenate([kept, np.ones((len(y), 1))], axis=1)


def encrypted_blocks(keys: SecretKeys, columns: np.ndarray) -> Iterator[list[Any]]:
    """Per block of `keys.setting.slots` rows, one ciphertext per column (real; slot s the
    block's s-th row, 0 beyond the last row), each still to be saved seeded."""
    setting = keys.setting
    encoder = seal.CKKSEncoder(keys.context)
    encryptor = seal.Encryptor(keys.context, keys.secret)
    for block in range(blocks(len(columns), setting)):
        part = columns[block * setting.slots : (block + 1) * setting.slots]
        values = np.zeros((setting.slots, columns.shape[1]))
        values[: len(part)] = part
        yield encrypted_columns(encoder, encryptor, values, 2.0**setting.scale_bits)


def evaluated(
    context: Any,
    keys: EvaluationKeys,
    received: Sequence[Sequence[Any]],
    rows: int,
    peer: np.ndarray,
    setting: CkksSetting,
    rng: np.random.Generator,
) -> Iterator[Any]:
    """The evaluator's side, block by block and two peer rows at a time (a stream need not
    hold them all): Enc(r s_ij + i r' s_ij' + noise) for peer rows j, j' = j + 1 over the
    block's `rows` (its slots beyond them factor 0). ValueError for a block count or a column
    count other than agreed, or a ciphertext that is not a fresh one of the agreed
    parameters."""
    if len(received) != blocks(rows, setting):
        raise ValueError(f"{len(received)} blocks where {blocks(rows, setting)} were agreed")
    tools = EvaluatorTools(context, keys, setting)
    first = context.first_parms_id()
    factor_scale = 2.0**setting.factor_scale_bits
    low, high = setting.factor_bits
    for block, ciphertexts in enumerate(received):
        check_received(context, setting, ciphertexts, peer.shape[1], f"block {block}")
        used = min(setting.slots, rows - block * setting.slots)
        for j in range(0, len(peer), 2):
            total = None
            for part, row in zip((1.0, 1j), peer[j : j + 2], strict=False):
                score = _score(tools, ciphertexts, row)
                factors = np.zeros(setting.slots, dtype=complex)
                factors[:used] = part * 2.0 ** rng.uniform(low, high, used)
                multiplier = tools.plain(factors.tolist(), first, factor_scale)
                tools.evaluator.multiply_plain_inplace(score, multiplier)
                if total is None:
                    total = score
                else:
                    tools.evaluator.add_inplace(total, score)
            assert total is not None
            tools.evaluator.rescale_to_next_inplace(total)
            noise = flood(rng, setting.slots, setting.flood_bits)
            flooding = tools.encrypted(noise, total.parms_id(), total.scale)
            tools.evaluator.add_inplace(total, flooding)
            yield total


def _score(tools: EvaluatorTools, ciphertexts: Sequence[Any], row: np.ndarray) -> Any:
    """sum_d Enc(column d) * row[d], each coordinate a constant plaintext (a product by 0 is
    refused by SEAL, and adds nothing): not rescaled."""
    parms_id, scale = tools.context.first_parms_id(), 2.0**tools.setting.scale_bits
    total, product = None, seal.Ciphertext()
    for d in np.flatnonzero(row).tolist():
        constant = tools.plain(float(row[d]), parms_id, scale)
        if total is None:
            total = seal.Ciphertext()
            tools.evaluator.multiply_plain(ciphertexts[d], constant, total)
        else:
            tools.evaluator.multiply_plain(ciphertexts[d], constant, product)
            tools.evaluator.add_inplace(total, product)
    if total is None:
        raise ValueError("a peer row with every coordinate 0")
    return total


class Signs:
    """The scoring party's accepted pairs, read as the evaluated ciphertexts arrive in the
    evaluator's order (`evaluated`): (rows, peer rows) True where its classifier accepts."""

    def __init__(self, keys: SecretKeys, rows: int, peer_rows: int) -> None:
        self.setting = keys.setting
        self.encoder = seal.CKKSEncoder(keys.context)
        self.decryptor = seal.Decryptor(keys.context, keys.secret)
        self.last = keys.context.last_parms_id()
        self.accepted = np.zeros((rows, peer_rows), dtype=bool)
        self.seen = 0

    def add(self, ciphertext: Any) -> None:
        """The next evaluated ciphertext. ValueError beyond the count agreed, or for one that
        is not an evaluated score of the agreed parameters."""
        rows, peer_rows = self.accepted.shape
        per_block = math.ceil(peer_rows / 2)
        if self.seen >= returned_count(rows, peer_rows, self.setting):
            raise ValueError("more evaluated ciphertexts than the rows agreed")
        if ciphertext.parms_id() != self.last or ciphertext.size() != 2:
            raise ValueError(f"result {self.seen} is not an evaluated score")
        block, pair = divmod(self.seen, per_block)
        plain = seal.Plaintext()
        self.decryptor.decrypt(ciphertext, plain)
        values = np.asarray(self.encoder.decode_complex(plain))
        start = block * self.setting.slots
        span = slice(start, min(rows, start + self.setting.slots))
        used = span.stop - span.start
        self.accepted[span, 2 * pair] = values.real[:used] > 0
        if 2 * pair + 1 < peer_rows:
            self.accepted[span, 2 * pair + 1] = values.imag[:used] > 0
        self.seen += 1

    @property
    def complete(self) -> bool:
        rows, peer_rows = self.accepted.shape
        return self.seen == returned_count(rows, peer_rows, self.setting)
