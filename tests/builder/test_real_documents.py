"""Issue 21 proof: real documents of other shapes (tests/corpus/shapes, see its SOURCES.md) build --strict
clean or with only their true findings, with a sensible title, sections and summaries."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphsite.usecases.build import BuiltPage, checked_page, unaccepted
from tests.builder.conftest import parse_html

SHAPES = Path(__file__).resolve().parents[1] / "corpus" / "shapes"


def _text(fragment: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


@pytest.fixture(scope="module")
def pages() -> dict[str, BuiltPage]:
    return {path.stem: checked_page(path) for path in sorted(SHAPES.glob("*.md"))}


def test_the_awesome_list_is_titled_by_its_logo_and_sectioned_by_category(pages):
    page = pages["awesome-nodejs-readme"]
    titles = [s.title for s in page.report.sections]
    assert page.report.title == "Awesome Node.js"  # the logo's alt, not the sponsor banner, not "Contents"
    # `## Packages` holds 45 `###` categories and most of the words: each category is a section
    assert titles[:5] == ["Contents", "Official", "Packages", "Mad science", "Command-line apps"]
    assert len(titles) == 67 and titles[-1] == "Related lists"
    assert unaccepted(page) == [] and page.report.warnings == ()
    mad_science = page.report.sections[3]
    assert _text(mad_science.summary_html).startswith("webtorrent - Streaming torrent client")
    logo = parse_html(page.html).find("img", alt="Awesome Node.js")
    assert logo["src"].startswith("data:image/svg+xml;base64,")  # media/logo.svg, embedded


def test_the_design_document_keeps_its_deep_headings_and_names_its_missing_images(pages):
    page = pages["go-memory-regions-design"]
    assert page.report.title == "Memory regions"
    assert [s.title for s in page.report.sections] == [
        "Background", "Goals", "Design", "Implementation", "Preliminary evaluation", "Diagnostics",
        "Alternatives considered", "Prior Art"]
    assert _text(page.report.sections[0].summary_html).startswith("The arena experiment adds a package")
    # its images live in a 70257/ folder that was not saved beside it: those, and only those, fail --strict
    assert [(f.code, f.line) for f in unaccepted(page)] == [("image-missing", line)
                                                          for line in (872, 895, 916, 924, 933)]
    soup = parse_html(page.html)
    assert soup.find("h6") is not None or soup.find("h5") is not None  # `#####` stays a heading


def test_the_rfc_keeps_every_dollar_of_its_macros(pages):
    page = pages["rust-rfc-3086-macro-metavar-expr"]
    assert [s.title for s in page.report.sections][:3] == ["Summary", "Motivation", "Guide-level explanation"]
    assert unaccepted(page) == [] and page.report.warnings == ()
    assert "<math" not in page.html and "${count(" in parse_html(page.html).get_text()
    assert _text(page.report.sections[0].summary_html).startswith("Add new syntax to declarative macros")
