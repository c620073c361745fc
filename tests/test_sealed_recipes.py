"""Plaintext key recipes: a key only where every part is present, parts read by their
transform, and recipes that name an unknown attribute or transform refused by name."""

from __future__ import annotations

import pytest

from pprl.protocol.errors import SettingError
from pprl.protocol.sealed.recipes import (
    NEIGHBOUR_LETTERS,
    entry_groups,
    fallback_key,
    group_size,
    most_keys,
    parse_recipes,
    recipe_keys,
    with_prefixes,
)

COLUMNS = {
    "dob": ["19151111", "19151111", "", "1915111"],
    "surname": ["Neumann", "NEUMAN", "Neumann", "Smith"],
    "given": ["michaela", "michaela", "mike", ""],
}


def test_rows_agreeing_on_every_part_share_the_key() -> None:
    recipes = parse_recipes("dob+surname:soundex,dob:year+given:initial", list(COLUMNS))
    keys = recipe_keys(COLUMNS, recipes)
    assert keys[0] == keys[1]  # Neumann and NEUMAN have one Soundex code
    assert len(keys[0]) == 2
    assert keys[2] == []  # no date of birth: neither recipe applies
    # A date that is not eight digits is still a value read exactly, but has no year.
    assert [k.split("|")[0] for k in keys[3]] == ["recipe 0"]


def test_keys_read_a_column_at_a_time_are_each_rows_own_reading() -> None:
    """recipe_keys reads a recipe of one attribute a part a column at a time: the same keys,
    in the same order, as reading each row through Recipe.read_values, blanks, swaps and
    parts of several attributes included."""
    import random

    draw = random.Random(5)
    names = ["Neumann", "neuman", "Smith", "smyth", "Ann", "", " ", "O'Brien"]
    dates = ["19151111", "1915111", "", "20010203"]
    columns = {
        "given": [draw.choice(names) for _ in range(400)],
        "surname": [draw.choice(names) for _ in range(400)],
        "dob": [draw.choice(dates) for _ in range(400)],
    }
    written = (
        "given:soundex+surname:soundex,~given:prefix+surname:prefix,dob+given|surname:soundex,"
        "dob:year+surname:initial,~given+surname,?given:soundex+surname:exact,"
        "=given:soundex+surname:soundex,~=given:prefix+surname"
    )
    recipes = parse_recipes(written, list(columns))
    for first in (True, False):
        keys = recipe_keys(columns, recipes, first=first)
        for row in range(400):
            expected = []
            for number, recipe in enumerate(recipes):
                if recipe.fallback:
                    continue
                found = recipe.read_values(lambda a, t, r=row: t.read(columns[a][r]))
                expected += [f"recipe {number}|{value}" for value in found]
            assert keys[row][: len(expected)] == expected
            assert all(".1|" in k or ".2|" in k for k in keys[row][len(expected) :])
    assert sum(map(len, keys)) > 400  # most rows hold keys


def test_recipes_are_refused_by_name() -> None:
    with pytest.raises(SettingError, match="no attribute 'postcode'"):
        parse_recipes("dob+postcode", list(COLUMNS))
    with pytest.raises(SettingError, match="unknown transform 'metaphone'"):
        parse_recipes("surname:metaphone", list(COLUMNS))
    with pytest.raises(SettingError, match="no key recipe"):
        parse_recipes(" , ", list(COLUMNS))


def test_a_prefix_key_survives_what_changes_a_soundex_code() -> None:
    """FEBRL4's typos change a consonant late in a name ("kynan" to "kynzn"): the Soundex
    code changes, the first three letters do not. Case, spaces and marks are not letters
    read; a name shorter than three letters is read whole, never equal to a longer one's."""
    columns = {
        "given": ["kynan", "Kynzn", "ky nan", "Ky", "ky"],
        "surname": ["dooley", "doolqey", "Doo-ley", "dooley", "DOOLEY"],
    }
    codes = recipe_keys(columns, parse_recipes("given:soundex+surname:soundex", list(columns)))
    assert codes[0] != codes[1]
    prefixes = recipe_keys(columns, parse_recipes("given:prefix+surname:prefix", list(columns)))
    assert prefixes[0] == prefixes[1] == prefixes[2] == ["recipe 0|KYN\x1fDOO"]
    assert prefixes[3] == prefixes[4] == ["recipe 0|KY\x1fDOO"]


