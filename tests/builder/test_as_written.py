"""Markdown as people write it: typos in raw HTML, headings after the reference list, footnotes nobody cites,
MathML and SVG, a front-matter title beside the document's own `# H1`, form controls — nothing lost or broken
silently (issue 21)."""

from __future__ import annotations

import json

import html5lib
from bs4 import BeautifulSoup

from graphsite.usecases.build import checked_page

from .conftest import CORPUS
from .test_content import in_order, visible_words


def _page(write_md, markdown: str):
    page = checked_page(write_md(markdown))
    parser = html5lib.HTMLParser(strict=False)
    parser.parse(page.html)
    assert parser.errors == [], parser.errors
    return page, BeautifulSoup(page.html, "html5lib")


def _codes(page) -> list[tuple[str, int | None]]:
    return [(w.code, w.line) for w in page.report.warnings]


def test_a_tag_that_never_ends_is_shown_as_text_and_swallows_nothing(write_md):
    page, soup = _page(write_md, "# T\n\n## 1. One\n\nIntro words.\n\n<div>\n<img src=\"https://e.org/x.png"
                                 "\n\nNext paragraph words.\n\n### 1.1 Sub\n\nSub words, see §1.1."
                                 "\n\n## 2. Two\n\nTwo words.\n")
    assert ("raw-html-shown", 8) in _codes(page)
    report = soup.find(id="report")
    assert report.find("img") is None and page.report.images == ()
    assert '<img src="https://e.org/x.png' in report.get_text()
    assert in_order(["Intro", "words", "Next", "paragraph", "words", "Sub", "Sub", "words", "Two", "words"],
                    visible_words(page.html))
    heading = soup.find(id="11-sub")
    assert heading is not None and heading.name == "h3"
    assert soup.find("a", class_="xref")["href"] == "#11-sub"


def test_a_comment_that_never_ends_in_its_block_hides_nothing(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\n<div>\n<!-- a note\n\nNext words.\n\n### Sub\n\nSub words.\n\n"
                                 "<div>\n<!-- closed --> kept\n</div>\n")
    assert _codes(page) == [("raw-html-shown", 6)]
    assert soup.find("h3", id="sub") is not None
    assert in_order(["a", "note", "Next", "words", "Sub", "Sub", "words", "kept"], visible_words(page.html))
    assert "closed" not in soup.find(id="report").get_text()


