"""The module map at the end of docs/architecture.md, rendered from the code: every package of
pprl with the first sentence of its docstring and the names of its modules, so the map cannot
fall behind a move (tests/test_architecture.py compares; `make docs` rewrites it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pprl"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
START = "<!-- module map: rendered from the code by `make docs`; a test fails when it drifts -->"
END = "<!-- end of the module map -->"


def packages() -> list[Path]:
    """Every package directory of pprl, the top first, then in path order."""
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def first_sentence(path: Path) -> str:
    """The docstring's first sentence, on one line ("" when there is none)."""
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(text.split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[: end + 1]


def modules(package: Path) -> list[str]:
    """The package's own modules (not its sub-packages), by name."""
    return sorted(p.stem for p in package.glob("*.py") if p.name != "__init__.py")


def render() -> str:
    """The map: a heading per package, its docstring's first sentence, its modules."""
    lines = [START, ""]
    for package in packages():
        name = package.relative_to(ROOT).as_posix() + "/"
        lines += [f"**`{name}`** {first_sentence(package / '__init__.py')}", ""]
        names = modules(package)
        if names:
            lines += [" · ".join(f"`{m}`" for m in names), ""]
    return "\n".join([*lines, END])


def current() -> str:
    """The map as docs/architecture.md holds it."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return text[text.index(START) : text.index(END) + len(END)]


def rewrite() -> None:
    """Replace the map in docs/architecture.md with the code's."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    ARCHITECTURE.write_text(text.replace(current(), render()), encoding="utf-8")


if __name__ == "__main__":
    rewrite()
