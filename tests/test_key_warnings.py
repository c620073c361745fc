"""At start a daemon says which of its secrets other users could read, and when the CA's
private key sits beside its certificate."""

from __future__ import annotations

from pathlib import Path

from pprl.party.config import load_config
from pprl.party.service.startup import key_warnings
from tests.test_config import minimal, write


def test_readable_keys_and_a_ca_key_beside_the_certificates_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, minimal())
    certs = tmp_path / "certs"
    certs.mkdir()
    key = certs / "alice.key"
    key.write_text("secret")
    key.chmod(0o644)
    config = load_config(path)
    said = key_warnings(config)
    assert len(said) == 1 and "readable by other users" in said[0] and "mode 644" in said[0]
    key.chmod(0o600)
    assert key_warnings(config) == []
    (certs / "ca.key").write_text("the CA's key")
    said = key_warnings(config)
    assert len(said) == 1 and "CA's private key" in said[0] and "keep it offline" in said[0]
