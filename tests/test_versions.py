"""Both parties must run the same software: AGREE compares versions before digests."""

from __future__ import annotations

from pprl import __version__
from pprl.party.versions import check_versions


def test_the_same_version_passes() -> None:
    assert check_versions("0.1.0", "0.1.0") is None
    assert check_versions(__version__, __version__, "bob") is None


def test_a_different_version_is_refused_naming_both() -> None:
    why = check_versions("0.1.0", "0.2.0", "bob")
    assert why is not None
    assert "this party runs pprl 0.1.0" in why and "bob runs pprl 0.2.0" in why
    assert "same version" in why


def test_versions_are_compared_exactly() -> None:
    """A local build or pre-release of the same number is another version."""
    assert check_versions("0.1.0", "0.1.0+local") is not None
    assert check_versions("0.1.0", "0.1.0rc1") is not None


def test_a_peer_that_states_no_version_is_refused() -> None:
    why = check_versions("0.1.0", "")
    assert why is not None and "the peer runs pprl (version not stated)" in why
