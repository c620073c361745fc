"""A daemon's own setup, checked before it serves: what would otherwise fail late, mid-run,
or with a misleading reason (a key of another certificate reads as "failed to bind")."""

from __future__ import annotations

import datetime as dt
import logging
import os
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from pprl.party.config import PartyConfig
from pprl.party.credentials.bloom_key import load_bloom_key
from pprl.protocol.errors import InputError

log = logging.getLogger("pprl.party")
_PUBLIC = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def check_startup(config: PartyConfig) -> None:
    check_roles(config)
    check_certificate(config)
    check_state_dir(config.state_dir)
    if config.method.keyed and config.privacy.bloom_key is not None:
        load_bloom_key(config.privacy.bloom_key)  # missing or short: refused before serving
    for warning in key_warnings(config):
        log.warning("%s", warning)


def key_warnings(config: PartyConfig) -> list[str]:
    """Secrets other users of the machine could read, and the CA's key where it does not
    belong: said at start, not refused (the operator may have reasons, e.g. a container)."""
    secrets: list[tuple[str, Path | None]] = [
        ("the TLS key", config.tls.key),
        ("the noise key", config.privacy.noise_key),
        ("the Bloom key", config.privacy.bloom_key),
    ]
    warnings = []
    for what, path in secrets:
        if path is not None and path.exists() and path.stat().st_mode & 0o077:
            mode = path.stat().st_mode & 0o777
            warnings.append(
                f"{what} {path} is readable by other users of this machine (mode {mode:o}): "
                f"chmod 600 {path}"
            )
    ca_key = config.tls.cert.parent / "ca.key"
    if ca_key.exists():
        warnings.append(
            f"the CA's private key {ca_key} sits beside this daemon's certificate: anyone who "
            "reads it can issue certificates both daemons trust; keep it offline"
        )
    return warnings


def check_roles(config: PartyConfig) -> None:
    """Self, peers and coordinator are different identities: a coordinator that is also a
    peer could drive this daemon's phases as well as feed it data."""
    several = len(config.peers) > 1
    roles = {
        "identity": config.identity,
        **{
            (f"peers[{i}].identity" if several else "peer.identity"): peer.identity
            for i, peer in enumerate(config.peers)
        },
        "coordinator.identity": config.coordinator_identity,
    }
    seen: dict[str, str] = {}
    for key, name in roles.items():
        if name in seen:
            raise InputError(
                f"{name!r} is also {seen[name]}: this daemon, its peers and its coordinator "
                "need different identities",
                path=config.source or None,
                field=key,
            )
        seen[name] = key


def _load_cert(path: Path, what: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", path=str(path)) from None
    except ValueError as exc:
        raise InputError(f"{what} is not a PEM certificate: {exc}", path=str(path)) from None


def check_certificate(config: PartyConfig, now: dt.datetime | None = None) -> None:
    """The certificate names this daemon, both where clients look (the common name) and where
    servers are checked (a DNS subject alternative name); its key is the one configured; it
    is valid now and issued by the configured CA."""
    tls = config.tls
    cert = _load_cert(tls.cert, "TLS certificate")
    ca = _load_cert(tls.ca, "CA certificate")
    try:
        key = serialization.load_pem_private_key(tls.key.read_bytes(), password=None)
    except OSError as exc:
        raise InputError(f"cannot read TLS key: {exc.strerror}", path=str(tls.key)) from None
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"TLS key is not an unencrypted PEM private key: {exc}", path=str(tls.key)
        ) from None
    if key.public_key().public_bytes(*_PUBLIC) != cert.public_key().public_bytes(*_PUBLIC):
        raise InputError(f"is not the private key of {tls.cert}", path=str(tls.key))
    names = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if names != [config.identity]:
        raise InputError(
            f"names {', '.join(names) or 'no common name'}, but this daemon's identity is "
            f"{config.identity!r}: its peer and coordinator would refuse it",
            path=str(tls.cert),
        )
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = san.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        dns = []
    if config.identity not in dns:
        raise InputError(
            f"has no DNS subject alternative name {config.identity!r} (it has "
            f"{', '.join(dns) or 'none'}): clients check a server's identity there",
            path=str(tls.cert),
        )
    now = now or dt.datetime.now(dt.UTC)
    if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
        raise InputError(
            f"is valid from {cert.not_valid_before_utc:%Y-%m-%d %H:%M} to "
            f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC, not now",
            path=str(tls.cert),
        )
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise InputError(f"was not issued by the CA in {tls.ca}", path=str(tls.cert)) from None


def check_state_dir(state_dir: Path) -> None:
    """The state directory exists or can be made, and takes files."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=state_dir, prefix=".write-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"state directory cannot be made or written: {exc.strerror or exc}",
            path=str(state_dir),
        ) from None
