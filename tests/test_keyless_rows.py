"""A peer row may probe with a fallback recipe only as a keyless row does
(pprl.protocol.sealed.keyless_rows): honest rows of both sides pass, a row that keeps its
keys and adds the probing tag is refused."""

from __future__ import annotations

from pprl.protocol.sealed import session
from pprl.protocol.sealed.blinding import Blinder
from pprl.protocol.sealed.keyless_rows import keyless_refusal
from pprl.protocol.sealed.recipes import (
    found_by_key,
    most_keyless_keys,
    parse_recipes,
    recipe_keys,
)

WRITTEN = "dob+given:soundex,dob+surname:soundex,?given:soundex+surname:soundex"
CONTEXT = b"pprl sealed keys|test|run"


def _columns(rows: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    return {name: [row[i] for row in rows] for i, name in enumerate(("dob", "given", "surname"))}


def _twice(first: Blinder, second: Blinder, keys: list[list[str]]) -> list[list[bytes]]:
    counts, once = session.blinded_rows(first, CONTEXT, keys)
    return session.grouped(counts, session.reblinded(second, once, "keys"))


def _check(alice_keys, bob_keys) -> str | None:
    """Alice (the first party) checks Bob's rows, all keys blinded by both."""
    a, b = Blinder(), Blinder()
    own = _twice(a, b, alice_keys)
    flags = [[found_by_key(k, True) for k in row] for row in alice_keys]
    return keyless_refusal(own, flags, _twice(b, a, bob_keys), most_keyless_keys(WRITTEN))


def test_honest_rows_pass_and_a_keyed_row_probing_with_the_fallback_is_refused() -> None:
    recipes = parse_recipes(WRITTEN, ["dob", "given", "surname"])
    alice = _columns([("19800101", "anna", "lee"), ("19700505", "john", "smith")])
    # Bob's second row has no date: keyless, it probes by both names' codes.
    bob = _columns([("19800101", "anna", "lee"), ("", "john", "smith")])
    alice_keys = recipe_keys(alice, recipes, first=True)
    bob_keys = recipe_keys(bob, recipes, first=False)
    assert most_keyless_keys(WRITTEN) == 2
    assert len(bob_keys[1]) == 2  # both tags of the fallback, nothing else
    assert _check(alice_keys, bob_keys) is None
    # Bob's first row keeps its date keys and adds the fallback's probing tag with Anna Lee's
    # codes: the very key every row of Alice's holds for the keyless rows to find.
    probe = alice_keys[0][-1]
    assert found_by_key(probe, True) and probe not in bob_keys[0]
    refusal = _check(alice_keys, [[*bob_keys[0][:2], probe], bob_keys[1]])
    assert refusal is not None and "row 0 probes with a fallback key" in refusal


def test_found_by_tags_are_the_ones_every_row_of_a_side_holds() -> None:
    recipes = parse_recipes(WRITTEN, ["dob", "given", "surname"])
    keys = recipe_keys(_columns([("19800101", "anna", "lee")]), recipes, first=True)[0]
    assert [found_by_key(k, True) for k in keys] == [False, False, True]
    keys = recipe_keys(_columns([("19800101", "anna", "lee")]), recipes, first=False)[0]
    assert [found_by_key(k, False) for k in keys] == [False, False, True]
