"""Every relative link in the documentation leads somewhere: the file exists and, where the
link names a section of a Markdown file, that file has a heading of that name (GitHub's
anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# [text](target) and ![alt](target), the text possibly across lines; an optional "title".
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
# A code span may go on across a line break, never across a blank line.
CODE = re.compile(r"`(?:[^`\n]|\n(?![ \t]*\n))+`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return CODE.sub("", FENCE.sub("", text))


def links(path: Path) -> list[str]:
    text = _prose(path.read_text(encoding="utf-8"))
    found = [m.group(1) for m in LINK.finditer(text)]
    found += [m.group(1) for m in REFERENCE.finditer(text)]
    return [t for t in found if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for m in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(m.group(1))
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return found


def broken(path: Path) -> list[str]:
    bad = []
    for target in links(path):
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor.lower() not in anchors(dest):
            bad.append(f"{target}: no such heading")
    return bad


def test_there_are_docs() -> None:
    assert (ROOT / "docs" / "research" / "index.md") in DOCS


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert broken(path) == []
