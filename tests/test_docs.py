"""The docs a user has: no citation of a document outside the repository, every citation of
``docs/method.md`` names one of its headings, and every relative link resolves."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted((REPO / "docs").glob("*.md"))
MARKDOWN = [REPO / "README.md", *DOCS]
SOURCES = sorted((REPO / "medeval").rglob("*.py"))
# A citation: the path, a comma and one or more quoted titles; in a comment a "#" may come between.
CITATION = re.compile(r'docs/method\.md,\s*(?:#\s*)?("[^"\n]+"(?:,\s*"[^"\n]+")*)')
CITED = "docs/method.md" + ","  # split: this file would cite itself
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _headings(path: Path) -> list[str]:
    """The headings of a markdown file, outside code blocks."""
    text = re.sub(r"(?ms)^```.*?^```", "", path.read_text())
    return [m.group(1).strip() for m in re.finditer(r"(?m)^#{1,6} (.+)$", text)]


def _text(path: Path) -> str:
    """The file's text with escaped quotes unescaped (citations inside string literals)."""
    return path.read_text().replace('\\"', '"').replace("\\'", "'")


@pytest.mark.parametrize("path", [*MARKDOWN, *SOURCES], ids=lambda p: str(p.relative_to(REPO)))
def test_no_file_cites_a_spec_the_user_lacks(path):
    text = path.read_text()
    lines = [n for n, line in enumerate(text.splitlines(), 1) if "SPEC" in line or "§" in line]
    assert not lines, f"{path.relative_to(REPO)} cites SPEC or a § on lines {lines}"


def test_every_method_citation_names_a_heading():
    headings = set(_headings(REPO / "docs" / "method.md"))
    assert "Rectified scores" in headings  # the parser reads the headings
    cited = 0
    scripts = [*(REPO / "tests").rglob("*.py"), *(REPO / "benchmarks").rglob("*.py")]
    for path in [*MARKDOWN, *SOURCES, *sorted(scripts)]:
        text = _text(path)
        # every mention of method.md followed by a comma is followed by a quoted title
        assert text.count(CITED) == len(CITATION.findall(text)), path
        for m in CITATION.finditer(text):
            for title in re.findall(r'"([^"]+)"', m.group(1)):
                cited += 1
                assert title in headings, f'{path.relative_to(REPO)}: no heading "{title}"'
    assert cited > 50


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    text = re.sub(r"(?ms)^```.*?^```", "", path.read_text())
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), f"{path.relative_to(REPO)}: {target} does not exist"
        if anchor and dest.suffix == ".md":
            anchors = {_slug(h) for h in _headings(dest)}
            assert anchor in anchors, f"{path.relative_to(REPO)}: no heading #{anchor} in {file}"
