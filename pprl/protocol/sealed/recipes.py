"""Blocking keys from a party's own plaintext: recipes that combine several attributes, each
read exactly or through a transform (a phonetic code, a date's year), so that two records
share a key only when they agree on every part of a recipe.

Why combinations: the join of blinded keys tells a party which of its own keys each peer row
holds, so a key on one attribute gives away the peer's value wherever it is also the party's
(measured in docs/research/sealed.md: 60-78% of FEBRL4's peer rows without a partner, for places and
names). A key that needs a date of birth and a surname's code to agree is shared by rows
without a partner about once in a thousand. A recipe is written `attribute[:transform]` joined
by `+`, e.g. `date_of_birth+surname:soundex`. A part may name several attributes separated by
`|`, read through the same transform: a row then holds one key per value among them, so
`date_of_birth+given_name|surname:soundex` joins a pair whose names were swapped between the
fields as well as one that agrees on either name.

A recipe written with a leading `~` (after any `?`) takes its parts' values in either order:
`~given_name:soundex+surname:soundex` gives a pair whose names were swapped between the
fields the same key, at the cost of joining "A B" with "B A" (FEBRL4 names: a non-private
linker links 257 of the 295 swapped pairs no ordered key joins; docs/research/sealed.md).

A recipe written with a leading `?` is a fallback: only a row that no other recipe gives a
key (its date of birth blank, say), or a key only where its blanks agree (below), looks for
the peer's rows with it, and the peer's rows are found by it whatever their other keys. So
each side holds it twice, under two tags, one per direction: the first party (the lower
identity) sends the first tag for its keyless rows only and the second tag for every row,
the second party the other way round. A pair joins when either of its rows is keyless, and
the join tells only the keyless rows' neighbours, where the same recipe as an ordinary one
would tell every row's (docs/research/sealed.md, "Fallback keys").

A part read through `neighbours` reads a name as itself and as each of its one-letter
deletions (its first NEIGHBOUR_LETTERS letters): two names one edit apart share one of them,
wherever the edit falls, so `given_name:neighbours+surname:soundex` joins a pair whose given
name has a typo in its first letters (which changes both its code and its prefix) while its
surname's code agrees. A row holds one key per deletion, and two rows with the same name
share them all; so under the hidden join a row's keys of such a recipe travel as one entry
(`entry_groups`), padded to the recipe's most keys, and the evaluator fills one slot per row
of its that holds any of them (docs/research/sealed.md, "Names one edit apart").

A recipe written with a leading `=` (after any `?` and `~`) lets blanks agree: a blank part
reads as a value of its own, so two rows blank in the same field share the key when their
other parts agree, and a row blank in every part holds none. Why: on names alone a pair whose
given name is blank on both sides holds no key otherwise, though the other name is the same
(FEBRL4 names: 91 of the pairs the non-private linker links; docs/research/sealed.md, "Blank
names").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import jellyfish

from pprl.protocol.errors import SettingError

# Letters a prefix or suffix key reads: three keep a key shared by few people without a
# partner.
PREFIX = 3
# What a fallback recipe is written with, first.
FALLBACK = "?"
# What a recipe whose parts may come in either order is written with (after any FALLBACK).
UNORDERED = "~"
# What a recipe whose blanks agree is written with (after any FALLBACK and UNORDERED).
BLANKS_AGREE = "="
# A blank part's value in a recipe whose blanks agree: no transform reads a value to it.
BLANK = "\x00"
# Letters of a name its one-edit neighbours are read from: a longer name's deletions past
# them would add keys a row without finding more pairs (both sides read the same letters).
NEIGHBOUR_LETTERS = 12
# What ends the tag of a recipe whose keys of one row travel as one entry (`entry_groups`).
GROUPED = "*"


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def _letters(value: str) -> str:
    return "".join(ch for ch in value.upper() if ch.isalpha())


def _one_edit(value: str) -> tuple[str, ...]:
    """A name and each of its one-letter deletions: two names one substitution, insertion or
    deletion apart share at least one."""
    return tuple(sorted({value, *(value[:i] + value[i + 1 :] for i in range(len(value)))}))


@dataclass(frozen=True)
class Transform:
    """How one part of a recipe reads a value; "" means the part is missing. `spread`, where
    set, turns the read value into several (each a key of its own)."""

    name: str
    read: Callable[[str], str]
    spread: Callable[[str], tuple[str, ...]] | None = None
    most: int = 1  # the most values one read value spreads to
    reading: str = ""  # what two values sharing its key have in common, for a custodian

    def values(self, value: str) -> tuple[str, ...]:
        """What a read value stands for: itself, or its spread."""
        return self.spread(value) if self.spread and value else (value,)


TRANSFORMS = {
    t.name: t
    for t in (
        Transform("exact", lambda v: v.strip().upper(), reading="same value"),
        # American Soundex, as jellyfish computes it (a maintained implementation of the
        # standard code, rather than one of our own).
        Transform(
            "soundex",
            lambda v: jellyfish.soundex(v.strip()) if v.strip() else "",
            reading="same Soundex code",
        ),
        Transform("initial", lambda v: v.strip()[:1].upper(), reading="same initial"),
        # The first three letters: survives the errors that change a Soundex code (a changed
        # consonant, a letter inserted late in the name), which fall mostly after them.
        Transform("prefix", lambda v: _letters(v)[:PREFIX], reading="same first letters"),
        # The last three letters: survives a typo in a name's first letters, which changes
        # both the code and the prefix (an option: it joins more look-alikes than either;
        # docs/research/sealed.md, "Blank names").
        Transform("suffix", lambda v: _letters(v)[-PREFIX:], reading="same last letters"),
        # A name and its one-letter deletions (its first NEIGHBOUR_LETTERS letters): a typo
        # anywhere, even in the first letter, leaves one shared (docs/research/sealed.md, "Names one
        # edit apart").
        Transform(
            "neighbours",
            lambda v: _letters(v)[:NEIGHBOUR_LETTERS],
            _one_edit,
            NEIGHBOUR_LETTERS + 1,
            reading="at most one edit apart",
        ),
        # A date's digits in year-month-day order (the canonical form), read in parts.
        Transform(
            "year",
            lambda v: _digits(v)[:4] if len(_digits(v)) == 8 else "",
            reading="same year",
        ),
        Transform(
            "month-day",
            lambda v: _digits(v)[4:] if len(_digits(v)) == 8 else "",
            reading="same month and day",
        ),
    )
}


@dataclass(frozen=True)
class Recipe:
    """Parts that must all agree; each the attributes it may read (one, or any of several)
    and their transform."""

    parts: tuple[tuple[tuple[str, ...], Transform], ...]
    fallback: bool = False  # only for rows no other recipe keys (the module's docstring)
    unordered: bool = False  # the parts' values as a set: a pair with them swapped shares it
    blanks: bool = False  # a blank part reads as BLANK (the module's docstring)

    @property
    def text(self) -> str:
        written = "+".join(f"{'|'.join(a)}:{t.name}" for a, t in self.parts)
        marks = (FALLBACK, self.fallback), (UNORDERED, self.unordered), (BLANKS_AGREE, self.blanks)
        return "".join(mark for mark, marked in marks if marked) + written

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for names, _ in self.parts for a in names))

    @property
    def grouped(self) -> bool:
        """Whether a row's keys of this recipe travel as one entry under the hidden join: a
        part spreads, so two rows sharing one key mostly share several (`entry_groups`)."""
        return any(t.spread for _, t in self.parts)

    def read_values(self, read: Callable[[str, Transform], str]) -> list[str]:
        """One row's keys' values under this recipe, each part's value of attribute a read
        as `read(a, t)`: one per combination of its parts' values (a spreading part's each
        value), none when a part has no value."""
        each = [
            sorted({x for v in (read(a, t) for a in names) if v for x in t.values(v)})
            for names, t in self.parts
        ]
        if self.blanks:
            if not any(each):
                return []
            each = [values or [BLANK] for values in each]
        combined = itertools.product(*each)
        if self.unordered:
            return sorted({"\x1f".join(sorted(values)) for values in combined})
        return ["\x1f".join(values) for values in combined]


# The marks a recipe may be written with, in the order they must come.
MARKS = (FALLBACK, UNORDERED, BLANKS_AGREE)


@dataclass(frozen=True)
class WrittenRecipe:
    """A recipe as written: its marks in their written order and its parts (attributes,
    transform name), unchecked."""

    marks: tuple[str, ...]
    parts: list[tuple[tuple[str, ...], str]]

    @property
    def fallback(self) -> bool:
        return FALLBACK in self.marks

    @property
    def unordered(self) -> bool:
        return UNORDERED in self.marks

    @property
    def blanks(self) -> bool:
        return BLANKS_AGREE in self.marks


def _marks(written: str) -> tuple[list[str], str]:
    """The marks a written recipe opens with, in their order, and the rest."""
    marks = []
    while written[:1] in MARKS:
        marks.append(written[0])
        written = written[1:]
    return marks, written


def written_recipes(text: str) -> list[tuple[str, WrittenRecipe]]:
    """Each recipe of `text` (separated by commas) with what its syntax says, unchecked: the one
    reader of the syntax, for parse_recipes, most_keys and the settings' own checks."""
    read = []
    for written in filter(None, (r.strip() for r in text.split(","))):
        marks, rest = _marks(written)
        parts = []
        for part in rest.split("+"):
            either, _, name = part.partition(":")
            parts.append((tuple(either.split("|")), name or "exact"))
        read.append((written, WrittenRecipe(tuple(marks), parts)))
    return read


