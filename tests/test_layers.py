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


# Inside the method and the daemon, sub-packages by concern, each importing only itself and
# those listed (a module directly in the package is the base below every sub-package, or
# the top above them all, as placed here). Imports made for annotations alone (under
# `if TYPE_CHECKING:`) may name a type of any layer of the same package: no code runs them.
SUB_LAYERS = {
    "protocol": {
        "base": set(),
        "data": {"base"},
        "model": {"base", "data"},
        "vectors": {"base", "data", "model"},
        "linkage": {"base", "data", "model", "vectors"},
        "privacy": {"base", "data", "model", "vectors", "linkage"},
        # Sealed linkage's parts (blinded keys), beside the privacy measurements.
        "sealed": {"base", "data", "model", "vectors", "linkage"},
        # The agreement holds an encoding and each encoding is handed the agreement: one
        # layer, in two places.
        "encodings": {"base", "data", "model", "vectors", "linkage", "privacy", "sealed", "top"},
        "top": {"base", "data", "model", "vectors", "linkage", "privacy", "sealed", "encodings"},
    },
    "party": {
        "base": set(),
        "credentials": {"base"},
        "storage": {"base", "credentials"},
        "peering": {"base", "credentials", "storage"},
        # The run report, read from a state directory (LINK writes it; pprl report again).
        "reporting": {"base", "storage"},
        "phases": {"base", "credentials", "storage", "peering", "reporting"},
        "service": {"base", "credentials", "storage", "peering", "phases"},
        "coordination": {"base", "credentials", "storage"},
        "top": {"base", "credentials", "storage", "coordination", "reporting"},
    },
}
BASE_MODULES = {
    "protocol": {"errors", "progress", "phases", "metrics"},
    "party": {"config", "reasons", "tls_files", "versions", "wire_types"},
}


def _sub_layer(package: str, parts: tuple[str, ...]) -> str:
    """The sub-layer of pprl.<package>.<parts...> (parts without the .py suffix)."""
    if not parts or parts == ("__init__",):
        return "top"
    if len(parts) > 1:
        return parts[0]
    if parts[0] in SUB_LAYERS[package]:
        return parts[0]  # the sub-package itself
    return "base" if parts[0] in BASE_MODULES[package] else "top"


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


def _runtime_imports(path: Path, placed: Path | None = None) -> list[tuple[int, str]]:
    """(line, module) of the imports outside `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        inner.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",)
        for stmt in node.body
        for inner in ast.walk(stmt)
        if isinstance(inner, ast.Import | ast.ImportFrom)
    }
    return [(line, module) for line, module in _imports(path, placed) if line not in typing_only]


@pytest.mark.parametrize(
    "path",
    [p for p in _sources() if _layer(p) in SUB_LAYERS],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_each_sub_package_imports_only_those_below_it(path: Path) -> None:
    package = _layer(path)
    own = _sub_layer(package, tuple(path.relative_to(PACKAGE / package).with_suffix("").parts))
    allowed = SUB_LAYERS[package][own] | {own}
    for line, module in _runtime_imports(path):
        parts = tuple(module.split("."))
        if parts[:2] != ("pprl", package):
            continue
        target = _sub_layer(package, parts[2:])
        assert target in allowed, f"{path}:{line} ({own}) imports {module} ({target})"


def test_every_module_of_the_method_and_the_daemon_has_a_sub_layer() -> None:
    """A new sub-package must be placed in SUB_LAYERS; a new module directly in the package
    is the top unless it is named a base module."""
    for package, layers in SUB_LAYERS.items():
        for path in (PACKAGE / package).iterdir():
            if path.is_dir() and (path / "__init__.py").exists():
                assert path.name in layers, f"{path} is not placed in SUB_LAYERS"
    for package, modules in BASE_MODULES.items():
        for module in modules:
            assert (PACKAGE / package / f"{module}.py").exists(), f"{package}.{module} is gone"


def test_the_sub_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """A data module importing the linkage, and the same import for annotations only."""
    fake = tmp_path / "fake.py"
    fake.write_text(
        "from typing import TYPE_CHECKING\n"
        "from pprl.protocol.linkage import matching\n"
        "if TYPE_CHECKING:\n"
        "    from pprl.protocol.agreement import Agreement\n"
    )
    runtime = [
        module for _, module in _runtime_imports(fake, PACKAGE / "protocol" / "data" / "x.py")
    ]
    assert runtime == ["typing", "pprl.protocol.linkage"]
    layers = [_sub_layer("protocol", tuple(m.split(".")[2:])) for m in runtime[1:]]
    assert layers == ["linkage"] and "linkage" not in SUB_LAYERS["protocol"]["data"]
    assert _sub_layer("protocol", ("agreement",)) == "top"
    assert _sub_layer("protocol", ("errors",)) == "base"


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
