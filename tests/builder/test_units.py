"""The small pure pieces: URL schemes as a browser reads them, reference URLs, slugs, the ladder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from graphsite.builder import changenote, page
from graphsite.builder.ladder import ladder
from graphsite.builder.markdown import Slugger, slugify
from graphsite.builder.model import Card
from graphsite.builder.references import entry_url
from graphsite.builder.sanitize import RESERVED_IDS, is_safe_url
from graphsite.usecases.build import checked_page


@pytest.mark.parametrize("url", [
    "https://example.com/", "http://example.com", "mailto:a@example.com", "#fragment", "./page.md",
    "../up/", "/root", "page.html?x=1#y", "HTTPS://EXAMPLE.COM",
])
def test_safe_urls(url):
    assert is_safe_url(url)


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)",
    "java\nscript:alert(1)", "\x01javascript:alert(1)", "javascript&#58;alert(1)", "&#106;avascript:alert(1)",
    "data:text/html,x", "vbscript:msgbox(1)", "file:///etc/passwd", "ftp://example.com/", "tel:123",
])
def test_unsafe_urls(url):
    assert not is_safe_url(url)


@pytest.mark.parametrize("raw, url", [
    ("Title. https://a.example/x", "https://a.example/x"),
    ("Title (https://a.example/x).", "https://a.example/x"),
    ("Title https://w.example/Foo_(bar)", "https://w.example/Foo_(bar)"),
    ("Placeholder https://news.example/item?id=...", "https://news.example/item?id=..."),
    ("[Title](https://a.example/) mirrored at https://b.example/", "https://b.example/"),
    ("Title <https://a.example/auto>", "https://a.example/auto"),
    ("`~/x/SKILL.md` (internal). file:///home/u/x/SKILL.md", "file:///home/u/x/SKILL.md"),
    ("No URL at all.", ""),
])
def test_reference_entry_url(raw, url):
    assert entry_url(raw) == url


def test_slugs_follow_github():
    assert slugify("3.2 The seven operating rules") == "32-the-seven-operating-rules"
    assert slugify("Step 1: Review the scalability video lecture") == "step-1-review-the-scalability-video-lecture"
    assert slugify("C++ & Rust — `unsafe`") == "c--rust--unsafe"
    slugger = Slugger()
    assert [slugger.unique(t) for t in ("Setup", "Setup", "Setup-1", "Teardown", "ref-3")] == \
        ["setup", "setup-1", "setup-1-1", "teardown-h", "ref-3-h"]


def test_every_id_the_page_markup_writes_is_reserved():
    markup = "".join(Path(module.__file__).read_text(encoding="utf-8") for module in (page, changenote))
    literal = set(re.findall(r'\bid="([^"{}]+)"', markup))
    assert literal and literal <= RESERVED_IDS, literal - RESERVED_IDS


def test_headings_and_raw_html_named_like_the_pages_own_parts_keep_ids_unique(write_md):
    source = write_md("# T\n\n## Toolbar\n\nx [[1](https://a.example/)]\n\n## Toc title\n\n"
                      '<p id="toolbar">raw</p> <a id="ref-1" name="teardown">raw</a> <a name="mine">kept</a>\n\n'
                      "### Teardown title\n\nz\n\n## References\n\n1. A https://a.example/\n")
    soup = BeautifulSoup(checked_page(source).html, "html.parser")
    ids = [tag["id"] for tag in soup.find_all(id=True)]
    assert len(ids) == len(set(ids))
    assert soup.find(id="toolbar").name == "div" and soup.find(id="toolbar").find_parent(id="toc")
    assert soup.find(id="toc-title").parent.name == "nav" and soup.find(id="ref-1").name == "li"
    assert [a.get("name") for a in soup.find(id="report").find_all("a", attrs={"name": True})] == ["mine"]


def test_ladder_rises_floor_by_floor():
    cards = tuple(Card(f"FLOOR {i}", str(2022 + i), f"F{i}", "d") for i in range(1, 5))
    drawn = ladder(cards)
    assert [s.title for s in drawn.steps] == ["F1", "F2", "F3", "F4"]
    assert all(a.height < b.height and a.x < b.x for a, b in zip(drawn.steps, drawn.steps[1:], strict=False))
    assert all(s.y + s.height == drawn.height for s in drawn.steps), "every floor stands on the ground"
    assert drawn.steps[-1].x + drawn.steps[-1].width <= drawn.width
    assert ladder(()) is None
