"""The development PKI must produce certificates that a real gRPC mutual-TLS handshake accepts."""

from __future__ import annotations

import ipaddress
import stat
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pprl.party.credentials.certs import identity_of, make_development_pki

IDENTITIES = ("alice", "bob", "coordinator")
# Loopback connections must never be routed through a proxy from the environment.
NO_PROXY = ("grpc.enable_http_proxy", 0)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pki")
    make_development_pki(out, IDENTITIES, extra_hosts=["party.example"])
    return out


@pytest.fixture(scope="module")
def foreign_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("foreign")
    make_development_pki(out, ["alice", "bob"])
    return out


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_returns_paths_and_writes_files_with_modes(tmp_path: Path) -> None:
    issued = make_development_pki(tmp_path / "new", ["alice", "bob"])
    out = tmp_path / "new"
    assert issued == {
        "alice": (out / "alice.pem", out / "alice.key"),
        "bob": (out / "bob.pem", out / "bob.key"),
    }
    for name in ("ca", "alice", "bob"):
        assert stat.S_IMODE((out / f"{name}.key").stat().st_mode) == 0o600
        assert stat.S_IMODE((out / f"{name}.pem").stat().st_mode) == 0o644
        assert (out / f"{name}.key").read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert sorted(p.name for p in out.iterdir()) == [
        "alice.key",
        "alice.pem",
        "bob.key",
        "bob.pem",
        "ca.key",
        "ca.pem",
    ]


def test_ca_is_a_self_signed_ca(pki: Path) -> None:
    ca = load(pki / "ca.pem")
    ca.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign


@pytest.mark.parametrize("name", IDENTITIES)
def test_leaf_is_issued_by_ca_for_both_roles(pki: Path, name: str) -> None:
    ca, leaf = load(pki / "ca.pem"), load(pki / f"{name}.pem")
    leaf.verify_directly_issued_by(ca)
    assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == name
    assert identity_of((pki / f"{name}.pem").read_bytes()) == name
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [name, "localhost", "party.example"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    public_key = leaf.public_key()
    assert isinstance(public_key, ec.EllipticCurvePublicKey)
    assert public_key.curve.name == "secp256r1"


def test_reuses_existing_ca_when_adding_an_identity(tmp_path: Path) -> None:
    make_development_pki(tmp_path, ["alice"])
    ca_before = (tmp_path / "ca.pem").read_bytes()
    alice_before = (tmp_path / "alice.pem").read_bytes()
    make_development_pki(tmp_path, ["bob"])
    assert (tmp_path / "ca.pem").read_bytes() == ca_before
    ca = load(tmp_path / "ca.pem")
    load(tmp_path / "bob.pem").verify_directly_issued_by(ca)
    assert (tmp_path / "alice.pem").read_bytes() == alice_before


def test_ca_certificate_without_key_is_an_error(tmp_path: Path) -> None:
    make_development_pki(tmp_path, ["alice"])
    (tmp_path / "ca.key").unlink()
    with pytest.raises(ValueError, match=r"ca\.pem: found without ca\.key"):
        make_development_pki(tmp_path, ["bob"])
    assert not (tmp_path / "bob.pem").exists()


def test_ca_key_without_certificate_is_an_error(tmp_path: Path) -> None:
    make_development_pki(tmp_path, ["alice"])
    (tmp_path / "ca.pem").unlink()
    with pytest.raises(ValueError, match=r"ca\.key: found without ca\.pem"):
        make_development_pki(tmp_path, ["bob"])


def test_corrupt_ca_is_an_error(tmp_path: Path) -> None:
    make_development_pki(tmp_path, ["alice"])
    (tmp_path / "ca.pem").write_text("garbage")
    with pytest.raises(ValueError, match="not a PEM certificate"):
        make_development_pki(tmp_path, ["bob"])


def test_ca_key_of_another_ca_is_an_error(tmp_path: Path) -> None:
    make_development_pki(tmp_path / "one", ["alice"])
    make_development_pki(tmp_path / "two", ["alice"])
    (tmp_path / "two" / "ca.key").replace(tmp_path / "one" / "ca.key")
    with pytest.raises(ValueError, match="not the private key"):
        make_development_pki(tmp_path / "one", ["bob"])


@pytest.mark.parametrize(
    "bad", ["", "Alice", "-alice", "al ice", "a/b", "../x", "alice\n", "a" * 64, "ca"]
)
def test_bad_identity_is_rejected_before_writing(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="invalid identity") as raised:
        make_development_pki(tmp_path / "out", ["alice", bad])
    assert repr(bad) in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_longest_identity_is_accepted(tmp_path: Path) -> None:
    name = "a" * 63
    make_development_pki(tmp_path, [name])
    assert identity_of((tmp_path / f"{name}.pem").read_bytes()) == name


def read_pair(directory: Path, name: str) -> tuple[bytes, bytes]:
    return (directory / f"{name}.key").read_bytes(), (directory / f"{name}.pem").read_bytes()


@pytest.fixture
def server(pki: Path) -> Iterator[int]:
    """A mutual-TLS echo server, as bob, that answers with the client's common name."""

    def who(_request: bytes, context: grpc.ServicerContext) -> bytes:
        return context.auth_context()["x509_common_name"][0]

    handler = grpc.method_handlers_generic_handler(
        "t.T", {"Echo": grpc.unary_unary_rpc_method_handler(who)}
    )
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    srv.add_generic_rpc_handlers((handler,))
    credentials = grpc.ssl_server_credentials(
        [read_pair(pki, "bob")],
        root_certificates=(pki / "ca.pem").read_bytes(),
        require_client_auth=True,
    )
    port = srv.add_secure_port("127.0.0.1:0", credentials)
    srv.start()
    try:
        yield port
    finally:
        srv.stop(grace=None)


def call(target: str, ca: Path, client: Path, name: str, *options: tuple[str, str | int]) -> bytes:
    key, cert = read_pair(client, name)
    credentials = grpc.ssl_channel_credentials(ca.read_bytes(), key, cert)
    with grpc.secure_channel(target, credentials, options=[NO_PROXY, *options]) as channel:
        return channel.unary_unary("/t.T/Echo")(b"", timeout=10)


def test_mutual_tls_handshake_reports_client_identity(pki: Path, server: int) -> None:
    assert call(f"localhost:{server}", pki / "ca.pem", pki, "alice") == b"alice"
    assert call(f"localhost:{server}", pki / "ca.pem", pki, "coordinator") == b"coordinator"


def test_target_name_override_matches_peer_identity(pki: Path, server: int) -> None:
    override = ("grpc.ssl_target_name_override", "bob")
    assert call(f"127.0.0.1:{server}", pki / "ca.pem", pki, "alice", override) == b"alice"


def test_target_name_override_of_another_identity_fails(pki: Path, server: int) -> None:
    override = ("grpc.ssl_target_name_override", "mallory")
    with pytest.raises(grpc.RpcError) as refused:
        call(f"127.0.0.1:{server}", pki / "ca.pem", pki, "alice", override)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_client_certificate_from_another_ca_is_refused(
    pki: Path, foreign_pki: Path, server: int
) -> None:
    # The client trusts the real CA, so only the server's check of the client can fail.
    with pytest.raises(grpc.RpcError) as refused:
        call(f"localhost:{server}", pki / "ca.pem", foreign_pki, "alice")
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_server_from_another_ca_is_refused(pki: Path, foreign_pki: Path, server: int) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        call(f"localhost:{server}", foreign_pki / "ca.pem", pki, "alice")
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
