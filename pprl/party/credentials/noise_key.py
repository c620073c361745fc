"""The party's noise key on disk: created once in the state directory, private, never sent.

Keyed noise (pprl.protocol.vectors.keyed_noise) only holds across runs if the key does: a key lost
or replaced gives a peer a second, independent release of every value. So the daemon creates
it on first start when none is configured, and refuses to start on a configured key that is
missing, unreadable or of the wrong length instead of quietly making a new one.
"""

from __future__ import annotations

from pathlib import Path

from pprl.files.atomic import atomic_file
from pprl.protocol.errors import InputError
from pprl.protocol.vectors.keyed_noise import KEY_BYTES, NoiseKey

KEY_FILE = "noise.key"


def load_noise_key(path: Path, create: bool) -> NoiseKey:
    """The key at `path`; with `create`, a new one written there (mode 0600) if none is."""
    if create and not path.exists():
        with atomic_file(path, mode=0o600) as tmp:
            tmp.write_bytes(NoiseKey.generate().secret())
    try:
        secret = path.read_bytes()
    except FileNotFoundError:
        message = "noise key not found; leave [privacy] noise_key unset to have one created"
        raise InputError(message, path=str(path), field="privacy.noise_key") from None
    except OSError as error:
        message = f"cannot read the noise key: {error.strerror}"
        raise InputError(message, path=str(path), field="privacy.noise_key") from None
    if len(secret) != KEY_BYTES:
        message = f"a noise key is {KEY_BYTES} bytes, this file holds {len(secret)}"
        raise InputError(message, path=str(path), field="privacy.noise_key")
    return NoiseKey(secret)


def party_noise_key(state_dir: Path, configured: Path | None) -> NoiseKey:
    """The configured key, or the state directory's own (created on first start)."""
    if configured is not None:
        return load_noise_key(configured, create=False)
    return load_noise_key(state_dir / KEY_FILE, create=True)
