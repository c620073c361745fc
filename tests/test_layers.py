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
    # What `pprl bench`, `pprl assess-reference` and `pprl dictionary` run; the research code
    # only the benchmark scripts use lives outside the package, in benchmarks/lab.
    "bench": {"bench", "party", "files", "protocol"},
    "cli": {"cli", "bench", "party", "files", "protocol", "wire"},
    "__init__": set(),
    "__main__": {"cli"},
}
# The benchmarks' modules (benchmarks/lab, imported as `lab`) and the scripts: the installed
# package runs without them.
BENCHMARKS = {"lab", "benchmarks"}
# What the method may not import from outside pprl: the network, the file system, processes.
PROTOCOL_FORBIDS = {"grpc", "google", "os", "pathlib", "shutil", "tempfile", "socket", "sqlite3"}
PROTOCOL_FORBIDS |= {"subprocess", "urllib", "http", "requests"}


# Inside the method and the daemon, sub-packages by concern, each importing only itself and
# those listed (a module directly in the package is the base below every sub-package, or
# the top above them all, unless placed otherwise here). Imports made for annotations alone
# (under `if TYPE_CHECKING:`) may name a type of any layer of the same package: no code runs
# them (test_no_module_imports_one_that_imports_it_back still counts them).
SUB_LAYERS = {
    "protocol": {
        "base": set(),
        "data": {"base"},
        "model": {"base", "data"},
        "vectors": {"base", "data", "model"},
        "linkage": {"base", "data", "model", "vectors"},
        "privacy": {"base", "data", "model", "vectors", "linkage"},
        # Sealed linkage's parts (blinded keys, encrypted scoring), beside the privacy
        # measurements.
        "sealed": {"base", "data", "model", "vectors", "linkage"},
        # What the agreement settles, as the encodings read it: the method's settings, the
        # agreement's view, own training and the attacks on a release.
        "agreed": {"base", "data", "model", "vectors", "linkage", "privacy", "sealed"},
        # Each encoding, handed the agreement by its view, and the registry of them.
        "encodings": {"base", "data", "model", "vectors", "linkage", "privacy", "sealed", "agreed"},
        # The agreement, which holds an encoding by the registry, and what runs on it.
        "top": {
            "base",
            "data",
            "model",
            "vectors",
            "linkage",
            "privacy",
            "sealed",
            "agreed",
            "encodings",
        },
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
    "party": {"config", "options", "reasons", "tls_files", "versions", "wire_types"},
}
# Modules placed in a layer other than the one their place in the tree gives.
PLACED_MODULES = {
    "protocol": {
        "method_settings": "agreed",
        "agreement_view": "agreed",
        "own_training": "agreed",
        "release_attacks": "agreed",
        # The sealed mode whole in its sub-package: its encoding, registered beside the
        # others, and the entries it reads exactly; its expected linkage, beside the others'.
        "sealed.encoding": "encodings",
        "sealed.exact_entries": "encodings",
        "sealed.expectation": "top",
    },
    "party": {},
}


def _sub_layer(package: str, parts: tuple[str, ...]) -> str:
    """The sub-layer of pprl.<package>.<parts...> (parts without the .py suffix)."""
    if not parts or parts == ("__init__",):
        return "top"
    placed = PLACED_MODULES[package].get(".".join(parts).removesuffix(".__init__"))
    if placed is not None:
        return placed
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
    package = ".".join(("pprl", *parts[:-1]))
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolved(node, package)
            found.append((node.lineno, module))
            # from pprl import failpoints, from pprl.protocol.sealed import session: the
            # names are modules
            found += [
                (node.lineno, f"{module}.{alias.name}")
                for alias in node.names
                if _is_module(f"{module}.{alias.name}")
            ]
    return found


def _resolved(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` names, relative to `package` (the importing file's)."""
    if not node.level:
        return node.module or ""
    above = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*above, *([node.module] if node.module else [])])


def _is_module(module: str) -> bool:
    """Whether a dotted name of pprl is a module or package of it (not a name defined in one)."""
    if not module.startswith("pprl."):
        return module == "pprl"
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


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


def test_the_package_never_imports_the_benchmarks() -> None:
    """Every module of pprl, the generated ones included, and any import (a function's too)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, module in _imports(path):
            assert module.split(".")[0] not in BENCHMARKS, f"{path}:{line} imports {module}"


def test_the_benchmarks_check_sees_an_import_of_the_lab(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text("def f():\n    from lab.hash_bins import x\n    import benchmarks.lab\n")
    found = [module.split(".")[0] for _, module in _imports(fake, PACKAGE / "cli" / "fake.py")]
    assert found == ["lab", "benchmarks"] and set(found) <= BENCHMARKS


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
    for package, placed in PLACED_MODULES.items():
        for module in placed:
            assert _is_module(f"pprl.{package}.{module}"), f"{package}.{module} is gone"


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
    assert runtime == ["typing", "pprl.protocol.linkage", "pprl.protocol.linkage.matching"]
    layers = {_sub_layer("protocol", tuple(m.split(".")[2:])) for m in runtime[1:]}
    assert layers == {"linkage"} and "linkage" not in SUB_LAYERS["protocol"]["data"]
    assert _sub_layer("protocol", ("agreement",)) == "top"
    assert _sub_layer("protocol", ("errors",)) == "base"
    assert _sub_layer("protocol", ("method_settings",)) == "agreed"
    assert _sub_layer("protocol", ("sealed", "scoring")) == "sealed"
    assert _sub_layer("protocol", ("sealed", "expectation")) == "top"


def _module_name(path: Path, root: Path) -> str:
    """The dotted name of a file of the package at `root` (a package: its directory's)."""
    return ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")


def _module_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at `root` and the modules of it that it imports: at
    start-up, inside functions and under `if TYPE_CHECKING:` alike, relative imports
    resolved; `from package import name` the module `name` when it is one, else the package.
    Importing a module from outside its package runs the package's __init__ first: an edge
    too."""
    modules = {_module_name(path, root): path for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = _resolved(node, package)
                targets |= {f"{base}.{alias.name}" for alias in node.names}
        edges = set()
        for target in targets:
            while target and target not in modules:  # a name defined in a module: the module
                target = target.rpartition(".")[0]
            parts = target.split(".") if target else []
            for end in range(1, len(parts) + 1):
                enclosing = ".".join(parts[:end])
                outside = not (name == enclosing or name.startswith(f"{enclosing}."))
                if enclosing in modules and (end == len(parts) or outside):
                    edges.add(enclosing)
        graph[name] = edges - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Each module imports only what lies below it: no circle of imports, counting those
    made inside functions and for annotations alone, which only hide one."""
    assert _cycles(_module_graph(PACKAGE)) == []


def test_the_cycle_check_sees_a_planted_cycle(tmp_path: Path) -> None:
    """An annotation-only import closing a circle with a function's relative import, and a
    package whose __init__ imports a module that imports one of the package's modules (a
    check that saw nothing would pass whatever the code did)."""
    fake = tmp_path / "fake"
    (fake / "encodings").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "settings.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from fake.agreement import Agreement\n",
        "agreement.py": "def hold() -> None:\n    from . import settings\n",
        "top.py": "import fake.agreement\nfrom fake import settings\n",
        "encodings/__init__.py": "from fake.sealed import Sealed\n",
        "encodings/base.py": "",
        "sealed.py": "from .encodings.base import Base\n",
    }
    for name, text in files.items():
        (fake / name).write_text(text)
    graph = _module_graph(fake)
    assert graph["fake.top"] == {"fake.agreement", "fake.settings"}
    assert graph["fake.sealed"] == {"fake.encodings", "fake.encodings.base"}
    assert _cycles(graph) == [
        ["fake.agreement", "fake.settings"],
        ["fake.encodings", "fake.sealed"],
    ]
    (fake / "agreement.py").write_text("")
    (fake / "encodings" / "__init__.py").write_text("")
    assert _cycles(_module_graph(fake)) == []


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


def _uncommented_function_imports(path: Path) -> list[int]:
    """Lines of imports inside functions that no comment explains: a comment on the line, or
    one heading the run of imports (blank lines and other imports between) it belongs to."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Import | ast.ImportFrom) or "#" in lines[node.lineno - 1]:
                continue
            above = node.lineno - 2
            while above >= 0 and (
                not lines[above].strip() or lines[above].lstrip().startswith(("from ", "import "))
            ):
                above -= 1
            if not lines[above].lstrip().startswith("#"):
                found.append(node.lineno)
    return found


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_import_inside_a_function_says_why_it_waits(path: Path) -> None:
    """Imports belong at the top of a module; one inside a function is there for start-up
    time and says so, never to dodge a circle (the no-circle test counts it anyway)."""
    assert _uncommented_function_imports(path) == [], f"{path}: explain or hoist these imports"


def test_the_lazy_import_check_sees_an_unexplained_one(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(
        "def a():\n    # lazy: start-up time\n    import numpy\n\n    from os import path\n"
        "def b():\n    x = 1\n    import json\n"
    )
    assert _uncommented_function_imports(fake) == [8]
