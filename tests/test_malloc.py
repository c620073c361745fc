"""The daemon caps glibc's malloc arenas unless its operator chose a number."""

from __future__ import annotations

import platform

import pytest

from pprl.party.service.malloc import limit_malloc_arenas


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_the_arenas_are_capped_on_glibc(monkeypatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is True


def test_an_operators_malloc_arena_max_rules(monkeypatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_malloc_arenas() is False
