"""How sealed linkage finds the pairs it scores ([method] sealed_join): a variant per object.

- graph: both parties hold every row's doubly blinded keys and derive the same candidate
  pairs; each sees which of the peer's rows share which keys with which of its own.
- hidden: only the evaluator joins, against key entries that carry no row
  (pprl.protocol.sealed.hidden_join); the scorer learns a count per key entry and the peer
  row of only the slots it names, its rows' best. On names alone, where the graph is what the
  list-of-people attack uses, it lets the people without a partner be re-identified less
  (FEBRL4 names 4.5% against 13.7% for the same keys, the generated namesakes 2.3% against
  9.9%) at the same F1 within 0.002; it scores each pair once per key it shares, so it costs
  more where many keys join one pair (docs/research/sealed.md, "The hidden join").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pprl.protocol.errors import SettingError


@dataclass(frozen=True)
class Join:
    """One way of joining blinded keys: whether the join is hidden from the scorer."""

    name: str
    hidden: bool


GRAPH = Join("graph", hidden=False)
HIDDEN = Join("hidden", hidden=True)
JOINS = {join.name: join for join in (GRAPH, HIDDEN)}
# The digest leaves the setting out at this value, so that runs agreed before it existed
# keep their digests (method_settings.MethodParams.to_dict).
DEFAULT_JOIN = GRAPH.name


# Under the hidden join, the slots every entry gets ([method] sealed_slots;
# hidden_join.fixed); 0: as many as the evaluator's rows holding its key. A fixed count
# keeps the counts from telling who is in the evaluator's file, but each party learns the
# same as evaluator, from which of its own keys the peer's entries hold, so by itself it
# hides nothing more (docs/research/sealed.md, "Slots per entry").
DEFAULT_SLOTS = 0


def join_named(name: str) -> Join:
    try:
        return JOINS[name]
    except KeyError:
        raise SettingError(
            f"unknown join {name!r}; expected one of {', '.join(JOINS)}", setting="sealed_join"
        ) from None


def default_join(kinds: Mapping[str, str]) -> str:
    """The join when the operator names none: hidden on names alone, where the keys' graph
    is what re-identifies; the graph beyond names, where the keys leak little (FEBRL4 names
    and date of birth: 1.0% against 0.3%) and the hidden join would score each pair once per
    shared key (about 11 times on those recipes)."""
    beyond = any(kind != "name" for kind in kinds.values())
    return GRAPH.name if beyond else HIDDEN.name
