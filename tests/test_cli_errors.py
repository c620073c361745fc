"""What `pprl` does with an exception: a PprlError is a message and an exit code, a bug keeps
its traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pprl.cli import main
from pprl.party.coordination.coordinator import CoordinatorError
from pprl.party.credentials import certs
from pprl.protocol.errors import InputError, PprlError


def _failing_pki(error: BaseException):
    def make(*args, **kwargs):
        raise error

    return make


def test_an_input_error_is_a_message_and_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["certs", "--out", str(tmp_path / "certs"), "Bad_Name"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pprl: error: ") and "invalid identity 'Bad_Name'" in err
    assert "Traceback" not in err


def test_an_operational_error_is_its_message_and_exit_1(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    error = CoordinatorError("bob at 127.0.0.1:9: UNAVAILABLE: connection refused")
    monkeypatch.setattr(certs, "make_development_pki", _failing_pki(error))
    assert main(["certs", "--out", str(tmp_path), "alice"]) == 1
    assert capsys.readouterr().err == f"pprl: error: {error}\n"


def test_a_pprl_error_exits_with_its_own_code(tmp_path: Path, capsys, monkeypatch) -> None:
    class Refused(PprlError):
        exit_code = 3

    monkeypatch.setattr(certs, "make_development_pki", _failing_pki(Refused("refused")))
    assert main(["certs", "--out", str(tmp_path), "alice"]) == 3
    assert capsys.readouterr().err == "pprl: error: refused\n"


def test_an_unexpected_exception_keeps_its_traceback(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(certs, "make_development_pki", _failing_pki(RuntimeError("bug")))
    with pytest.raises(RuntimeError, match="bug") as caught:
        main(["certs", "--out", str(tmp_path), "alice"])
    assert caught.traceback[-1].name == "make"  # raised where it happened, not re-wrapped


def test_interrupt_exits_130(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(certs, "make_development_pki", _failing_pki(KeyboardInterrupt()))
    assert main(["certs", "--out", str(tmp_path), "alice"]) == 130


def test_input_error_is_still_a_value_error() -> None:
    assert issubclass(InputError, ValueError) and InputError.exit_code == 2
    assert PprlError.exit_code == CoordinatorError.exit_code == 1
