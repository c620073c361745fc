"""The scoring party's public key as the evaluator holds it: loaded from the seeded bytes it
is sent as (a scorer keeps no PublicKey object of its own; pprl.protocol.sealed.scoring)."""

from __future__ import annotations

from typing import Any

from pprl.files.sealed_bytes import dumped, loaded
from pprl.protocol.sealed import scoring


def held_public(keys: scoring.SecretKeys) -> Any:
    return loaded(scoring.PublicKey, keys.context, dumped(keys.public))
