"""MATCH's cost told before it is paid: the slots, batches and bytes of the layout the parties
will send, projected from a simulated join before anything is sent, and a warning when the
keys' look-alikes make MATCH grow with the product of the files."""

from __future__ import annotations

import numpy as np

from pprl.party.phases.words import match_cost_words
from pprl.protocol.sealed import match_cost
from pprl.protocol.sealed.layout import (
    FRESH_BYTES,
    RETURNED_BYTES,
    best_rounds,
    candidate_counts,
    layout,
)
from pprl.protocol.sealed.match_cost import MatchCost, of_counts, of_layout, projected


def _pairs(rng: np.random.Generator, own: int, peer: int, count: int) -> np.ndarray:
    drawn = np.stack([rng.integers(0, own, count), rng.integers(0, peer, count)], axis=1)
    return np.unique(drawn, axis=0)


def test_the_cost_of_counts_is_the_cost_of_the_layout_built_from_the_pairs() -> None:
    """What TRAIN projects from counts alone is what MATCH's layout will send: the same
    slots, batches and bytes (a ciphertext out per coordinate and batch, `returned` back per
    round)."""
    rng = np.random.default_rng(5)
    pairs = np.unique(
        np.concatenate([_pairs(rng, 900, 900, 1500), _pairs(rng, 30, 900, 600)]), axis=0
    )
    slots, coordinates, returned = 64, 27, 6
    placed = layout(pairs, slots, best_rounds(pairs, slots, coordinates, returned))
    built = of_layout(placed, pairs, coordinates, returned)
    counted = of_counts(candidate_counts(pairs), slots, coordinates, returned)
    assert built == counted
    rounds = sum(placed.batch_rounds(b) for b in range(placed.batches))
    expected = placed.batches * coordinates * FRESH_BYTES + rounds * returned * RETURNED_BYTES
    assert built.bytes_both_ways == expected * 1000
    assert built.slots == len(placed.rows) and built.batches == placed.batches
    assert built.candidates == len(pairs)


def test_the_hidden_join_takes_a_slot_a_candidate() -> None:
    counts = np.array([3, 1, 0, 7, 2])
    cost = of_counts(counts, 4, 10, 2, hidden=True)
    assert cost.slots == cost.candidates == 13
    assert cost.batches == 4  # ceil(13 / 4)
    assert cost.bytes_both_ways == (4 * 10 * FRESH_BYTES + 4 * 2 * RETURNED_BYTES) * 1000


def test_look_alikes_beyond_the_partner_make_the_cost_quadratic() -> None:
    """A record with its partner and a rare look-alike (names and a date) is linear; one
    with dozens sharing its key (names alone at scale) is not."""
    linear = of_counts(np.array([1] * 90 + [2] * 10), 4096, 20, 6)
    crowded = of_counts(np.array([40] * 100), 4096, 20, 6)
    assert abs(linear.lookalikes - 0.1) < 1e-9
    assert not linear.quadratic
    assert crowded.quadratic and crowded.lookalikes == 39


def test_the_projection_grows_with_the_peer_and_repeats_the_sample_to_the_own_file() -> None:
    """Against a peer twice as large each record has twice the candidates; an own file ten
    times the sample has ten times its candidates."""
    sampled = np.array([1, 2, 0, 3, 1, 1, 4, 2, 1, 1] * 50)
    base = projected(sampled, 1000, 500, 1000, 4096, 20, 6)
    wider = projected(sampled, 1000, 500, 2000, 4096, 20, 6)
    larger = projected(sampled, 1000, 5000, 1000, 4096, 20, 6)
    assert base.candidates == int(sampled.sum())
    assert wider.candidates == 2 * base.candidates
    assert larger.candidates == 10 * base.candidates
    assert larger.bytes_both_ways > base.bytes_both_ways
    # The look-alikes from the pair counts, when the slots are the hidden join's.
    hidden = projected(3 * sampled, 1000, 500, 1000, 4096, 20, 6, True, sampled)
    assert hidden.slots == 3 * int(sampled.sum())
    assert abs(hidden.lookalikes - (sampled[sampled > 0].mean() - 1)) < 1e-9


def test_the_words_warn_only_of_a_quadratic_match_and_name_the_remedies() -> None:
    calm = MatchCost(442_737, 450_000, 82, 988_000_000, 900.0, 0.1)
    said = match_cost_words(calm, projected=True)
    assert "442,737 candidate pairs" in said and "450,000 slots" in said
    assert "1.0 GB" in said and "15 min" in said and "WARNING" not in said
    crowded = MatchCost(9_000_000, 9_000_000, 2200, 30_000_000_000, 18_000.0, 36.0)
    warned = match_cost_words(crowded, projected=False)
    assert "WARNING" in warned and "36 look-alikes" in warned
    assert "date of birth" in warned and "split both files" in warned and "5.0 h" in warned
    assert match_cost.QUADRATIC_LOOKALIKES <= 36
