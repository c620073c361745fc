"""The layers docs/architecture.md states, checked on the code itself: each package of pprl
imports only the packages below it, and the method (pprl.protocol) touches neither a file,
the network nor the daemon."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pprl"

# Each layer and what it may import of pprl (itself included). A new top-level package or
# module must be placed here, so the test fails until it is.
ALLOWED = {
    "protocol": {"protocol"},
    "files": {"files", "protocol", "failpoints"},
    "wire": {"wire"},
    "failpoints": set(),
    "party": {"party", "files", "protocol", "wire", "failpoints"},
    "bench": {"bench", "party", "files", "protocol", "wire"},
    "cli": {"cli", "bench", "party", "files", "protocol", "wire"},
    "__init__": set(),
    "__main__": {"cli"},
}
# What the method may not import from outside pprl: the network, the file system, processes.
PROTOCOL_FORBIDS = {"grpc", "google", "os", "pathlib", "shutil", "tempfile", "socket", "sqlite3"}
PROTOCOL_FORBIDS |= {"subprocess", "urllib", "http", "requests"}


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "wire" not in p.relative_to(PACKAGE).parts)


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(path: Path, placed: Path | None = None) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative imports resolved as if the file
    were at `placed` (default: where it is)."""
    parts = (placed or path).relative_to(PACKAGE).parts
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(("pprl", *parts[: -node.level]))
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            if module == "pprl":  # from pprl import failpoints: the names are modules
                found += [
                    (node.lineno, f"pprl.{alias.name}")
                    for alias in node.names
                    if not alias.name.startswith("__")  # pprl.__version__ is package metadata
                ]
    return found


def test_every_top_level_package_has_a_place_in_the_layers() -> None:
    layers = {_layer(path) for path in PACKAGE.rglob("*.py")}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_module_imports_only_the_layers_below_it(path: Path) -> None:
    layer = _layer(path)
    for line, module in _imports(path):
        parts = module.split(".")
        if parts[0] == "pprl" and len(parts) > 1:
            assert parts[1] in ALLOWED[layer], f"{path}:{line} ({layer}) imports {module}"
        elif layer == "protocol":
            assert parts[0] not in PROTOCOL_FORBIDS, f"{path}:{line} imports {module}"


def test_the_method_opens_no_file() -> None:
    """Reading and writing files is pprl.files' and the daemon's; the method's only reads are
    of data shipped inside packages (importlib.resources)."""
    for path in (PACKAGE / "protocol").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", f"{path}:{node.lineno} opens a file"


def test_the_layer_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """Relative and absolute imports alike (a check that saw nothing would pass whatever the
    code did)."""
    fake = tmp_path / "fake.py"
    fake.write_text("from ..party import work\nimport grpc\nfrom pprl import cli\n")
    found = [module for _, module in _imports(fake, PACKAGE / "protocol" / "fake.py")]
    assert found == ["pprl.party", "grpc", "pprl", "pprl.cli"]


def test_every_error_the_package_defines_is_one_the_command_line_reports() -> None:
    """An exception class of ours that is not a PprlError would reach the user as a
    traceback instead of its message."""
    import importlib
    import inspect
    import pkgutil

    import pprl
    from pprl.protocol.errors import PprlError

    defined = []
    for info in pkgutil.walk_packages(pprl.__path__, "pprl."):
        if info.name.startswith("pprl.wire") or info.name == "pprl.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and issubclass(cls, BaseException):
                defined.append(cls)
    assert len(defined) >= 18
    assert [cls.__qualname__ for cls in defined if not issubclass(cls, PprlError)] == []
