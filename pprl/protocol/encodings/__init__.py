"""What a party encodes its records as for the peer, one object per variant.

An encoding decides what the agreement checks, the wire's shape, how records are smashed,
how the privacy gate attacks the release, how the party trains and matches, and the words
it prints (pprl.protocol.encodings.base). `ENCODINGS` is the registry that `[method]
encoding` names; a new encoding is one module in this package and one line here.
"""

from __future__ import annotations

from pprl.protocol.encodings.base import Columns, Encoding, Runner
from pprl.protocol.encodings.bloom import FilterDistances, Filters
from pprl.protocol.encodings.distances import Distances
from pprl.protocol.encodings.sealed import Sealed
from pprl.protocol.errors import SettingError

__all__ = ["Columns", "Distances", "Encoding", "FilterDistances", "Filters", "Runner", "Sealed"]
__all__ += ["DEFAULT_ENCODING", "ENCODINGS", "PAPER_ENCODING", "encoding_named"]

ENCODINGS: dict[str, Encoding] = {
    encoding.name: encoding for encoding in (Distances(), Filters(), FilterDistances(), Sealed())
}
# The paper's release: what a method description means when it names no encoding, so that
# every earlier description (and its digest) stays what it was.
PAPER_ENCODING = Distances.name
# What a daemon runs when its configuration names no encoding: the peer never sees the
# vectors (docs/research/sealed.md); any release it could compare with its own plaintext, it could
# compare with a dictionary (docs/research/privacy.md).
DEFAULT_ENCODING = Sealed.name


def encoding_named(name: str) -> Encoding:
    """The registry's entry, or a ValueError that lists the names."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise SettingError(
            f"unknown encoding {name!r}; expected one of {', '.join(ENCODINGS)}"
        ) from None
