"""The layout of a scoring party's pairs and the shape of its encrypted stream, which the
scorer (its MATCH) and the evaluator (serving that MATCH) both derive from the agreement,
through this module."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pprl.protocol.sealed import hidden_join, session
from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.parameters import CkksSetting


@dataclass(frozen=True)
class ScoreShape:
    """Ciphertexts per batch the scoring party sends and per round the evaluator returns:
    both parties derive them from the agreement, one through this class."""

    # Ciphertexts: x's columns and the constant, then the alternative's, two a ciphertext.
    coordinates: int
    returned: int  # one per two thresholds, then the alternative's score


def score_shape(ckks: CkksSetting, entries: int, live: np.ndarray, alternative: bool) -> ScoreShape:
    """The stream's shape for `scoring_layout`'s columns, which needs no pairs: TRAIN
    projects MATCH's bytes with it."""
    extra = entries + 1 if alternative else 0
    coordinates = ckks.ciphertexts(int(np.count_nonzero(live)) + 1 + extra)
    return ScoreShape(coordinates, ckks.threshold_ciphertexts + int(alternative))


def scoring_layout(
    pairs: np.ndarray,
    ckks: CkksSetting,
    entries: int,
    live: np.ndarray,
    alternative: bool,
    hidden: bool = False,
) -> tuple[Layout, ScoreShape]:
    """The layout of a scoring party's pairs (its row first; with the hidden join its slots,
    entry first) and the shape of its stream, as the scorer and the evaluator both derive
    them: of the `entries` mapping entries' coordinates (the projected vectors' or the
    agreed random features', each with its missing indicator) those `live`
    (linear_form.Peer.live), then the constant, two a ciphertext."""
    shape = score_shape(ckks, entries, live, alternative)
    placed = session.score_layout(pairs, ckks, shape.coordinates, returned=shape.returned)
    if hidden:
        placed = hidden_join.every_slot_ranked(placed)
    return placed, shape
