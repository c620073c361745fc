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
attribute's kind (the reference first names: docs/research/results.md measured them better than the
reference's own initials), and its letter is one of 26, which a peer reads: the privacy gate
lists it among what it does not attack.

A first-part entry ("last:first-part") holds the first part of a surname of several
("GARCIA LOPEZ" -> GARCIA, "MULLER SCHMIDT" -> MULLER, a particle kept with the word after
it: "VAN DER BERG KOOL" -> VAN DER BERG). Registers cut such a surname to that part, which
the whole surname's distances cannot see in the longer one. It is a surname, smashed against
the plain surname column, and the privacy gate attacks it with the surname (`revealed`): for
a surname of one part it is a second noisy look at it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from pprl.protocol.data.kinds import DEFAULT_KIND, WORD_KINDS
from pprl.protocol.errors import InputError

SEPARATOR = "+"
INITIAL = ":initial"
FIRST_PART = ":first-part"
# Combined values are word lists compared by edit distance, as free text is.
COMBINED_KIND = "text"
# Words that belong to the surname part after them ("VAN DER BERG" is one part, not three):
# Dutch, German, French, Spanish, Portuguese, Italian and Arabic or Hebrew particles, as
# names are normalised (upper case, accents folded).
PARTICLES = frozenset(
    {
        "VAN", "VON", "DER", "DEN", "TER", "TEN", "ZU", "ZUR", "DE", "DEL", "DELLA", "DELLO",
        "DI", "DA", "DAS", "DOS", "DU", "LA", "LE", "Y", "AL", "EL", "BIN", "BEN", "IBN",
    }
)  # fmt: skip


def surname_parts(value: str) -> list[str]:
    """The parts of a normalised surname, split at spaces (hyphens read as spaces), each
    particle kept with the word after it."""
    out: list[str] = []
    pending: list[str] = []
    for word in value.split():
        pending.append(word)
        if word not in PARTICLES:
            out.append(" ".join(pending))
            pending = []
    if pending:
        out.append(" ".join(pending))
    return out


def first_part(value: str) -> str:
    """The first part of a surname of several, or the surname itself ("" stays missing)."""
    found = surname_parts(value)
    return found[0] if found else ""


# One attribute's derived entries, by suffix: what each keeps of a normalised value.
DERIVATIONS: dict[str, Callable[[str], str]] = {
    INITIAL: lambda value: value[:1],
    FIRST_PART: first_part,
}


def derivation(name: str) -> str | None:
    """The suffix of a derived one-attribute entry ("middle:initial"), or None."""
    for suffix in DERIVATIONS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return suffix
    return None


def is_combined(name: str) -> bool:
    return SEPARATOR in name


def is_initial(name: str) -> bool:
    return derivation(name) == INITIAL


def is_derived(name: str) -> bool:
    """Computed from other attributes rather than read from a column."""
    return is_combined(name) or derivation(name) is not None


def revealed(name: str) -> str:
    """The attribute whose value an entry shows, as an attacker groups entries: a
    one-attribute derivation (an initial, a first part) shows its attribute's; any other
    entry, its own."""
    return parts(name)[0] if derivation(name) is not None else name


def entries_by_attribute(mapping: Sequence[tuple[str, str]]) -> dict[str, list[int]]:
    """The mapping's entry indices grouped by the attribute each shows (`revealed`), in
    first-use order: what an attacker reads together."""
    out: dict[str, list[int]] = {}
    for m, (attribute, _) in enumerate(mapping):
        out.setdefault(revealed(attribute), []).append(m)
    return out


def derived_values(name: str, values: Sequence[str]) -> list[str]:
    """What entry `name` holds for each of its attribute's `values` (the values themselves
    for a plain entry)."""
    suffix = derivation(name)
    if suffix is None:
        return list(values)
    derive = DERIVATIONS[suffix]
    return [derive(value) for value in values]


def parts(name: str) -> list[str]:
    """The attributes (or reference columns) a derived name is computed from; [name] for a
    plain one."""
    suffix = derivation(name)
    if suffix is not None:
        return [name.removesuffix(suffix)]
    return name.split(SEPARATOR)


def base_names(names: Iterable[str]) -> list[str]:
    """Every plain name the given names use, in first-use order."""
    return list(dict.fromkeys(part for name in names for part in parts(name)))


def combined_values(columns: Mapping[str, Sequence[str]], name: str) -> list[str]:
    """Per row, the non-empty values of the parts, sorted and joined ("" when all are empty,
    a missing value); for a one-attribute derivation, what it keeps of each value (the first
    letter, the first part; "" when the value is missing)."""
    if derivation(name) is not None:
        return derived_values(name, columns[parts(name)[0]])
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
    only words: a date or a digit string has no word order to forget. An initial or a first
    part keeps its attribute's kind, which must be words too: a date's first digit says
    little."""
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
                elif derivation(attribute) == FIRST_PART:
                    what, rule = "takes the first part of", f"only kinds {allowed} have parts"
                else:
                    what, rule = "combines", f"only kinds {allowed} can be combined"
                message = (
                    f"mapping entry {attribute}->{column} {what} {part!r} of kind {kind!r}; {rule}"
                )
                raise InputError(message, field=attribute)
        out[attribute] = COMBINED_KIND if is_combined(attribute) else kind
    return out
