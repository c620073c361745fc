"""When a received release counts as the party's own sent back (pprl.protocol.linkage.
reflection), and when the same people released by the peer do not."""

from __future__ import annotations

import numpy as np

from pprl.protocol.linkage import reflection


def _blocks(array: np.ndarray):
    return reflection.blocks(array, len(array))


def test_the_share_counts_rows_equal_to_own_rows_in_any_order() -> None:
    rng = np.random.default_rng(0)
    own = rng.integers(0, 255, size=(10_000, 3, 8), dtype=np.uint8)
    peer = own[rng.permutation(10_000)].copy()
    peer[:2_500] = rng.integers(0, 255, size=(2_500, 3, 8), dtype=np.uint8)
    assert reflection.repeated_share(_blocks(own), _blocks(peer)) == 0.75


def test_without_noise_the_same_people_pass_and_a_mirror_does_not() -> None:
    # Noise-free releases of registers sharing most people repeat many rows legitimately.
    assert not reflection.is_reflected(0.9, noisy=False, own_rows=1000, peer_rows=1000)
    assert not reflection.is_reflected(1.0, noisy=False, own_rows=1000, peer_rows=900)
    assert reflection.is_reflected(1.0, noisy=False, own_rows=1000, peer_rows=1000)
    # Keyed noise differs between the parties: a majority of repeated rows is a mirror.
    assert reflection.is_reflected(0.6, noisy=True, own_rows=1000, peer_rows=700)
    assert not reflection.is_reflected(0.01, noisy=True, own_rows=1000, peer_rows=1000)
