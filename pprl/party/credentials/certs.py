"""Development PKI: one CA and a leaf per identity, enough for the daemons' mutual TLS.

Each daemon is both a gRPC server and a client of its peer, so every leaf carries both
serverAuth and clientAuth; the peer's identity is the certificate's common name.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pprl.files.atomic import atomic_file
from pprl.protocol.errors import InputError, SettingError

IDENTITY_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
CA_NAME = "ca"
CA_COMMON_NAME = "pprl development CA"
# Tolerates small clock differences between the machine that issues and the one that verifies.
_BACKDATE = dt.timedelta(minutes=5)


def make_development_pki(
    out_dir: Path,
    identities: Sequence[str],
    *,
    days: int = 365,
    extra_hosts: Sequence[str] = (),
) -> dict[str, tuple[Path, Path]]:
    """Write ca.pem (+ ca.key) and, per identity, <name>.pem and <name>.key into out_dir.

    An existing CA in out_dir is reused, so identities can be added later and still trust
    the certificates issued before. Returns {name: (cert_path, key_path)}.
    """
    for name in identities:
        validate_identity(name)
    if days < 1:
        raise InputError(f"days must be at least 1, got {days}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_cert, ca_key = _load_or_create_ca(out_dir, now, days)
    issued = {}
    for name in dict.fromkeys(identities):
        cert, key = _issue_leaf(name, ca_cert, ca_key, now, days, extra_hosts)
        cert_path, key_path = out_dir / f"{name}.pem", out_dir / f"{name}.key"
        _write_key(key_path, key)
        _write_cert(cert_path, cert)
        issued[name] = (cert_path, key_path)
    return issued


def identity_of(cert_pem: bytes) -> str:
    """The common name, which is what the daemons authorise a peer by."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if len(names) != 1:
        raise SettingError(f"certificate must have exactly one common name, found {len(names)}")
    return str(names[0].value)


def validate_identity(name: str) -> None:
    """Identities become file names and DNS names, so only a safe subset is allowed."""
    if not isinstance(name, str) or not IDENTITY_PATTERN.fullmatch(name):
        raise InputError(
            f"invalid identity {name!r}: use 1-63 lowercase letters, digits or '-', "
            "starting with a letter or digit"
        )
    if name == CA_NAME:
        raise InputError(f"invalid identity {name!r}: reserved for the CA's own files")


def _load_or_create_ca(
    out_dir: Path, now: dt.datetime, days: int
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert_path, key_path = out_dir / f"{CA_NAME}.pem", out_dir / f"{CA_NAME}.key"
    if cert_path.exists() or key_path.exists():
        if not (cert_path.exists() and key_path.exists()):
            present, missing = (
                (cert_path, key_path) if cert_path.exists() else (key_path, cert_path)
            )
            raise InputError(
                f"found without {missing.name}: restore it, or remove {present.name} to make "
                "a new CA (the certificates it issued will then stop working)",
                path=str(present),
            )
        return _load_ca(cert_path, key_path)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_key(key_path, key)
    _write_cert(cert_path, cert)
    return cert, key


def _load_ca(
    cert_path: Path, key_path: Path
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except ValueError:
        raise InputError("not a PEM certificate", path=str(cert_path)) from None
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (ValueError, TypeError):
        raise InputError("not an unencrypted PEM private key", path=str(key_path)) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise InputError("expected an EC private key", path=str(key_path))
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(serialization.Encoding.DER, public) != (
        cert.public_key().public_bytes(serialization.Encoding.DER, public)
    ):
        raise InputError(f"not the private key of {cert_path.name}", path=str(key_path))
    return cert, key


def _issue_leaf(
    name: str,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    now: dt.datetime,
    days: int,
    extra_hosts: Sequence[str],
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    dns_names = dict.fromkeys([name, "localhost", *extra_hosts])
    san = x509.SubjectAlternativeName(
        [
            *(x509.DNSName(host) for host in dns_names),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        # A reused CA may expire sooner than the leaf would; never outlive the issuer.
        .not_valid_after(min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(san, critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with atomic_file(path, 0o600) as tmp:
        tmp.write_bytes(pem)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    with atomic_file(path, 0o644) as tmp:
        tmp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
