"""The user documentation stays short enough to be read: a README a newcomer reads in five
minutes, whose first screen says how to run the demo and the tests, and user pages (the
README and docs/*.md; the research notes in docs/research/ are apart) of bounded length."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_LIMIT = 12_000
USER_DOCS_LIMIT = 120_000
FIRST_SCREEN_LINES = 40


def user_docs() -> list[Path]:
    """The README, the pages directly in docs/ (not docs/research/) and the annotated example
    configuration."""
    return [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*.toml"))]


def test_the_readme_is_at_most_12000_characters() -> None:
    size = len(README.read_text(encoding="utf-8"))
    assert size <= README_LIMIT, f"README.md is {size:,} characters (at most {README_LIMIT:,})"


def test_the_user_docs_are_at_most_120000_characters_together() -> None:
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text("utf-8")) for p in user_docs()}
    assert all("research" not in name for name in sizes)
    total = sum(sizes.values())
    assert total <= USER_DOCS_LIMIT, f"{total:,} characters in all: {sizes}"


def test_the_readme_first_screen_gives_the_demo_and_the_tests() -> None:
    first_screen = "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN_LINES])
    assert "make demo" in first_screen
    assert "make test" in first_screen