def test_a_suffix_key_survives_a_typo_in_the_first_letters() -> None:
    """A typo among a name's first letters ("emma" and "imma", "ebert" and "bebert") changes
    both its code and its prefix; the last three letters stay, read as a prefix is."""
    columns = {
        "given": ["emma", "imma", "EM-MA", "em"],
        "surname": ["ebert", "bebert", "e bert", "ebert"],
    }
    for transform in ("soundex", "prefix"):
        other = recipe_keys(
            columns, parse_recipes(f"given:{transform}+surname:{transform}", ["given", "surname"])
        )
        assert other[0] != other[1]
    suffixes = recipe_keys(columns, parse_recipes("given:suffix+surname:suffix", list(columns)))
    assert suffixes[0] == suffixes[1] == suffixes[2] == ["recipe 0|MMA\x1fERT"]
    assert suffixes[3] == ["recipe 0|EM\x1fERT"]


def test_the_wider_keys_add_a_prefix_twin_of_each_soundex_recipe_only() -> None:
    attributes = ["dob", "surname", "given"]
    recipes = parse_recipes("given:soundex+surname:soundex,dob+surname:soundex", attributes)
    wider = with_prefixes(recipes)
    assert list(wider) == [
        "given:soundex+surname:soundex",
        "dob:exact+surname:soundex",
        "given:prefix+surname:prefix",
    ]
    assert with_prefixes(parse_recipes(",".join(wider), attributes)) == wider  # nothing twice
    assert with_prefixes(parse_recipes("dob+surname:soundex", attributes))[1:] == ()


def test_a_part_read_from_either_attribute_joins_swapped_names() -> None:
    """FEBRL4 swaps given name and surname in about one pair in fifteen: `given|surname` keys
    each of the two codes under one recipe, so the swapped pair shares a key, as does a pair
    that agrees on one name only; a pair that agrees on no name does not."""
    columns = {
        "dob": ["19151111", "19151111", "19151111", "19151111", "19151111", "19151111"],
        "given": ["joselyn", "dakin", "joselyn", "kate", "joselyn", ""],
        "surname": ["dakin", "joselyn", "smith", "smith", "joselyn", ""],
    }
    recipes = parse_recipes("dob+given|surname:soundex", list(columns))
    assert recipes[0].text == "dob:exact+given|surname:soundex"
    assert recipes[0].attributes == ("dob", "given", "surname")
    keys = [set(row) for row in recipe_keys(columns, recipes)]
    assert len(keys[0]) == 2 and keys[0] == keys[1]  # swapped
    assert keys[0] & keys[2] and not keys[0] & keys[3]  # one name; no name
    assert len(keys[4]) == 1  # the same code twice is one key
    assert keys[5] == set()  # no name at all: no key
    with pytest.raises(SettingError, match="named twice"):
        parse_recipes("dob+given|given:soundex", list(columns))
    with pytest.raises(SettingError, match="no attribute 'middle'"):
        parse_recipes("dob+given|middle:soundex", list(columns))


def test_an_unordered_recipe_gives_swapped_names_one_key_and_no_other() -> None:
    """`~given:soundex+surname:soundex` reads the two codes as a set: a pair whose names were
    swapped between the fields shares its key (the ordered recipe gives it none), each row
    still holds one key, and a pair agreeing on one name only shares nothing, unlike the
    either-attribute part above. The marker survives writing, the prefixed twin and `?`."""
    columns = {
        "given": ["joselyn", "dakin", "joselyn"],
        "surname": ["dakin", "joselyn", "smith"],
    }
    ordered = [
        set(r)
        for r in recipe_keys(columns, parse_recipes("given:soundex+surname:soundex", list(columns)))
    ]
    recipes = parse_recipes("~given:soundex+surname:soundex", list(columns))
    assert recipes[0].unordered and recipes[0].text == "~given:soundex+surname:soundex"
    keys = [set(row) for row in recipe_keys(columns, recipes)]
    assert not ordered[0] & ordered[1] and keys[0] == keys[1]
    assert [len(k) for k in keys] == [1, 1, 1] and not keys[0] & keys[2]
    assert with_prefixes(recipes) == (
        "~given:soundex+surname:soundex",
        "~given:prefix+surname:prefix",
    )
    both = parse_recipes("given:exact,?~given:soundex+surname:soundex", list(columns))
    assert both[1].fallback and both[1].unordered
    assert both[1].text == "?~given:soundex+surname:soundex"