def parse_recipes(text: str, attributes: Sequence[str]) -> tuple[Recipe, ...]:
    """Recipes separated by commas; each part an attribute the records have, with a known
    transform (default exact)."""
    recipes = []
    for written, meaning in written_recipes(text):
        marks = list(meaning.marks)
        if marks != sorted(set(marks), key=MARKS.index):
            raise SettingError(
                f"key recipe {written!r}: write its marks once each, in the order "
                f"{' '.join(repr(m) for m in MARKS)}"
            )
        parts = []
        for names, name in meaning.parts:
            for attribute in names:
                if attribute not in attributes:
                    raise SettingError(
                        f"key recipe {written!r}: no attribute {attribute!r} "
                        f"(attributes: {', '.join(attributes)})"
                    )
            if len(set(names)) < len(names):
                raise SettingError(f"key recipe {written!r}: an attribute named twice in a part")
            transform = TRANSFORMS.get(name)
            if transform is None:
                raise SettingError(
                    f"key recipe {written!r}: unknown transform {name!r} "
                    f"(known: {', '.join(TRANSFORMS)})"
                )
            parts.append((names, transform))
        recipes.append(Recipe(tuple(parts), meaning.fallback, meaning.unordered, meaning.blanks))
    if not recipes:
        raise SettingError("no key recipe given")
    if all(recipe.fallback for recipe in recipes):
        raise SettingError("only fallback recipes: a fallback keys the rows no other recipe keys")
    return tuple(recipes)


