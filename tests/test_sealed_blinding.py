"""Blinded blocking keys: the doubly blinded join finds exactly the pairs the plaintext keys
share, in one run only, and malformed or unblinded values are refused by name."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pprl.protocol.sealed.blinding import (
    POINT_BYTES,
    Blinder,
    BlindingError,
    hashed,
    returned,
    split,
)
from pprl.protocol.sealed.shared_keys import block_sizes, shared_key_pairs

CONTEXT = b"agreement digest|run 1"


def _rows(rng: random.Random, count: int, vocabulary: int, per_row: int) -> list[list[str]]:
    return [[f"k{rng.randrange(vocabulary)}" for _ in range(per_row)] for _ in range(count)]


def _exchange(
    alice: Blinder,
    bob: Blinder,
    keys_a: list[list[str]],
    keys_b: list[list[str]],
    context_b=CONTEXT,
) -> tuple[list[list[bytes]], list[list[bytes]]]:
    """Alice's view: her rows' and Bob's rows' doubly blinded keys, as the wire would give
    them (flat lists, re-grouped by the row counts each side knows)."""
    flat_a = [k for row in keys_a for k in row]
    sent = alice.blind_keys(CONTEXT, flat_a)
    back = returned(sent, b"".join(bob.reblind(sent)))  # Bob re-blinds Alice's values
    bobs = alice.reblind(bob.blind_keys(context_b, [k for row in keys_b for k in row]))

    def grouped(values: list[bytes], rows: list[list[str]]) -> list[list[bytes]]:
        out, at = [], 0
        for row in rows:
            out.append(values[at : at + len(row)])
            at += len(row)
        return out

    return grouped(back, keys_a), grouped(bobs, keys_b)


def _plain_pairs(keys_a: list[list[str]], keys_b: list[list[str]]) -> set[tuple[int, int]]:
    return {(i, j) for i, a in enumerate(keys_a) for j, b in enumerate(keys_b) if set(a) & set(b)}


def test_blinding_commutes_and_depends_on_both_scalars() -> None:
    alice, bob, carol = Blinder(), Blinder(), Blinder()
    keys = ["S530|J", "J500|1970", "S530|J"]
    ab = bob.reblind(alice.blind_keys(CONTEXT, keys))
    ba = alice.reblind(bob.blind_keys(CONTEXT, keys))
    assert ab == ba
    assert ab[0] == ab[2] and ab[0] != ab[1]
    # Without Bob's scalar, Alice's own blinding of a guess is not the doubly blinded value.
    assert alice.blind_keys(CONTEXT, ["S530|J"])[0] != ab[0]
    assert carol.reblind(alice.blind_keys(CONTEXT, keys)) != ab


def test_the_blinded_join_is_the_plaintext_join() -> None:
    rng = random.Random(5)
    keys_a, keys_b = _rows(rng, 300, 400, 3), _rows(rng, 250, 400, 3)
    own, peer = _exchange(Blinder(), Blinder(), keys_a, keys_b)
    pairs = shared_key_pairs(own, peer)
    expected = _plain_pairs(keys_a, keys_b)
    assert len(expected) > 100
    assert {(int(i), int(j)) for i, j in pairs} == expected
    assert len(pairs) == len(expected)  # unique


def test_keys_blinded_for_another_run_match_nothing() -> None:
    rng = random.Random(6)
    keys = _rows(rng, 50, 30, 2)
    own, peer = _exchange(Blinder(), Blinder(), keys, keys, context_b=b"agreement digest|run 2")
    assert len(shared_key_pairs(own, peer)) == 0
    assert hashed(CONTEXT, ["x"]) != hashed(b"agreement digest|run 2", ["x"])


def test_block_sizes_count_how_many_rows_hold_each_key() -> None:
    rows = [[b"a", b"b"], [b"a"], [b"a", b"a"], [b"c"]]
    assert block_sizes(rows) == {3: 1, 1: 2}


def test_replayable_blinder_is_the_same_scalar() -> None:
    secret = bytes(range(32))
    assert Blinder.from_secret(secret).blind_keys(CONTEXT, ["k"]) == Blinder.from_secret(
        secret
    ).blind_keys(CONTEXT, ["k"])


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (bytes(POINT_BYTES), "small order"),  # u = 0, order 2
        ((1).to_bytes(POINT_BYTES, "little"), "small order"),  # u = 1, order 4 on the twist
        (b"short", "5 bytes"),
    ],
)
def test_bad_values_are_refused_by_position(value: bytes, words: str) -> None:
    good = Blinder().blind_keys(CONTEXT, ["k"])[0]
    with pytest.raises(BlindingError, match=rf"value 1: .*{words}"):
        Blinder().reblind([good, value])


def test_a_wrong_count_and_an_unblinded_return_are_refused() -> None:
    sent = Blinder().blind_keys(CONTEXT, ["a", "b", "c"])
    with pytest.raises(BlindingError, match="64 bytes where 3 blinded values"):
        split(b"".join(sent[:2]), 3, "received keys")
    echoed = [Blinder().reblind(sent[:1])[0], sent[1], Blinder().reblind(sent[2:])[0]]
    with pytest.raises(BlindingError, match="value 1: returned unblinded"):
        returned(sent, b"".join(echoed))
    assert np.array_equal(shared_key_pairs([], []), np.empty((0, 2), dtype=np.int64))
