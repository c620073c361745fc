"""Soft linkage for vertical federated learning: per own record, its K best peer records.

FedSim (the second seed's appendix) trains on each record's K most similar peer records and
their similarities instead of one hard match, so that an uncertain linkage still gives the
model the right record among the K. A party writes, per own record, the K peer rows its own
classifier scores highest, whatever their score, with an opaque token for each peer row in
place of the peer's id.

A token is a hash of the run id, the owner's identity and the row of the owner's released
tensor. The holder of the soft file knows that row already (it scored it); the row order is
a secret shuffle drawn per run, so the token says nothing about the owner's ids and does not
follow a record from one run to the next. Only the owner can turn its tokens back into
records (it keeps its own token map), e.g. to serve the features of a requested record
during training.
"""

from __future__ import annotations

import hashlib

import numpy as np

from pprl.protocol.errors import SettingError

TOKEN_HEX = 24  # 96 bits: no two rows of one run share a token in practice


def tokens(run_id: str, owner: str, rows: np.ndarray) -> list[str]:
    """The owner's rows as tokens of this run (both parties compute the same ones)."""
    prefix = f"pprl-soft/{run_id}/{owner}/".encode()
    return [hashlib.sha256(prefix + str(int(row)).encode()).hexdigest()[:TOKEN_HEX] for row in rows]


def check_top_k(top_k: int, peer_records: int) -> None:
    """K peer records per own record need at least K peer records."""
    if top_k < 1:
        raise SettingError(f"soft_top_k must be at least 1, got {top_k}")
    if top_k > peer_records:
        raise SettingError(
            f"soft_top_k = {top_k} asks for more peer records per own record than the peer "
            f"has ({peer_records})"
        )
