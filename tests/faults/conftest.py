"""The fixtures both fault modules build on their own `pair` of daemons (the reference
release in test_faults.py, sealed linkage in test_sealed_faults.py)."""

from __future__ import annotations

import pytest

from tests.faults.test_faults import RECORDS, Pair


@pytest.fixture(scope="module")
def undisturbed(pair: Pair) -> dict[str, str]:
    """The linkage of an undisturbed run; a second one gives the same bytes (under sealed
    linkage too: its flooding and random factors change the ciphertexts, not the decisions)."""
    first = pair.linkage(pair.finish())
    assert first["alice"].count("\n") > RECORDS // 2
    assert pair.linkage(pair.finish()) == first
    return first


@pytest.fixture
def fresh(pair: Pair, undisturbed) -> Pair:
    """Daemons up, no run open: each case starts from the same point."""
    pair.ensure_running()
    return pair
