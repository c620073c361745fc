"""Why an agreed pair was found: the blocking-key recipes its two records share, read as
which compared fields agree (and by which reading: the same Soundex code, the first three
letters, one edit apart, ...) and which no shared key reads.

Each party works this out alone, from what it already holds: in the keys' graph both
parties' keys blinded twice, so it knows every key each candidate pair shares; under the
hidden join the recipes of the slots it named. Nothing is sent, and it is written only for
agreed pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pprl.protocol.sealed.recipes import Recipe


def near_fields(recipes: Sequence[Recipe], shared: Iterable[int]) -> dict[str, str]:
    """Per field some shared recipe reads, how it agrees (each reading once, strongest
    first as the recipes list them)."""
    how: dict[str, list[str]] = {}
    for number in sorted(set(shared)):
        for attributes, transform in recipes[number].parts:
            reading = transform.reading or transform.name
            for attribute in attributes if len(attributes) == 1 else ("/".join(attributes),):
                if reading not in how.setdefault(attribute, []):
                    how[attribute].append(reading)
    return {attribute: ", ".join(readings) for attribute, readings in how.items()}


def explained(
    recipes: Sequence[Recipe], compared: Sequence[str], shared: Iterable[int]
) -> tuple[str, str]:
    """(the near fields with how they agree, the compared fields no shared key reads), as
    linkage.csv writes them."""
    near = near_fields(recipes, shared)
    read = {a for field in near for a in field.split("/")}
    near_text = "; ".join(f"{field}: {how}" for field, how in near.items())
    other = " ".join(a for a in compared if a not in read)
    return near_text, other
