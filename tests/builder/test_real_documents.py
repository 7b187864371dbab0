"""Issue 21 proof: real documents of other shapes (tests/corpus/shapes, see its SOURCES.md) build --strict
clean or with only their true findings, with a sensible title, sections and summaries."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from graphsite.usecases.build import BuiltPage, checked_page, unaccepted
from tests.builder.conftest import parse_html
from tests.builder.test_content import WORDS

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
    assert unaccepted(page.report) == [] and page.report.warnings == ()
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
    assert [(f.code, f.line) for f in unaccepted(page.report)] == [("image-missing", line)
                                                          for line in (872, 895, 916, 924, 933)]
    soup = parse_html(page.html)
    assert soup.find("h6") is not None or soup.find("h5") is not None  # `#####` stays a heading


def test_the_rfc_keeps_every_dollar_of_its_macros(pages):
    page = pages["rust-rfc-3086-macro-metavar-expr"]
    assert [s.title for s in page.report.sections][:3] == ["Summary", "Motivation", "Guide-level explanation"]
    assert unaccepted(page.report) == [] and page.report.warnings == ()
    assert "<math" not in page.html and "${count(" in parse_html(page.html).get_text()
    assert _text(page.report.sections[0].summary_html).startswith("Add new syntax to declarative macros")


# Every TeX span of the post as written: `$$…$$` blocks, then `$…$` in its prose (it has no `$` in code).
_DISPLAY = re.compile(r"^\$\$\n(.*?)\n\$\$$", re.DOTALL | re.MULTILINE)
_INLINE = re.compile(r"\$([^$\n]+?)\$")


def _independent_words(markdown: str) -> Counter[str]:
    """Return the words a plain CommonMark render (markdown-it, none of graphsite's rules) shows for the body
    with its TeX taken out: the reference for "no prose word lost"."""
    body = _INLINE.sub(" ", _DISPLAY.sub(" ", markdown.split("\n---\n", 1)[1]))
    rendered = MarkdownIt("commonmark", {"html": True}).render(body)
    return Counter(WORDS.findall(BeautifulSoup(rendered, "html.parser").get_text(" ")))


def test_the_blog_post_with_tex_shows_every_formula_as_mathml_and_every_word(pages):
    page = pages["cs231n-generative-modeling"]
    assert page.report.title == "Generative Modeling"
    assert [s.title for s in page.report.sections] == [
        "Motivation and Overview", "Pixel RNN/CNN", "Variational Autoencoder", "Generative Adversarial Networks"]
    assert _text(page.report.sections[0].summary_html).startswith("In the first half of the quarter, we studied")
    # --strict clean; its one true finding is a warning: `<a name='intro'>` repeats the page's own #intro
    assert unaccepted(page.report) == []
    assert [(w.code, w.line) for w in page.report.warnings] == [
        ("front-matter-unused", 3), ("front-matter-unused", 4), ("raw-html-id", 38)]
    source = (SHAPES / "cs231n-generative-modeling.md").read_text(encoding="utf-8")
    display = [tex.strip() for tex in _DISPLAY.findall(source)]
    inline = [tex.strip() for tex in _INLINE.findall(_DISPLAY.sub(" ", source))]
    assert (len(display), len(inline)) == (4, 55)
    soup = parse_html(page.html)
    for excerpt in soup.select(".excerpt"):  # a summary's copy repeats formulas of the detail
        excerpt.decompose()
    maths = soup.find_all("math")
    assert [m["display"] for m in maths].count("block") == 4 and len(maths) == 59
    annotations = [m.find("annotation", encoding="application/x-tex").get_text().strip() for m in maths]
    assert sorted(annotations) == sorted(display + inline)  # each formula once, its TeX kept as the annotation
    assert all(m.find(["mi", "mn", "mo"]) is not None for m in maths)
    shown = soup.find(id="report").get_text(" ")
    assert "$" not in shown  # no formula left as text (it has no price: `$1 - D…$` is a formula)
    lost = _independent_words(source) - Counter(WORDS.findall(soup.body.get_text(" ")))
    assert not lost, lost
    # HackMD's table of contents links `#Pixel-RNN/CNN`: resolved to the GitHub-style id, never left broken
    toc = soup.find(id="intro").find_all("a", href=True)
    assert [a["href"] for a in toc][:2] == ["#motivation-and-overview", "#pixel-rnncnn"]


def test_the_jekyll_demo_post_keeps_its_sections_around_its_lone_h1(pages):
    page = pages["chirpy-text-and-typography"]
    titles = [s.title for s in page.report.sections]
    assert page.report.title == "Text and Typography" and page.report.subtitle == ""
    # `## Headings` then a demo `# H1 — heading`: read as one more `##`, not as the level that folded all 17
    # other sections into it (before: one section, "H1 — heading")
    assert titles[:4] == ["Headings", "H1 — heading", "H2 — heading", "Paragraph"]
    assert len(titles) == 18 and titles[13] == "Mathematics" and titles[-1] == "Reverse Footnote"
    assert _text(page.report.sections[3].summary_html).startswith("Quisque egestas convallis ipsum")
    soup = parse_html(page.html)
    maths = soup.find(id=page.report.sections[13].id).find_parent("section").find_all("math")
    assert [m.find("annotation").get_text().strip() for m in maths][1:] == [
        "a \\ne 0", "ax^2 + bx + c = 0", "x = {-b \\pm \\sqrt{b^2-4ac} \\over 2a}"]
    assert maths[0]["display"] == "block" and "\\begin{equation}" in maths[0].find("annotation").get_text()
    # its true findings: 17 kramdown/Liquid leftovers (warnings) and three image paths from the site's root
    # (`mockup.png` is named once, at its first use)
    assert [w.code for w in page.report.warnings].count("markup-leftover") == 17
    assert [(f.code, f.line) for f in unaccepted(page.report)] == [("image-missing", line) for line in (169, 190, 191)]
