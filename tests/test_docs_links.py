"""The README is a front door to docs/: every page there is linked from it, and every relative link of the README and
the pages reaches a file that exists and, where it names one, a heading of that file (GitHub's anchors)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
"""Every Markdown file of the documentation."""

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)


def _prose(path: Path) -> str:
    """The file without its code blocks and code spans, where a `#` or `[x](y)` is no heading or link."""
    return _CODE_SPAN.sub("", _FENCE.sub("", path.read_text(encoding="utf-8")))


def _links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path))


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the file's headings: lower case, punctuation dropped, spaces as `-`, repeats `-1`…"""
    anchors: set[str] = set()
    for heading in _HEADING.findall(_prose(path)):
        base = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, repeat = base, 0
        while anchor in anchors:
            repeat += 1
            anchor = f"{base}-{repeat}"
        anchors.add(anchor)
    return anchors


def _relative_links() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for target in _links(page):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):
                yield page, target


def _broken(page: Path, target: str) -> str | None:
    """What is wrong with a relative link of the page, or None when it reaches its file and heading."""
    path_part, _, anchor = target.partition("#")
    linked = (page.parent / path_part).resolve() if path_part else page
    if not linked.exists():
        return f"{page.name} links {target}, which does not exist"
    if anchor and (linked.suffix != ".md" or anchor not in _anchors(linked)):
        return f"{page.name} links {target}: {linked.name} has no such heading"
    return None


def test_the_anchors_are_github_s_for_headings_with_punctuation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    headings = [
        "# With KNIME's AI extension",
        "## Set-up: two commands",
        "```bash\n# no heading\n```",
        "## Set-up: two commands",
    ]
    page.write_text("\n\n".join(headings) + "\n")
    assert _anchors(page) == {"with-knimes-ai-extension", "set-up-two-commands", "set-up-two-commands-1"}


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(README.parent / target.split("#", 1)[0]).resolve() for target in _links(README)}
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "docs/ holds no pages"
    assert not [page.name for page in pages if page.resolve() not in linked], "docs pages the README does not link"


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Page\n")
    assert _broken(page, "gone.md") == "page.md links gone.md, which does not exist"
    assert _broken(page, "page.md#elsewhere") == "page.md links page.md#elsewhere: page.md has no such heading"
    assert _broken(page, "#page") is None and _broken(page, "page.md") is None


@pytest.mark.parametrize(
    ("page", "target"),
    list(_relative_links()),
    ids=lambda value: str(value.relative_to(ROOT)) if isinstance(value, Path) else value,
)
def test_every_relative_link_reaches_a_file_and_heading_that_exist(page: Path, target: str) -> None:
    assert _broken(page, target) is None
