"""A daemon checks its own setup before serving: mistakes are named at start-up, with the
file and the setting, instead of surfacing mid-run with another reason."""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from pprl.party.config import PartyConfig, PeerEndpoint, load_config
from pprl.party.credentials.certs import make_development_pki
from pprl.party.local import generated_deployment
from pprl.party.service.startup import (
    check_certificate,
    check_roles,
    check_startup,
    check_state_dir,
)
from pprl.party.tls_files import TlsFiles
from pprl.protocol.errors import InputError


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    return generated_deployment(tmp_path_factory.mktemp("startup"), 20, 1, reference_rows=50)


@pytest.fixture
def config(deployment) -> PartyConfig:
    return load_config(deployment.parties["alice"].config)


def test_a_well_made_deployment_passes(config: PartyConfig) -> None:
    check_startup(config)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"coordinator_identity": "bob"}, "coordinator.identity"),
        ({"peers": (PeerEndpoint("alice", "127.0.0.1:1"),)}, "peer.identity"),
        (
            {"peers": (PeerEndpoint("bob", "127.0.0.1:1"), PeerEndpoint("alice", "h:2"))},
            "peers[1].identity",
        ),
        ({"coordinator_identity": "alice"}, "coordinator.identity"),
    ],
)
def test_self_peers_and_coordinator_must_be_different_identities(config, change, field) -> None:
    with pytest.raises(InputError) as caught:
        check_roles(dataclasses.replace(config, **change))
    assert caught.value.field == field and "different identities" in str(caught.value)


def test_a_key_of_another_certificate_is_named_as_such(config, deployment) -> None:
    certs = deployment.workdir / "certs"
    tls = TlsFiles(config.tls.cert, certs / "bob.key", config.tls.ca)
    with pytest.raises(InputError, match="is not the private key of") as caught:
        check_certificate(dataclasses.replace(config, tls=tls))
    assert caught.value.path == str(certs / "bob.key")


def test_a_certificate_for_another_identity_is_refused_before_serving(config, deployment):
    certs = deployment.workdir / "certs"
    tls = TlsFiles(certs / "bob.pem", certs / "bob.key", config.tls.ca)
    with pytest.raises(InputError, match="names bob, but this daemon's identity is 'alice'"):
        check_certificate(dataclasses.replace(config, tls=tls))


def test_an_expired_certificate_or_one_from_another_ca_is_refused(config, tmp_path) -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=400)
    with pytest.raises(InputError, match="not now"):
        check_certificate(config, now=later)
    make_development_pki(tmp_path, ["alice"])
    tls = TlsFiles(tmp_path / "alice.pem", tmp_path / "alice.key", config.tls.ca)
    with pytest.raises(InputError, match="was not issued by the CA"):
        check_certificate(dataclasses.replace(config, tls=tls))


def test_a_file_that_is_no_certificate_is_named(config, tmp_path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    with pytest.raises(InputError, match="is not a PEM certificate") as caught:
        check_certificate(dataclasses.replace(config, tls=dataclasses.replace(config.tls, ca=junk)))
    assert caught.value.path == str(junk)


def test_a_state_directory_under_a_regular_file_is_named(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(InputError, match="state directory cannot be made") as caught:
        check_state_dir(blocker / "state")
    assert caught.value.path == str(blocker / "state")


def _serve(config_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pprl", "party", "serve", "--config", str(config_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_daemon_exits_with_the_reason_instead_of_failing_to_bind(deployment, tmp_path):
    text = deployment.parties["alice"].config.read_text()
    key_line = next(line for line in text.splitlines() if line.startswith("key = "))
    bob_key = deployment.workdir / "certs" / "bob.key"
    wrong = tmp_path / "alice-wrong-key.toml"
    wrong.write_text(text.replace(key_line, f'key = "{bob_key}"'))
    result = _serve(wrong)
    assert result.returncode == 2
    assert "is not the private key of" in result.stderr
    assert "bind" not in result.stderr.lower() and "Traceback" not in result.stderr