def recipe_keys(
    columns: Mapping[str, Sequence[str]], recipes: Sequence[Recipe], first: bool | None = None
) -> list[list[str]]:
    """Per row its keys: for each recipe whose every part is present, one per combination of
    the parts' values (one, unless a part reads several attributes). A fallback recipe's keys
    depend on the side (`first`: the lower identity's), which it needs (the module's
    docstring)."""
    rows = len(next(iter(columns.values()), []))
    # Each attribute read by each transform once, however many recipes read it so.
    read_columns: dict[tuple[str, str], list[str]] = {}

    def column(attribute: str, transform: Transform) -> list[str]:
        key = (attribute, transform.name)
        if key not in read_columns:
            read_columns[key] = [transform.read(v) for v in columns[attribute]]
        return read_columns[key]

    keys: list[list[str]] = [[] for _ in range(rows)]
    for number, recipe in enumerate(recipes):
        if recipe.fallback:
            continue
        prefix = f"recipe {number}{GROUPED if recipe.grouped else ''}|"
        for row_keys, found in zip(keys, _values(recipe, column, rows), strict=True):
            row_keys.extend(prefix + value for value in found)
    # A row keyed only where its blanks agree holds no key from a value it has: a fallback
    # looks for its partner by what it does hold (a given name blank: its surname's code).
    keyless = [all(BLANK in key for key in row_keys) for row_keys in keys]
    for number, recipe in enumerate(recipes):
        if not recipe.fallback:
            continue
        if first is None:
            raise ValueError("a fallback recipe's keys need the side they are sent from")
        for row, found in enumerate(_values(recipe, column, rows)):
            # The first tag: the first party's keyless rows probe every row of the second's;
            # the second tag the other way round.
            tags = [
                tag for tag, probes in ((1, first), (2, not first)) if keyless[row] or not probes
            ]
            grouped = GROUPED if recipe.grouped else ""
            keys[row] += [
                f"recipe {number}.{tag}{grouped}|{value}" for tag in tags for value in found
            ]
    return keys


