"""The encodings `[method] encoding` names, by name: what the agreement holds its encoding by.

Each encoding's code is one module (pprl.protocol.encodings' distances and bloom, and sealed
linkage's pprl.protocol.sealed.encoding, with the rest of that mode); its name and the
settings only it reads are in pprl.protocol.method_settings. A new encoding is one module,
one line in ENCODING_SETTINGS and one here.
"""

from __future__ import annotations

from pprl.protocol.encodings.base import Encoding
from pprl.protocol.encodings.bloom import FilterDistances, Filters
from pprl.protocol.encodings.distances import Distances
from pprl.protocol.errors import SettingError
from pprl.protocol.sealed.encoding import Sealed

ENCODINGS: dict[str, Encoding] = {
    encoding.name: encoding for encoding in (Distances(), Filters(), FilterDistances(), Sealed())
}
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
