"""Bare URLs become links by GitHub's rules (http(s):// and www. only): file names and bare domains stay text."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from graphsite.usecases.build import checked_page

REPORT = Path(__file__).resolve().parents[2] / "content" / "graph-engineering.md"

PROSE = """# T

## One

Read SKILL.md and README.md, see example.com or docs.python.org/3/ and graph-eng-<6-hex>.hhdevs.space.
Visit www.example.com/path. Or https://a.example/x), and (https://b.example/y). Mail a@b.example.
Inline `https://code.example/` and [text https://in.example/](https://link.example/).
"""


def _links(html: str) -> list[tuple[str, str]]:
    soup = BeautifulSoup(html, "html.parser")
    return [(a.get_text(), a["href"]) for a in soup.find(id="report").find_all("a", href=True)
            if not a["href"].startswith("#")]


def test_only_urls_with_a_scheme_or_www_become_links(write_md):
    page = checked_page(write_md(PROSE))
    assert _links(page.html) == [
        ("www.example.com/path", "http://www.example.com/path"),
        ("https://a.example/x", "https://a.example/x"),  # the closing parenthesis and stop stay outside
        ("https://b.example/y", "https://b.example/y"),
        ("text https://in.example/", "https://link.example/"),  # no link inside a link, none inside code
    ]
    assert page.report.links == ("http://www.example.com/path", "https://a.example/x", "https://b.example/y",
                                 "https://link.example/")


def test_the_default_report_links_no_file_name(default_soup, default_page):
    hrefs = [a["href"] for a in default_soup.find_all("a", href=True)]
    assert not [h for h in hrefs if "SKILL.md" in h], "linkify-style fuzzy links are back (http://SKILL.md)"
    heading = default_soup.find(id="stage-2--add-a-graph-engineering-skillmd")
    assert heading is not None and "SKILL.md" in heading.get_text(), "the bare file name is still there, as text"
    assert len(default_page.report.links) == len(set(default_page.report.links))


def test_front_matter_links_are_outbound_links_of_the_page(write_md):
    source = write_md("---\nlede: Origin [story](https://lede.example/) here.\nfloors:\n  - title: F\n"
                      "    definition: See https://not-autolinked.example/ and [def](https://def.example/).\n"
                      "    critique: ['[crit](https://crit.example/)']\ncounter_frame:\n"
                      "  quote: '[q](https://quote.example/)'\n---\n# T\n\n## A\n\n[body](https://body.example/)\n")
    page = checked_page(source)
    soup = BeautifulSoup(page.html, "html.parser")
    shown = [a["href"] for a in soup.find_all("a", href=True) if a["href"].startswith("https://")]
    assert list(page.report.links) == shown == ["https://lede.example/", "https://def.example/",
                                                "https://crit.example/", "https://quote.example/",
                                                "https://body.example/"]