def _values(
    recipe: Recipe, column: Callable[[str, Transform], list[str]], rows: int
) -> list[list[str]]:
    """Per row, `recipe`'s keys' values (Recipe.read_values). A recipe whose parts read one
    attribute each, the common case, is read a column at a time: one key where every part has
    a value (where blanks agree, any part: the others read BLANK), none otherwise; TRAIN's
    estimate derives keys for 40,000 rows."""
    if recipe.grouped or any(len(names) > 1 for names, _ in recipe.parts):

        def reader(row: int) -> Callable[[str, Transform], str]:
            return lambda attribute, transform: column(attribute, transform)[row]

        return [recipe.read_values(reader(row)) for row in range(rows)]
    parts = [column(names[0], transform) for names, transform in recipe.parts]
    order = sorted if recipe.unordered else list
    rows_values: Iterable[Sequence[str]] = zip(*parts, strict=True)
    if recipe.blanks:
        rows_values = (
            [value or BLANK for value in values] if any(values) else [""] for values in rows_values
        )
    return [["\x1f".join(order(values))] if all(values) else [] for values in rows_values]


def _most_values(meaning: WrittenRecipe) -> int:
    """The most keys one row holds under one recipe as written: its parts' alternatives and
    spreads multiplied (an unknown transform, refused elsewhere, counts one)."""
    return math.prod(
        len(names) * (TRANSFORMS[name].most if name in TRANSFORMS else 1)
        for names, name in meaning.parts
    )


def most_keys(written: str) -> int:
    """The most keys one honest row can hold under recipes written so: each recipe's parts'
    alternatives and spreads multiplied, a fallback's once; or, for a row keyed only where its
    blanks agree, those keys and a fallback's twice (both its tags: recipe_keys). A peer's row
    holding more is not what the agreed recipes derive, and each key more is one more guess
    tested against the join (counting a fallback twice for every row left a names and date row
    a spare place for a probe key)."""
    recipes = [meaning for _, meaning in written_recipes(written)]
    keyed = sum(_most_values(m) for m in recipes if not m.fallback)
    fallbacks = sum(_most_values(m) for m in recipes if m.fallback)
    return max(keyed + fallbacks, most_keyless_keys(written))


def most_keyless_keys(written: str) -> int:
    """The most keys an honest row without a key of its own values holds (recipe_keys): its
    keys where blanks agree, and each fallback's under both tags. Only such a row holds a
    fallback's probing tag."""
    recipes = [meaning for _, meaning in written_recipes(written)]
    fallbacks = sum(_most_values(m) for m in recipes if m.fallback)
    return sum(_most_values(m) for m in recipes if m.blanks and not m.fallback) + 2 * fallbacks