def test_a_recipe_whose_blanks_agree_joins_rows_blank_alike_and_no_other() -> None:
    """`=given:soundex+surname:soundex`: two rows whose given name is blank share the key
    when their surnames' codes agree (the plain recipe gives them none), a blank never agrees
    with a value, and a row blank in every part holds no key. Marks go in one order."""
    columns = {
        "given": ["", " ", "ann", "", ""],
        "surname": ["smith", "SMYTH", "smith", "", "jones"],
    }
    plain = recipe_keys(columns, parse_recipes("given:soundex+surname:soundex", list(columns)))
    recipes = parse_recipes("=given:soundex+surname:soundex", list(columns))
    assert recipes[0].blanks and recipes[0].text == "=given:soundex+surname:soundex"
    keys = [set(row) for row in recipe_keys(columns, recipes)]
    assert not plain[0] and not plain[1]
    assert keys[0] == keys[1] and len(keys[0]) == 1
    assert not keys[0] & keys[2] and not keys[0] & keys[4]
    assert keys[3] == set()
    # In either order too: a blank given name and a blank surname around one code agree.
    swapped = {"given": ["", "smith"], "surname": ["smith", ""]}
    both = recipe_keys(swapped, parse_recipes("~=given:soundex+surname:soundex", list(swapped)))
    assert set(both[0]) == set(both[1])
    # Its prefixed twin does not let blanks agree, so the default names' keys need no wider.
    default = parse_recipes(
        "~=given:soundex+surname:soundex,~given:prefix+surname:prefix", list(columns)
    )
    assert with_prefixes(default) == tuple(r.text for r in default)
    for wrong in ("=~given:soundex+surname:soundex", "==given+surname", "=?given+surname"):
        with pytest.raises(SettingError, match="marks once each, in the order"):
            parse_recipes(f"surname,{wrong}", list(columns))


def test_a_fallback_joins_a_pair_only_through_a_row_no_other_recipe_keys() -> None:
    """`?given:soundex+surname:soundex` beside a date recipe: a row without a date probes the
    other side's rows by its names and is found by them, from either side; two rows that both
    have a date and share only their names do not join, as they would by an ordinary key."""
    recipes = parse_recipes("dob+surname:soundex,?given:soundex+surname:soundex", list(COLUMNS))
    assert recipes[1].fallback and recipes[1].text == "?given:soundex+surname:soundex"
    dated = {"dob": ["19151111"], "given": ["michaela"], "surname": ["neumann"]}
    other_date = {"dob": ["19990101"], "given": ["michaela"], "surname": ["neumann"]}
    blank = {"dob": [""], "given": ["michaela"], "surname": ["neumann"]}

    def joined(first: dict, second: dict) -> bool:
        ours = set(recipe_keys(first, recipes, first=True)[0])
        theirs = set(recipe_keys(second, recipes, first=False)[0])
        return bool(ours & theirs)

    assert joined(blank, dated) and joined(dated, blank) and joined(blank, blank)
    assert not joined(dated, other_date) and not joined(other_date, dated)
    # Each side holds the fallback twice: for its keyless rows the probe tag and the target,
    # for the others the target tag only.
    assert len(recipe_keys(blank, recipes, first=True)[0]) == 2
    assert len(recipe_keys(dated, recipes, first=True)[0]) == 2  # its date key and a target
    with pytest.raises(ValueError, match="side"):
        recipe_keys(blank, recipes)
    with pytest.raises(SettingError, match="only fallback"):
        parse_recipes("?given:soundex+surname:soundex", list(COLUMNS))


def test_a_row_keyed_only_where_its_blanks_agree_probes_by_a_fallback() -> None:
    """`=given:soundex+surname:soundex` gives a row with a blank given name a key (its blank
    agrees with another's), but from no value it holds beyond the surname: it still probes
    the peer by `?surname:soundex`, and so finds the peer's row whose given name is present;
    a row keyed from both names does not probe."""
    recipes = parse_recipes("=given:soundex+surname:soundex,?surname:soundex", list(COLUMNS))
    blank = {"dob": [""], "given": [""], "surname": ["neumann"]}
    named = {"dob": [""], "given": ["michaela"], "surname": ["neumann"]}
    other = {"dob": [""], "given": ["mike"], "surname": ["neumann"]}
    ours = recipe_keys(blank, recipes, first=True)[0]
    theirs = recipe_keys(named, recipes, first=False)[0]
    assert len(ours) == 3  # the blanks' key, the probe and the target
    shared = set(ours) & set(theirs)
    assert len(shared) == 1 and fallback_key(shared.pop())
    # Two rows with both names present hold their key and a target only: the surname alone
    # joins neither way.
    assert len(recipe_keys(named, recipes, first=True)[0]) == 2
    assert not set(recipe_keys(named, recipes, True)[0]) & set(
        recipe_keys(other, recipes, False)[0]
    )
    assert not set(recipe_keys(other, recipes, True)[0]) & set(theirs)