def test_an_unclosed_attribute_in_a_closed_tag_is_shown_as_text(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\n<p>\n<a title='never closed>x</a>\n\nAfter words.\n")
    assert ("raw-html-shown", 6) in _codes(page)
    assert in_order(["x", "After", "words"], visible_words(page.html))


def test_a_quoted_angle_bracket_is_no_typo(write_md):
    page, soup = _page(write_md, '# T\n\n## A\n\n<p title="a > b">kept</p>\n\nAfter words.\n')
    assert not any(code == "raw-html-shown" for code, _ in _codes(page))
    assert soup.find("p", title="a > b").get_text() == "kept"


def test_a_heading_after_the_reference_list_keeps_its_text_and_id(write_md):
    page, soup = _page(write_md, "# T\n\n## 1. A\n\nSee §9.1 [[1](https://a.example/)].\n\n## 9. References\n\n"
                                 "### Papers\n\n1. A https://a.example/\n\n### 9.1 Extra\n\nExtra words.\n")
    heading = soup.find(id="91-extra")
    assert heading is not None and heading.name.startswith("h") and "9.1 Extra" in heading.get_text()
    assert soup.find("a", class_="xref")["href"] == "#91-extra"
    assert in_order(["Extra", "Extra", "words"], visible_words(page.html))
    assert [r.group for r in page.report.references] == ["Papers"], "a heading over a list still names it"


def test_every_footnote_definition_is_shown(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nText[^a].\n\n[^a]: Note with [^b].\n[^b]: Inner words.\n"
                                 "[^c]: Lonely words that cite [^d].\n[^d]: Deep words.\n")
    notes = soup.find(id="notes").find_all("li")
    assert [n.get_text(" ", strip=True).split(" ")[0] for n in notes] == ["Note", "Inner", "Deep", "Lonely"]
    anchors = {tag["id"] for tag in soup.find_all(id=True)}
    backs = [a["href"] for a in soup.find_all("a", class_="footnote-backref")]
    assert len(backs) == 3 and all(href[1:] in anchors for href in backs), "no backlink to a missing #fnref"
    assert notes[-1].find("a", class_="footnote-backref") is None
    assert [(w.code, w.line) for w in page.report.warnings] == [("footnote-unreferenced", 9)]


def test_mathml_and_svg_keep_their_text_and_lose_their_scripts(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nMass <math><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn>"
                                 "</msup></math> here.\n\n<svg viewBox=\"0 0 9 9\" onload=\"x()\"><text x=\"1\" "
                                 "onclick=\"a()\">Drawn words</text><a href=\"javascript:x()\"><text>link</text>"
                                 "</a></svg>\n")
    math = soup.find(id="report").find("math")
    assert [tag.get_text() for tag in math.find_all(["mi", "mo", "mn"])] == ["E", "=", "m", "c", "2"]
    svg = soup.find(id="report").find("svg")
    assert svg["viewBox"] == "0 0 9 9" and svg.find("text").get_text() == "Drawn words"
    for tag in [svg, *svg.find_all(True)]:
        assert not any(name.startswith("on") or name == "href" for name in tag.attrs), tag
    assert in_order(["Mass", "E", "m", "c", "2", "here", "Drawn", "words"], visible_words(page.html))


def test_html_inside_a_mathml_token_element_stays_inside_the_formula(write_md):
    """`<b>` breaks out of <math> in a browser except inside mi, mo, mn, ms and mtext; a description of an SVG
    is kept."""
    page, soup = _page(write_md, "# T\n\n## A\n\nSee <math><mtext><b>bold</b></mtext><mi>x</mi></math> and "
                                 "<svg viewBox=\"0 0 9 9\"><desc>a chart of sales</desc></svg> here.\n")
    report = soup.find(id="report")
    assert [tag.get_text() for tag in report.find("math").find_all(["mtext", "mi"])] == ["bold", "x"]
    assert report.find("svg").find("desc").get_text() == "a chart of sales"


def test_an_unclosed_math_or_svg_does_not_eat_the_paragraph(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nOpen <math><mi>x</mi> rest words.\n\n"
                                 "See <svg><text>y</text> more words.\n\nThen cp <path> <text> here.\n")
    assert [line for code, line in _codes(page) if code == "raw-html-shown"] == [5, 7]
    report = soup.find(id="report")
    assert report.find("math") is None and report.find("svg") is None
    assert in_order(["Open", "math", "mi", "x", "rest", "words", "See", "svg", "text", "y", "more", "words",
                     "Then", "cp", "path", "text", "here"], visible_words(page.html))


def test_an_object_in_a_paragraph_leaves_valid_html(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nSee <object data=\"x\"> here.\n\n<div>\n<embed src=\"y\">\n</div>\n\n"
                                 "After words.\n")
    report = soup.find(id="report")
    assert report.find(["object", "embed"]) is None
    assert report.find(class_="summary").p.get_text() == 'See <object data="x"> here.'
    assert [line for code, line in _codes(page) if code == "raw-html-shown"] == [5, 8]
    assert in_order(["See", "object", "here", "embed", "After", "words"], visible_words(page.html))


def test_form_controls_are_text_and_task_boxes_stay_checkboxes(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nType <input type=password> here.\n\n- [ ] open task\n- [x] done\n\n"
                                 "<button>Press</button>\n")
    boxes = soup.find(id="report").find_all("input")
    assert [(b["type"], b.has_attr("checked")) for b in boxes] == [("checkbox", False), ("checkbox", True)]
    assert soup.find(id="report").find("button") is None
    assert "<input type=password>" in soup.find(id="report").get_text()
    assert [line for code, line in _codes(page) if code == "raw-html-shown"] == [5, 10, 10]


def test_a_front_matter_title_keeps_a_different_h1_as_the_subtitle(write_md):
    page, soup = _page(write_md, "---\ntitle: Front Title\n---\n# Real *H1* words\n\n## A\n\n"
                                 "See [the top](#real-h1-words).\n")
    assert soup.title.string == "Front Title" and soup.h1.get_text() == "Front Title"
    subtitle = soup.find(class_="subtitle")
    assert subtitle.get_text() == "Real H1 words" and subtitle["id"] == "real-h1-words"
    assert soup.find("a", href="#real-h1-words") is not None
    same, same_soup = _page(write_md, "---\ntitle: front  title\n---\n# Front Title\n\n## A\n\nText.\n")
    assert same_soup.find(class_="subtitle") is None and same.report.subtitle == ""


def test_an_endnote_link_is_no_citation(write_md):
    page, soup = _page(write_md, "# T\n\n## A\n\nA claim [[1](#note)] and another \\[[2](#note)\\].\n\n"
                                 "## Notes\n\n<a name=\"note\"></a>1. The note words.\n")
    assert page.report.citations == () and page.report.findings == ()
    links = soup.find(id="report").find_all("a", href="#note")
    assert [a.get_text() for a in links] == ["1", "2"]
    assert "A claim [1] and another [2]." in soup.find(id="report").get_text()


def test_a_real_rfc_with_endnotes_builds_strict(run_cli, tmp_path):
    result = run_cli("build", str(CORPUS / "rust-rfc-2094-nll.md"), "--out", str(tmp_path), "--strict", "--json")
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    assert built["citations"]["inline"] == 0 and built["warnings"] == []
    soup = BeautifulSoup((tmp_path / "index.html").read_text(encoding="utf-8"), "html5lib")
    assert soup.find("a", href="#temporaries") is not None and soup.find("a", attrs={"name": "temporaries"})


def test_a_fragment_is_resolved_like_github_or_warned(write_md):
    page, soup = _page(write_md, "# T\n\n## Type inference\n\nSee [a](#Type-inference), [b](#Type%20Inference), "
                                 "[c](#type-inference).\n\n<a name=\"Anchor\"></a>And [d](#anchor), [e](#top),\n"
                                 "then [gone](#nowhere).\n")
    hrefs = [a["href"] for a in soup.find(id="report").find_all("a", href=True) if a.get_text() in list("abcde")]
    assert hrefs == ["#type-inference"] * 3 + ["#Anchor", "#top"]
    assert _codes(page) == [("link-missing-fragment", 8)]


def test_a_missing_fragment_fails_strict(run_cli, write_md, tmp_path):
    source = write_md("# T\n\n## A\n\nSee [gone](#nowhere).\n")
    assert run_cli("build", str(source), "--out", str(tmp_path / "lax")).exit_code == 0
    result = run_cli("build", str(source), "--out", str(tmp_path / "strict"), "--strict")
    assert result.exit_code == 1 and "link-missing-fragment" in result.output and ":5:" in result.output
    assert not (tmp_path / "strict" / "index.html").exists()
    # nothing accepts a missing fragment: the hint says to fix the link, not to accept a citation finding
    assert "fix the link or the image" in result.output and "accept the finding" not in result.output


def test_a_link_to_the_title_heading_lands_on_the_page(write_md):
    page, soup = _page(write_md, "# The Title\n\n## The Title\n\nBack to [the top](#The-Title) or "
                                 "[this](#the-title-1).\n")
    assert soup.h1["id"] == "the-title" and soup.find("h2", id="the-title-1") is not None
    assert [a["href"] for a in soup.find(id="report").find_all("a", string=["the top", "this"])] == \
        ["#the-title", "#the-title-1"]
    assert page.report.warnings == ()


def test_an_id_written_as_text_twice_stays_whole(write_md):
    page, soup = _page(write_md, '# T\n\n## A\n\nUse `<a id="x">` here and `<a id="x">` again.\n')
    assert [code.get_text() for code in soup.find(id="report").find_all("code")] == ['<a id="x">'] * 2


def test_a_raw_html_fragment_is_resolved_or_warned(write_md):
    page, soup = _page(write_md, '# T\n\n## Type inference\n\nSee <a href="#Type-Inference">a</a>.\n\n<p>\n'
                                 "<a href='#type-inference'>b</a>\n<a href=#gone>c</a>\n</p>\n")
    assert [a["href"] for a in soup.find(id="report").find_all("a", string=["a", "b", "c"])] == \
        ["#type-inference", "#type-inference", "#gone"]
    assert _codes(page) == [("link-missing-fragment", 9)]