def probing(keys: Sequence[str], first: bool) -> list[str]:
    """A row's keys with each fallback key it holds for being found swapped for the tag that
    probes, in place of one of its own keys: what a hostile peer sends to have every row
    find the other side's by the fallback's value (keyless_rows refuses it). For the tests
    of that refusal only."""
    found = [key for key in keys if found_by_key(key, first)]
    own = [key for key in keys if not fallback_key(key)]
    other = "1" if first else "2"
    probes = [key.replace(f".{'2' if first else '1'}", f".{other}", 1) for key in found]
    return own[: max(0, len(own) - len(probes))] + found + probes


def recipe_number(key: str) -> int:
    """The agreed recipe a key (recipe_keys') was made by: its place among the recipes."""
    head = key.split("|", 1)[0].removeprefix("recipe ").rstrip(GROUPED)
    return int(head.split(".", 1)[0])


def found_by_key(key: str, first: bool) -> bool:
    """Whether a key (recipe_keys') is a fallback's tag that every row of its side holds, the
    one the peer's keyless rows probe: the second tag on the first party's side, the first on
    the second's. A peer row meeting one holds the probing tag, so it claims to be keyless."""
    tag = key.split("|", 1)[0]
    if "." not in tag:
        return False
    return tag.split(".", 1)[1].rstrip(GROUPED) == ("2" if first else "1")


def group_size(written: str) -> int:
    """How many values each grouped entry holds under the hidden join: the most keys a row
    holds under any grouped recipe (a spreading part), 1 when none is. Every group is padded
    to it, so that an entry's size tells nothing of the name behind it."""
    return max(
        (
            _most_values(meaning)
            for _, meaning in written_recipes(written)
            if any(name in TRANSFORMS and TRANSFORMS[name].spread for _, name in meaning.parts)
        ),
        default=1,
    )


def grouped_key(key: str) -> bool:
    """Whether a key (recipe_keys') is a grouped recipe's: its tag ends in GROUPED."""
    return key.split("|", 1)[0].endswith(GROUPED)


def fallback_key(key: str) -> bool:
    """Whether a key (recipe_keys') is a fallback recipe's: its tag names the direction."""
    return "." in key.split("|", 1)[0]


def entry_groups(keys: Sequence[str]) -> list[tuple[str, ...]]:
    """One row's keys as the hidden join's entries: a key alone, or a grouped recipe's keys
    together. Two rows one edit apart share one key of such a recipe and two with the same
    name all of them; as one entry the pair takes one slot."""
    groups: dict[str, list[str]] = {}
    for key in dict.fromkeys(keys):
        groups.setdefault(entry_label(key), []).append(key)
    return [tuple(group) for group in groups.values()]


def entry_label(key: str) -> str:
    """The hidden join's entry a key (recipe_keys') is in: its grouped recipe's tag, or the
    key itself."""
    return key.split("|", 1)[0] if grouped_key(key) else key


def prefixed(text: str) -> str:
    """A written recipe with each part read through a Soundex code read by its first letters
    instead: the twin that holds a pair whose typo changed the code. Blanks do not agree in
    it (a blank first name with the surname's first letters joins more than its code does;
    docs/research/sealed.md, "Blank names")."""
    marks, rest = _marks(text)
    return "".join(m for m in marks if m != BLANKS_AGREE) + rest.replace(":soundex", ":prefix")


def with_prefixes(recipes: Sequence[Recipe]) -> tuple[str, ...]:
    """The recipes, written, and for each whose every part is a Soundex code its prefixed
    twin: the names-only trade measured best (more true pairs joined, more of the people
    without a partner next to a peer's row; docs/research/sealed.md, "Keys for names")."""
    soundex = TRANSFORMS["soundex"]
    twins = [
        prefixed(recipe.text)
        for recipe in recipes
        if all(transform == soundex for _, transform in recipe.parts)
    ]
    return tuple(dict.fromkeys([*(recipe.text for recipe in recipes), *twins]))