def test_the_most_keys_a_row_can_hold_bound_what_a_peer_may_send() -> None:
    """A keyed row holds a fallback's keys under one tag, a keyless row under both: the bound
    is the larger of the two, reached by an honest row, and leaves no spare place."""
    written = "dob+given|surname:soundex,given:soundex+surname:soundex,?given|surname:initial"
    assert most_keys(written) == 2 + 1 + 2
    columns = {"dob": ["19151111", ""], "given": ["ann", "bob"], "surname": ["lee", "kay"]}
    recipes = parse_recipes(written, list(columns))
    held = [len(row) for first in (True, False) for row in recipe_keys(columns, recipes, first)]
    assert max(held) == most_keys(written)
    # A row keyed only where its blanks agree holds those keys and the fallback's twice.
    blanks = "=given:soundex+surname:soundex,?surname:initial"
    columns = {"given": ["", "ann"], "surname": ["lee", "kay"]}
    recipes = parse_recipes(blanks, list(columns))
    held = [len(row) for first in (True, False) for row in recipe_keys(columns, recipes, first)]
    assert max(held) == most_keys(blanks) == 1 + 2 * 1


def test_names_one_edit_apart_share_a_neighbours_key_wherever_the_edit_falls() -> None:
    """A typo in a name's first letter changes its code and its first letters, so neither
    the code's nor the prefix's recipe joins the pair; one-edit neighbours do, and names two
    substitutions apart share none."""
    recipes = parse_recipes("given:neighbours+surname:soundex", ["given", "surname"])
    pairs = {
        "substitution, first letter": ("Katherine", "Gatherine"),
        "insertion": ("Jon", "John"),
        "deletion, last letter": ("Michaela", "Michael"),
        "transposition": ("Ahmed", "Ahemd"),
        "case and spacing": (" maria", "MARIA"),
    }
    for kind, (a, b) in pairs.items():
        keys = recipe_keys({"given": [a, b], "surname": ["Lee", "LEA"]}, recipes)
        assert set(keys[0]) & set(keys[1]), kind
    for a, b in (("Katherine", "Gatherina"), ("Jon", "Ian")):
        keys = recipe_keys({"given": [a, b], "surname": ["Lee", "Lee"]}, recipes)
        assert not set(keys[0]) & set(keys[1]), (a, b)
    # The surname's code must agree too; a blank given name holds no key.
    keys = recipe_keys({"given": ["Jon", "Jon", ""], "surname": ["Lee", "Kay", "Lee"]}, recipes)
    assert not set(keys[0]) & set(keys[1]) and keys[2] == []
    # A long name spreads over its first NEIGHBOUR_LETTERS letters only, the bound a peer's
    # row is held to.
    long = recipe_keys({"given": ["Bartholomewsonius"], "surname": ["Lee"]}, recipes)[0]
    assert len(long) == NEIGHBOUR_LETTERS + 1 == most_keys("given:neighbours+surname:soundex")


def test_a_rows_neighbours_keys_are_one_entry_padded_to_the_group_size() -> None:
    written = "given:soundex+surname:soundex,given:neighbours+surname:soundex,given:exact"
    recipes = parse_recipes(written, ["given", "surname"])
    assert group_size(written) == NEIGHBOUR_LETTERS + 1 and group_size("given:exact") == 1
    assert most_keys(written) == 1 + NEIGHBOUR_LETTERS + 1 + 1
    keys = recipe_keys({"given": ["Anna", "Ann"], "surname": ["Lee", "Lee"]}, recipes)
    groups = [entry_groups(row) for row in keys]
    # Each row: its code's key alone, its exact name alone, its neighbours together.
    assert [sorted(map(len, g)) for g in groups] == [[1, 1, 4], [1, 1, 3]]
    assert all(len({k.split("|")[0] for k in g}) == 1 for row in groups for g in row)
