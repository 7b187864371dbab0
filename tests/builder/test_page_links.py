"""What the page does to the Markdown side's HTML: honest citation and link targets, named regions and
permalinks, reference titles without local paths, and its embedded fonts' failure mode."""

from __future__ import annotations

import shutil

import pytest
from bs4 import BeautifulSoup

from graphsite.builder.build import page_from_source
from graphsite.builder.fragments import public_url
from graphsite.builder.model import FrontMatter, Report
from graphsite.builder.render import load_theme, render_page
from graphsite.errors import BuildError
from graphsite.paths import theme_dir

REPORT = """# T

## 1. Claims

Known [[1](https://one.example/)], moved [[2](https://old.example/)], local [[3](https://three.example/)],
unlisted [[9](https://nine.example/)] and unlisted private [[8](http://10.0.0.8/x)].
A [placeholder](https://news.ycombinator.com/item?id=...), a [private one](http://intranet/x), a
[fine one](https://ok.example/), <a name="here">an anchor</a> and [mail](mailto:a@b.example).

```
code that is long enough to scroll
```

| a | b |
|---|---|
| 1 | 2 |

### 1.1 Sub

Text.

## References

1. One. https://one.example/
2. Two, moved. https://two.example/
3. `~/.notes/private/three.md` (my notes). file:///home/me/.notes/private/three.md
"""


@pytest.fixture(scope="module")
def soup(tmp_path_factory):
    path = tmp_path_factory.mktemp("links") / "report.md"
    path.write_text(REPORT, encoding="utf-8")
    return BeautifulSoup(page_from_source(path, fonts="system").html, "html.parser")


def test_citations_go_where_the_reference_list_says(soup):
    cites = {a.get_text(): a for a in soup.select("sup.cite a")}
    assert cites["[1]"]["href"] == "https://one.example/"
    assert cites["[2]"]["href"] == "https://two.example/", "the reference's URL, not the inline one"
    assert cites["[3]"]["href"] == "#ref-3" and "not public" in cites["[3]"]["aria-label"]
    assert cites["[9]"]["href"] == "https://nine.example/" and "not in the reference list" in cites["[9]"]["aria-label"]
    assert "[8]" not in cites and soup.select_one("sup.cite .cite-none").get_text() == "[8]"
    assert cites["[1]"]["aria-label"] == "Reference 1: One (opens the source)"


def test_links_a_reader_cannot_follow_are_text(soup):
    section = soup.find(id="report")
    hrefs = [a["href"] for a in section.find_all("a", href=True) if not a["href"].startswith("#")]
    assert "https://ok.example/" in hrefs and "mailto:a@b.example" in hrefs
    assert not [href for href in hrefs if "item?id" in href or "intranet" in href]
    assert [span.get_text() for span in section.select("span.neutralised")] == ["placeholder", "private one"]
    anchor = section.find("a", attrs={"name": "here"})
    assert anchor is not None and not anchor.has_attr("rel"), "an author's anchor stays, without rel"


def test_a_not_public_reference_shows_neither_url_nor_local_path(soup):
    entry = soup.find(id="ref-3")
    assert entry.select_one(".ref-title").get_text() == "private/three.md (my notes)"
    assert entry.select_one(".not-public").get_text() == "not public"
    assert "/home/" not in str(entry) and "file:" not in str(entry) and entry.find("a", href="#") is None


def test_scroll_regions_and_permalinks_are_named(soup):
    regions = soup.select("div.scroll[role=region][tabindex='0']")
    assert [r["aria-label"] for r in regions] == ["Code block 1 in §1", "Table 1 in §1"]
    assert [r.find(True).name for r in regions] == ["pre", "table"]
    permalink = soup.find(id="11-sub").find("a", class_="permalink")
    assert permalink["aria-label"] == "Link to this heading: 1.1 Sub"


@pytest.mark.parametrize("url, public", [
    ("https://example.com/a", True), ("https://news.ycombinator.com/item?id=...", False),
    ("https://twitter.com/x/status/...", False), ("file:///home/me/a", False), ("http://192.168.1.2/", False),
    ("http://localhost:8000/", False), ("mailto:a@b.example", False), ("/relative", False), ("", False)])
def test_public_url(url, public):
    assert bool(public_url(url)) is public


def test_a_damaged_font_is_a_one_line_error(tmp_path):
    theme = tmp_path / "theme"
    shutil.copytree(theme_dir(), theme)
    (theme / "fonts" / "inter-latin-400-normal.woff2").write_bytes(b"wOF2 not really a font")
    report = Report(path=tmp_path / "r.md", front=FrontMatter(), title="T", sections=())
    with pytest.raises(BuildError, match=r"inter-latin-400-normal\.woff2: not a usable font"):
        render_page(report, fonts="embedded", theme=load_theme(theme))


def test_a_source_lines_link_is_named_by_the_whole_reference_title(tmp_path):
    """The name was cut at the title's first " (": "Reference 1: Smith" for "Smith (2020), a study"."""
    path = tmp_path / "report.md"
    path.write_text("# T\n\n## 1. Claims\n\nKnown [[1](https://one.example/)].\n\n## References\n\n"
                    "1. Smith (2020), a study. https://one.example/\n", encoding="utf-8")
    soup = BeautifulSoup(page_from_source(path, fonts="system").html, "html.parser")
    names = [a["aria-label"] for a in soup.select('a[href="#ref-1"]') if "reference list" in a["aria-label"]]
    assert names == ["Reference 1: Smith (2020), a study (in the reference list)"]
