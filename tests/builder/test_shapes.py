"""Document shapes: the section level read from the document, the reference list at any level, summaries,
Source lines, and URLs written in every CommonMark/GFM form."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from graphsite.builder.section_summary import WORD_LIMIT
from graphsite.citations.integrity import citation_counts
from graphsite.usecases.build import checked_page


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _dangling_fragments(html: str) -> list[str]:
    soup = _soup(html)
    ids = {tag["id"] for tag in soup.find_all(id=True)}
    return [a["href"] for a in soup.find_all("a", href=True) if a["href"].startswith("#") and a["href"][1:] not in ids]


REFERENCES = "1. A https://a.example/x\n2. B https://b.example/y\n"
BODY = ("{h} 1. Intro\n\nSee §2 and §2.1 [[1](https://a.example/x)].\n\n{h} 2. Design\n\nDesign text "
        "[[2](https://b.example/y)].\n\n{s} 2.1 Detail\n\nDetail text.\n\n{r} References\n\n" + REFERENCES)


@pytest.mark.parametrize("shape, title", [
    ("# Report title\n\n" + BODY.format(h="#", s="##", r="#"), "Report title"),  # title + `#` sections
    (BODY.format(h="#", s="##", r="#"), "1. Intro"),  # `#` sections only: the first heading, never the file
    ("# Report title\n\n" + BODY.format(h="##", s="###", r="##"), "Report title"),  # the usual `##` shape
    ("# Report title\n\n" + BODY.format(h="##", s="###", r="###"), "Report title"),  # references one level down
    ("# Report title\n\n" + BODY.format(h="##", s="###", r="#"), "Report title"),  # references one level up
])
def test_sections_come_from_the_documents_own_level(write_md, shape, title):
    page = checked_page(write_md(shape))
    report = page.report
    assert report.title == title
    assert [(s.index, s.title) for s in report.sections] == [("§1", "Intro"), ("§2", "Design")]
    assert [r.number for r in report.references] == [1, 2]
    assert [f.code for f in report.findings] == [], "no false dangling citation"
    assert _dangling_fragments(page.html) == []
    soup = _soup(page.html)
    xrefs = [a["href"] for a in soup.find(id="report").find_all("a", class_="xref")]
    assert xrefs == ["#2-design", "#21-detail"]
    assert soup.find(id="21-detail").name == "h3", "a subsection is one level below the page's <h2> sections"
    assert "Detail text." in soup.find(id="2-design").find_parent("section").get_text()


def test_several_unnumbered_top_headings_are_the_sections(write_md):
    report = checked_page(write_md("# Install\n\nRun it.\n\n# Usage\n\nUse it.\n", "guide.md")).report
    assert report.title == "Install" and [s.title for s in report.sections] == ["Install", "Usage"]


def _summary(write_md, body: str) -> tuple[str, BeautifulSoup]:
    page = checked_page(write_md("# T\n\n## A\n\n" + body))
    section = _soup(page.html).find(id="report").find("section")
    summary = section.find(class_="summary")
    return (summary.get_text(" ", strip=True) if summary else ""), section


@pytest.mark.parametrize("opening", [
    "- a list item\n- another\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
    "```\ncode first\n```\n\n",
    "    indented code\n\n",
    "### Sub\n\n",
])
def test_a_section_that_opens_with_a_list_table_or_code_summarises_its_first_paragraph(write_md, opening):
    text, section = _summary(write_md, opening + "The first prose paragraph. A second sentence.\n\nMore.\n")
    assert text == "The first prose paragraph. A second sentence."
    assert "code first" not in text and "indented" not in text
    assert "The first prose paragraph." in section.find("details").get_text(), "the detail keeps every word"


def test_a_lead_in_ending_with_a_colon_is_completed_by_its_items(write_md):
    text, section = _summary(write_md, "Three options:\n\n- keep it\n- drop it\n- move it\n\nAfter the list.\n")
    assert text.startswith("Three options:") and "keep it" in text and "move it" in text
    assert "After the list." in section.find("details").get_text()


def test_a_long_lead_in_list_is_summarised_as_one_sentence(write_md):
    items = "".join(f"- item number {i} with several words in it\n" for i in range(30))
    text, section = _summary(write_md, "The options:\n\n" + items)
    assert text.startswith("The options: item number 0 with several words in it; item number 1")
    assert len(text.split()) <= WORD_LIMIT + 1
    assert section.find(class_="excerpt") is not None and "item number 29" in section.find("details").get_text()


def test_a_long_paragraph_is_cut_at_a_sentence_boundary(write_md):
    sentences = " ".join(f"Sentence {i} has exactly six words." for i in range(40))
    text, section = _summary(write_md, sentences + "\n")
    assert text.endswith(". …") and len(text.split()) <= WORD_LIMIT + 1
    assert text == " ".join(f"Sentence {i} has exactly six words." for i in range(WORD_LIMIT // 6)) + " …"
    assert "Sentence 39 has exactly six words." in section.find("details").get_text()


def test_a_paragraph_without_sentences_is_cut_at_the_limit(write_md):
    text, _ = _summary(write_md, " ".join(["word"] * 200) + "\n")
    assert text == " ".join(["word"] * WORD_LIMIT) + " …"


def test_a_section_whose_only_prose_sits_in_a_list_still_has_a_summary(write_md):
    text, _ = _summary(write_md, "- only prose is here\n- and here\n")
    assert text == "only prose is here; and here."  # a list-only section names its first items


def test_a_cut_summary_repeats_citations_but_no_footnote_id(write_md):
    body = "First sentence [[1](https://a.example/)] with a note[^1]. " + "Filler words go on. " * 40 + \
        "\n\n[^1]: The note.\n\n## References\n\n1. A https://a.example/\n"
    page = checked_page(write_md("# T\n\n## A\n\n" + body))
    soup = _soup(page.html)
    excerpt = soup.find(class_="excerpt")
    assert excerpt.find("sup", class_="cite") is not None and excerpt.find(id=True) is None
    ids = [t["id"] for t in soup.find_all(id=True)]
    assert len(ids) == len(set(ids))


def test_every_section_has_a_source_line(write_md):
    page = checked_page(write_md("# T\n\n## A\n\nNo citation.\n\n## B\n\nOne [[1](https://a.example/)].\n\n"
                               "## References\n\n1. A https://a.example/\n"))
    lines = [p.get_text(" ", strip=True) for p in _soup(page.html).find_all(class_="source")]
    assert lines == ["Source: no sources cited in this section", "Source: [1]"]


@pytest.mark.parametrize("inline, listed", [
    ("https://en.wikipedia.org/wiki/Graph_(discrete_mathematics)",
     "https://en.wikipedia.org/wiki/Graph_(discrete_mathematics)"),
    ("https://en.wikipedia.org/wiki/Graph_(discrete_mathematics)",
     "[Graph](https://en.wikipedia.org/wiki/Graph_(discrete_mathematics))"),
    ("https://en.wikipedia.org/wiki/Graph_%28discrete_mathematics%29",
     "<https://en.wikipedia.org/wiki/Graph_%28discrete_mathematics%29>"),
    ("<https://a.example/a b>", "[A](<https://a.example/a b>)"),
    ("https://a.example/a%20b", "[A](<https://a.example/a b>)"),
    ("https://a.example/x|y", "https://a.example/x|y"),
    ("https://a.example/x%7Cy", "https://a.example/x|y"),
    ("https://a.example/café", "https://a.example/café"),
    ("https://a.example/caf%C3%A9", "<https://a.example/café>"),
    ("https://bücher.example/", "https://bücher.example/"),
    ("https://xn--bcher-kva.example/", "https://bücher.example"),
    ("HTTPS://A.EXAMPLE:443/x", "https://a.example/x"),
    ("https://a.example/x", "Title (https://a.example/x)."),
])
def test_the_same_url_written_two_ways_is_one_url(write_md, inline, listed):
    page = checked_page(write_md(f"# T\n\n## A\n\nClaim [[1]({inline})].\n\n## References\n\n1. Title {listed}\n"))
    report = page.report
    assert [f.code for f in report.findings if f.code == "citation-mismatch"] == [], report.findings
    assert citation_counts(report.citations, report.references, report.links).unique_urls == 1, report.links


def test_a_trailing_slash_is_still_a_mismatch(write_md):
    page = checked_page(write_md("# T\n\n## A\n\nClaim [[1](https://a.example/x/)].\n\n## References\n\n"
                               "1. Title https://a.example/x\n"))
    assert [f.code for f in page.report.findings] == ["citation-mismatch"]
