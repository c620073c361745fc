"""Combined entries: "first+middle+last" compares the sorted words of several attributes.

Registers write a first and last name in each other's field, or a middle name as the first
(Christen 2012 on values in the wrong field; the "swap" phenomenon of error_model). Each
mapping entry compares an attribute with itself, so such a pair differs on two entries at
once. A combined entry holds the attributes' non-empty values sorted and joined by a space,
the same whatever field each was written in, and is smashed like any text attribute against
a combined reference column ("first+last": the sorted words of those columns in each row).
Both sides derive it from values already normalised, so it needs no configuration beyond
the mapping entry.

An initial entry ("middle:initial") holds the first letter of one attribute's value. Registers
cut a middle name to its initial or drop it, and namesakes differ in the middle name: the
full middle name's distances cannot tell "J" against "JOHN" (the same person) from "MARY"
against "JOHN" (a namesake), the initials can; many nicknames keep the first name's initial
(JIM, JAMES), which "first:initial" keeps close. It is smashed against a plain column of its
attribute's kind (the reference first names: docs/results.md measured them better than the
reference's own initials), and its letter is one of 26, which a peer reads: the privacy gate
lists it among what it does not attack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pprl.protocol.data.kinds import DEFAULT_KIND, WORD_KINDS
from pprl.protocol.errors import InputError

SEPARATOR = "+"
INITIAL = ":initial"
# Combined values are word lists compared by edit distance, as free text is.
COMBINED_KIND = "text"


def is_combined(name: str) -> bool:
    return SEPARATOR in name


def is_initial(name: str) -> bool:
    return name.endswith(INITIAL) and len(name) > len(INITIAL)


def is_derived(name: str) -> bool:
    """Computed from other attributes rather than read from a column."""
    return is_combined(name) or is_initial(name)


def parts(name: str) -> list[str]:
    """The attributes (or reference columns) a derived name is computed from; [name] for a
    plain one."""
    if is_initial(name):
        return [name.removesuffix(INITIAL)]
    return name.split(SEPARATOR)


def base_names(names: Iterable[str]) -> list[str]:
    """Every plain name the given names use, in first-use order."""
    return list(dict.fromkeys(part for name in names for part in parts(name)))


def combined_values(columns: Mapping[str, Sequence[str]], name: str) -> list[str]:
    """Per row, the non-empty values of the parts, sorted and joined ("" when all are empty,
    a missing value); for an initial entry, the first letter ("" when the value is missing)."""
    if is_initial(name):
        return [value[:1] for value in columns[parts(name)[0]]]
    rows = zip(*(columns[part] for part in parts(name)), strict=True)
    return [" ".join(sorted(value for value in row if value)) for row in rows]


def with_combined(
    columns: Mapping[str, Sequence[str]], names: Iterable[str]
) -> dict[str, Sequence[str]]:
    """The columns, plus each derived one of `names` computed from them."""
    out: dict[str, Sequence[str]] = dict(columns)
    for name in names:
        if is_derived(name) and name not in out:
            out[name] = combined_values(columns, name)
    return out


def combined_kinds(mapping: Sequence[tuple[str, str]], kinds: Mapping[str, str]) -> dict[str, str]:
    """Each mapped attribute's kind (default: name); a combined one is text, and may join
    only words: a date or a digit string has no word order to forget. An initial keeps its
    attribute's kind, which must be words too: a date's first digit says little."""
    out = {}
    for attribute, column in mapping:
        if not is_derived(attribute):
            out[attribute] = kinds.get(attribute, DEFAULT_KIND)
            continue
        for part in parts(attribute):
            kind = kinds.get(part, DEFAULT_KIND)
            if kind not in WORD_KINDS:
                allowed = ", ".join(WORD_KINDS)
                if is_initial(attribute):
                    what, rule = "takes the initial of", f"only kinds {allowed} have an initial"
                else:
                    what, rule = "combines", f"only kinds {allowed} can be combined"
                message = (
                    f"mapping entry {attribute}->{column} {what} {part!r} of kind {kind!r}; {rule}"
                )
                raise InputError(message, field=attribute)
        out[attribute] = kind if is_initial(attribute) else COMBINED_KIND
    return out
