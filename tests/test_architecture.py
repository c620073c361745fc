"""docs/architecture.md matches the code: its module map is the one the code renders, so every
package and module is named there, and every package says in its docstring what it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import architecture_map


def test_the_module_map_is_the_codes() -> None:
    assert architecture_map.current() == architecture_map.render(), (
        "docs/architecture.md's module map is stale: run `make docs`"
    )


@pytest.mark.parametrize("package", architecture_map.packages(), ids=lambda p: p.name)
def test_every_package_says_what_it_holds(package: Path) -> None:
    assert architecture_map.first_sentence(package / "__init__.py"), (
        f"{package}/__init__.py has no docstring for the module map"
    )


def test_every_module_is_named_in_the_architecture() -> None:
    text = architecture_map.ARCHITECTURE.read_text(encoding="utf-8")
    for package in architecture_map.packages():
        name = package.relative_to(architecture_map.ROOT).as_posix() + "/"
        assert f"**`{name}`**" in text, name
        for module in architecture_map.modules(package):
            assert f"`{module}`" in text, f"{name}{module}.py"


def test_a_moved_module_makes_the_map_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison sees a module the map does not name (a check that saw nothing would
    pass whatever the code did)."""
    fake = tmp_path / "pprl"
    (fake / "inner").mkdir(parents=True)
    (fake / "__init__.py").write_text('"""Top."""\n')
    (fake / "inner" / "__init__.py").write_text('"""Inner. More."""\n')
    (fake / "inner" / "thing.py").write_text("")
    monkeypatch.setattr(architecture_map, "ROOT", tmp_path)
    monkeypatch.setattr(architecture_map, "PACKAGE", fake)
    rendered = architecture_map.render()
    assert "**`pprl/inner/`** Inner." in rendered and "`thing`" in rendered
    (fake / "inner" / "other.py").write_text("")
    assert architecture_map.render() != rendered
