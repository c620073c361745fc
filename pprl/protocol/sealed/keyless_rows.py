"""Whether the peer's rows that probe with a fallback recipe are keyless, as only an honest
keyless row may probe. A fallback's probing tag lets a row find every row of the other side
that shares its value (both names' codes, say), which an ordinary recipe would not; an honest
row holds it only when no other recipe gave it a key (recipes.recipe_keys). The tag is
blinded, but a peer row that meets one of this party's own found-by keys (recipes.found_by_key)
holds it; such a row must then hold no more keys than a keyless row can. A peer cannot both
keep its keys and probe with its rows: it must give a row's keys up to make it probe."""

from __future__ import annotations

from collections.abc import Sequence


def keyless_refusal(
    own_rows: Sequence[Sequence[bytes]],
    own_found_by: Sequence[Sequence[bool]],
    peer_rows: Sequence[Sequence[bytes]],
    most_keyless: int,
) -> str | None:
    """Why a peer row probes with a fallback while holding more keys than a keyless row
    (`most_keyless`, recipes.most_keyless_keys), or None. All keys doubly blinded."""
    found_by = {
        key
        for keys, flags in zip(own_rows, own_found_by, strict=True)
        for key, flag in zip(keys, flags, strict=True)
        if flag
    }
    if not found_by:
        return None
    for row, keys in enumerate(peer_rows):
        if len(keys) > most_keyless and not found_by.isdisjoint(keys):
            return (
                f"row {row:,} probes with a fallback key, which only a row without keys of its "
                f"own may do, yet holds {len(keys):,} keys (such a row holds at most "
                f"{most_keyless:,})"
            )
    return None
