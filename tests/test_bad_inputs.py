"""The bad-input corpus (tests/bad_inputs/cases.toml) against the command line: each case
breaks one thing of a working configuration and must get its own clear error, exit 2."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pprl.cli import main
from pprl.party.credentials.certs import make_development_pki
from pprl.party.local import generated_deployment

HERE = Path(__file__).parent / "bad_inputs"
CASES = tomllib.loads((HERE / "cases.toml").read_text(encoding="utf-8"))["case"]


@pytest.fixture(scope="module")
def working(tmp_path_factory) -> tuple[str, Path]:
    """A configuration `pprl party check` accepts, and its certificate directory."""
    workdir = tmp_path_factory.mktemp("corpus")
    deployment = generated_deployment(workdir, 40, 5, reference_rows=60)
    return deployment.parties["alice"].config.read_text(), workdir / "certs"


def _expired_leaf(certs: Path, out: Path) -> tuple[Path, Path]:
    """alice's name, the deployment's CA, valid for one day two years ago."""
    ca_key = serialization.load_pem_private_key((certs / "ca.key").read_bytes(), None)
    ca = x509.load_pem_x509_certificate((certs / "ca.pem").read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    then = dt.datetime.now(dt.UTC) - dt.timedelta(days=730)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(then)
        .not_valid_after(then + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("alice")]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "alice.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (out / "alice.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return out / "alice.pem", out / "alice.key"


def _certificate(recipe: str, certs: Path, tmp: Path) -> tuple[Path, Path]:
    if recipe == "other-key":
        return certs / "alice.pem", certs / "bob.key"
    if recipe == "other-identity":
        return certs / "bob.pem", certs / "bob.key"
    if recipe == "other-ca":
        issued = make_development_pki(tmp / "other-ca", ["alice"])
        return issued["alice"]
    if recipe == "expired":
        return _expired_leaf(certs, tmp / "expired")
    raise AssertionError(f"unknown certificate recipe {recipe!r}")


def _set(text: str, table: str, key: str, value: str) -> str:
    """`key = value` (TOML text) in place of the key's line in `table` ("" the top level)."""
    start = text.index(f"[{table}]\n") + len(table) + 3 if table else 0
    end = text.find("\n[", start)
    end = len(text) if end < 0 else end + 1
    section, count = re.subn(rf"(?m)^{key} = .*$", lambda _: f"{key} = {value}", text[start:end])
    assert count == 1, f"no {table}.{key} in the configuration"
    return text[:start] + section + text[end:]


def _set_path(text: str, table: str, key: str, value: Path) -> str:
    return _set(text, table, key, f'"{value}"')


def _add(text: str, table: str, line: str) -> str:
    if f"[{table}]\n" in text:
        return text.replace(f"[{table}]\n", f"[{table}]\n{line}\n", 1)
    return text + f"[{table}]\n{line}\n"


def _configuration(case: dict, text: str, certs: Path, tmp: Path) -> str:
    fill = {"here": str(HERE), "certs": str(certs), "tmp": str(tmp)}
    for table, key, value in case.get("set", []):
        text = _set(text, table, key, value.format(**fill))
    for old, new in case.get("replace", []):
        assert old in text, f"{case['name']}: {old!r} is not in the configuration"
        text = text.replace(old, new.format(**fill), 1)
    for table, line in case.get("add", []):
        text = _add(text, table, line)
    if "records" in case:
        text = _set_path(text, "records", "path", HERE / case["records"])
    if "reference" in case:
        text = _set_path(text, "reference", "path", HERE / case["reference"])
    if "certificate" in case:
        cert, key = _certificate(case["certificate"], certs, tmp)
        text = _set_path(_set_path(text, "tls", "cert", cert), "tls", "key", key)
    return text


def test_the_corpus_is_large_and_every_case_is_named_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) >= 40 and len(set(names)) == len(names)
    for kind in ("records", "reference", "config", "certificate"):
        assert sum(name.startswith(f"{kind}:") for name in names) >= 5, kind


def test_the_working_configuration_passes(working, tmp_path, capsys) -> None:
    text, _ = working
    path = tmp_path / "alice.toml"
    path.write_text(text)
    assert main(["party", "check", "--config", str(path)]) == 0
    assert "configuration, certificate and state directory are fine" in capsys.readouterr().out


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_each_bad_input_gets_its_message(case, working, tmp_path, capsys) -> None:
    text, certs = working
    path = tmp_path / "alice.toml"
    path.write_text(_configuration(case, text, certs, tmp_path), encoding="utf-8")
    code = main(["party", "check", "--config", str(path)])
    err = capsys.readouterr().err
    assert code == case.get("exit", 2), err
    assert case["message"] in err, err
    assert "Traceback" not in err
    if "absent" in case:
        assert case["absent"] not in err, err
