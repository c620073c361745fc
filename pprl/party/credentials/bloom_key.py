"""The Bloom-filter key on disk: a secret both parties hold, agreed between them out of band.

Unlike the noise key it cannot be created here: the peer must hold the same one, so a missing
key is an error, and so is one too short to be secret. The file holds the key as hex digits
(e.g. `python3 -c "import secrets; print(secrets.token_hex(32))"`).
"""

from __future__ import annotations

import string
from pathlib import Path

from pprl.protocol.errors import InputError
from pprl.protocol.vectors.bloom import MIN_KEY_BYTES, BloomKey

FIELD = "privacy.bloom_key"


def load_bloom_key(path: Path) -> BloomKey:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise InputError(
            "Bloom-filter key not found; both parties need the same key file",
            path=str(path),
            field=FIELD,
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        why = getattr(error, "strerror", None) or "not hex digits"
        raise InputError(
            f"cannot read the Bloom-filter key: {why}", path=str(path), field=FIELD
        ) from None
    if not text or any(c not in string.hexdigits for c in text) or len(text) % 2:
        raise InputError(
            "a Bloom-filter key file holds an even number of hex digits on one line",
            path=str(path),
            field=FIELD,
        )
    if len(text) < 2 * MIN_KEY_BYTES:
        raise InputError(
            f"a Bloom-filter key needs at least {MIN_KEY_BYTES} bytes ({2 * MIN_KEY_BYTES} hex "
            f"digits), this file holds {len(text) // 2}",
            path=str(path),
            field=FIELD,
        )
    return BloomKey(bytes.fromhex(text))
