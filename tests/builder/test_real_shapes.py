"""Issue 21 item 5: real document shapes — the title never a banner, few huge sections split one level down,
no Source lines without citations, TeX as MathML, kramdown/Liquid leftovers removed, dates as dates."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphsite.builder.markdown import FEW, HUGE_WORDS, SPLIT_HEADINGS
from graphsite.builder.report import read_report
from graphsite.usecases.build import checked_page
from tests.builder.conftest import CORPUS, parse_html


@pytest.mark.parametrize("markdown, title", [
    ("## [![Sponsor](https://e.org/s.png)](https://sponsor.example)\n\n# Real title\n\n## One\n\nx\n", "Real title"),
    ("# [Sponsor link](https://sponsor.example)\n\n# Real title\n\n## One\n\nx\n", "Real title"),
    ("## 🚀 ✨\n\n## Install\n\nx\n\n## Use\n\ny\n", "Install"),  # no `#`: the first heading with a word
    ("---\ntitle: Front\n---\n# Own\n\n## One\n\nx\n", "Front"),
    ("Intro.\n\n## Summary\n\nx\n\n# The document\n\n## One\n\ny\n", "The document"),  # first `#` heading
    # no `#`: a logo before the first heading names the document (not the sponsor, not "Contents")
    ('<div>\n<img src="https://s.example/sponsor.png" alt="Sponsor">\n<img src="media/logo.svg" alt="Awesome '
     'Things">\n</div>\n\n## Contents\n\n- [A](#a)\n\n## A\n\nx\n', "Awesome Things"),
    ("## Table of contents\n\n- [A](#a)\n\n## A\n\nx\n", "A"),
])
def test_the_title_is_never_a_banner(write_md, markdown, title):
    report = read_report(write_md(markdown))
    assert report.title == title
    assert all(section.title for section in report.sections)  # a wordless heading starts no section


def _awesome(groups: int, categories: int, words: int) -> str:
    lines = ["# Awesome things", "", "A curated list.", ""]
    for group in range(groups):
        lines += [f"## Group {group}", "", f"About group {group}.", ""]
        for category in range(categories):
            lines += [f"### Category {group}.{category}", ""]
            lines += [f"- [Tool {n}](https://e.org/{group}/{category}/{n}) - " + "useful " * (words - 4)
                      for n in range(5)] + [""]
    return "\n".join(lines)


def test_few_huge_sections_are_sectioned_one_level_down(write_md):
    words_per_item = HUGE_WORDS // (SPLIT_HEADINGS * 5) + 10
    report = read_report(write_md(_awesome(2, SPLIT_HEADINGS + 1, words_per_item)))
    titles = [s.title for s in report.sections]
    # each `##` keeps its own text as a section, each `###` under it is a section
    assert titles[:3] == ["Group 0", "Category 0.0", "Category 0.1"] and len(titles) == 2 * (SPLIT_HEADINGS + 2)
    assert "About group 0." in report.sections[0].summary_html + report.sections[0].detail_html
    assert "Tool 4" in report.sections[1].summary_html + report.sections[1].detail_html


@pytest.mark.parametrize("groups, categories, words", [
    (FEW + 1, SPLIT_HEADINGS + 1, 200),  # not few
    (2, SPLIT_HEADINGS - 1, 400),  # not enough sub-headings to split on
    (2, SPLIT_HEADINGS + 1, 10),  # not huge
])
def test_sections_stay_when_not_few_and_huge(write_md, groups, categories, words):
    report = read_report(write_md(_awesome(groups, categories, words)))
    assert [s.title for s in report.sections] == [f"Group {g}" for g in range(groups)]


def test_the_system_design_primer_keeps_its_many_sections():
    report = read_report(CORPUS / "system-design-primer-readme.md")
    assert report.title == "The System Design Primer"
    assert len(report.sections) == 29 and report.sections[0].title == "Motivation"


def test_no_source_lines_without_citations(write_md):
    page = checked_page(write_md("# T\n\n## One\n\nplain [link](https://e.org/x).\n\n## Two\n\ntext\n"))
    assert not parse_html(page.html).select(".source")
    cited = checked_page(write_md("# T\n\n## One\n\nsee [[1](https://e.org/x)].\n\n## Two\n\ntext\n", "c.md"))
    sources = [p.get_text(" ", strip=True) for p in parse_html(cited.html).select(".source")]
    assert sources == ["Source: [1]", "Source: no sources cited in this section"]


def test_tex_becomes_mathml_with_the_tex_as_annotation(write_md):
    page = checked_page(write_md("# T\n\nEnergy $E = mc^2$ holds.\n\n$$\n\\frac{a}{b}\n$$\n"))
    soup = parse_html(page.html)
    inline, block = soup.find_all("math")
    assert inline["display"] == "inline" and block["display"] == "block"
    assert [m.find("annotation").get_text() for m in (inline, block)] == ["E = mc^2", "\\frac{a}{b}"]
    assert inline.find("annotation")["encoding"] == "application/x-tex"
    assert [mi.get_text() for mi in inline.find_all("mi")] == ["E", "m", "c"]
    assert block.find("mfrac") is not None and "$" not in soup.find(id="intro").get_text()


@pytest.mark.parametrize("text", ["It costs $5 and $10 today.", "From $5 to $10, or US$ 20.", "between $5-$10"])
def test_prices_are_not_math(write_md, text):
    page = checked_page(write_md(f"# T\n\n{text}\n"))
    soup = parse_html(page.html)
    assert soup.find("math") is None and text in soup.find(id="intro").get_text()


def test_unreadable_tex_is_shown_as_code_with_a_warning(write_md):
    report = read_report(write_md("# T\n\nfine\n\nbad $\\frac{$ here\n"))
    assert [(w.code, w.line) for w in report.warnings] == [("math-invalid", 5)]
    assert "<code>\\frac{</code>" in report.intro_html


def test_the_converter_is_imported_only_for_math(tmp_path):
    plain, maths = tmp_path / "plain.md", tmp_path / "maths.md"
    plain.write_text("# T\n\nIt costs $5.\n")
    maths.write_text("# T\n\n$x$\n")
    code = ("import sys; from pathlib import Path; from graphsite.builder.report import read_report; "
            "read_report(Path(sys.argv[1])); print('latex2mathml' in sys.modules)")
    loaded = [subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                             check=True).stdout.strip() for path in (plain, maths)]
    assert loaded == ["False", "True"]


def test_kramdown_and_liquid_leftovers_are_removed_with_a_warning(write_md):
    source = ("# Notes\n\n* TOC\n{:toc}\n\n## Energy\n{: .no_toc}\n\nSee [the post]({% post_url 2010-07-21-x %}) "
              "and {% include note.html %} this.\n\n```\n{:toc} stays in code\n```\n")
    report = read_report(write_md(source))
    assert [(w.code, w.line) for w in report.warnings] == [("markup-leftover", 4), ("markup-leftover", 7),
                                                           ("markup-leftover", 9), ("markup-leftover", 9)]
    shown = report.intro_html + report.sections[0].summary_html + report.sections[0].detail_html
    assert "{:" not in shown.replace("{:toc} stays in code", "") and "{%" not in shown
    assert "TOC" not in report.intro_html  # kramdown's placeholder list goes with its marker
    assert "See the post and  this." in shown and "{:toc} stays in code" in shown


@pytest.mark.parametrize("written, shown", [
    ("2020-04-07T12:00:00", "2020-04-07"), ("2020-04-07", "2020-04-07"), ('"2020-04-07 09:30:00+02:00"', "2020-04-07"),
    ('"April 2020"', "April 2020"),
])
def test_front_matter_dates_are_printed_as_dates(write_md, written, shown):
    page = checked_page(write_md(f"---\ntitle: T\ndate: {written}\n---\ntext\n"))
    assert parse_html(page.html).find("time").get_text() == shown


def test_a_formula_in_a_heading_keeps_its_tex_in_the_title_and_id(write_md):
    report = read_report(write_md("# T\n\n## The $O(n)$ bound\n\ntext\n"))
    assert report.sections[0].title == "The O(n) bound" and report.sections[0].id == "the-on-bound"
    assert "<math" in report.sections[0].title_html


_LONE = "## One\n\na\n\n## Two\n\nb\n\n# Lone\n\nc\n\n## Three\n\nd\n"


@pytest.mark.parametrize("head, title", [
    ("---\ntitle: Demo post\n---\nIntro.\n\n", "Demo post"),  # a Jekyll post: titled by its front matter
    ("# The post\n\nIntro.\n\n", "The post"),  # titled by the `#` it opens with
])
def test_a_lone_h1_among_h2_sections_is_one_more_section(write_md, head, title):
    page = checked_page(write_md(head + _LONE))
    assert page.report.title == title
    assert [(s.title, s.id) for s in page.report.sections] == [
        ("One", "one"), ("Two", "two"), ("Lone", "lone"), ("Three", "three")]
    soup = parse_html(page.html)
    assert [h.get_text(strip=True) for h in soup.find_all("h1")] == [title]  # the page's title, no other
    assert "d" in page.report.sections[3].summary_html + page.report.sections[3].detail_html


@pytest.mark.parametrize("markdown, title, sections", [
    # no title yet: the first `#` names the document (and a `##` before it is its preamble)
    (_LONE, "Lone", ["Lone"]),
    # two `#` besides the title are the document's parts; so is a numbered `#`
    ("# T\n\n## a\n\n## b\n\n## c\n\n# Part 1\n\n## d\n\n# Part 2\n\n## e\n", "T", ["T", "Part 1", "Part 2"]),
    ("# T\n\n## a\n\n## b\n\n## c\n\n# 1. Part\n\n## d\n", "T", ["Part"]),  # §1
    # too few `##` to stand among
    ("---\ntitle: F\n---\n## a\n\n## b\n\n# Lone\n\nc\n", "F", ["Lone"]),
])
def test_h1_headings_that_are_not_lone_keep_their_level(write_md, markdown, title, sections):
    report = read_report(write_md(markdown))
    assert (report.title, [s.title for s in report.sections]) == (title, sections)
