"""Whatever the Markdown or its front matter holds, no script, handler or dangerous URL reaches the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from graphsite.builder.render import load_theme, page_css
from graphsite.usecases.build import checked_page

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "fixtures" / "hostile.md"
OWASP = HERE.parents[1] / "tests" / "corpus" / "owasp-xss-filter-evasion.md"
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href", "poster", "srcset", "background",
                  "cite", "longdesc", "content"}
# MathML and SVG are allowed (their text is the author's: issue 21), but nothing in them that links, embeds
# HTML, references or animates.
FORBIDDEN_TAGS = {"iframe", "object", "embed", "form", "input", "button", "base", "frame", "frameset", "applet",
                  "textarea", "select", "link", "foreignobject", "annotation-xml", "use", "animate", "set",
                  "image", "maction"}


# The page's own embedded fonts: nothing but @font-face rules whose only URL is WOFF2 data.
EMBEDDED_FONTS = re.compile(r'(?:@font-face\{[-a-z:;0-9 ]*src:url\(data:font/woff2;base64,[A-Za-z0-9+/=]+\) '
                            r'format\("woff2"\)\}\n?)+')


def _scheme(url: str) -> str:
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
    match = re.match(r"([a-z][a-z0-9+.\-]*):", cleaned)
    return match.group(1) if match else ""


def _assert_inert(html: str, *, fonts_link: bool = True) -> BeautifulSoup:
    """Walk every element and attribute of the page: nothing active that the theme did not author."""
    soup = BeautifulSoup(html, "html.parser")
    scripts = soup.find_all("script")
    theme = load_theme()  # its page script, after the embedded fonts' loader when there are embedded fonts
    assert [s.string for s in scripts] in ([theme.js], [theme.fonts_js, theme.js]), "only the theme's own scripts"
    for tag in soup.find_all(True):
        allowed = {"link"} if fonts_link and tag.find_parent("head") else set()
        if tag.find_parent(id="toolbar"):
            allowed.add("button")  # the theme's own expand/collapse-all buttons, not a form
        if tag.name == "input" and tag.get("type") == "search":
            allowed.add("input")  # the theme's own search box, no form
        elif tag.name == "input":  # a task list's checkbox: never anything else, never enabled
            assert tag.get("type") == "checkbox" and tag.has_attr("disabled"), tag
            allowed.add("input")
        assert tag.name not in FORBIDDEN_TAGS - allowed, tag
        if tag.name == "meta":
            assert tag.get("http-equiv") in (None, "Content-Security-Policy"), tag
        if tag.name == "style":
            assert tag.find_parent("head") is not None
            # the theme's style sheet, with the report's title (escaped) for the printed margin; or the fonts
            assert (tag.string == page_css(load_theme().css, soup.title.string)
                    or EMBEDDED_FONTS.fullmatch(tag.string)), tag.string[:200]
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), (tag.name, name)
            assert name.lower() != "style", tag
            if name.lower() in URL_ATTRIBUTES and tag.name != "meta":
                values = value if isinstance(value, list) else [value]
                for url in values:
                    assert _scheme(url) in {"", "http", "https", "mailto"}, (tag.name, name, url)
    return soup


def test_hostile_report_is_inert():
    soup = _assert_inert(checked_page(HOSTILE).html)
    body_text = soup.find("main").get_text(" ")
    assert "Cited" in body_text and "styled" in body_text, "the harmless words survive"
    assert soup.find("a", href="https://ok.example/3") is not None
    assert soup.find("a", href="mailto:someone@example.com") is not None
    assert soup.find("a", href="./other.md") is not None
    assert soup.find("a", href="#1-links") is not None


def test_front_matter_text_is_escaped_everywhere():
    soup = BeautifulSoup(checked_page(HOSTILE).html, "html.parser")
    assert soup.title.string == "Report </title><script>alert('title')</script>"
    assert soup.find(class_="badge").get_text() == "<img src=x onerror=alert(1)>"
    assert soup.find("h1").get_text() == "<svg onload=alert(2)>"
    assert soup.find(class_="card-title").get_text() == "<iframe src=//evil.example>"
    assert soup.find(id="rules").li.get_text() == "<img src=x onerror=alert(10)>"
    lede = soup.find(class_="lede")
    assert [a.get("href") for a in lede.find_all("a")] == ["https://ok.example/"]


def test_front_matter_shows_no_image(write_md):
    source = write_md("---\nlede: A ![pic](https://img.example/p.png) lede\n---\n# T\n")
    soup = BeautifulSoup(checked_page(source).html, "html.parser")
    assert soup.find("img") is None
    assert [a["href"] for a in soup.find(class_="lede").find_all("a")] == ["https://img.example/p.png"]


def test_citations_and_references_with_unsafe_urls_are_neutralised():
    page = checked_page(HOSTILE)
    soup = BeautifulSoup(page.html, "html.parser")
    cites = soup.find_all("sup", class_="cite")
    # The reference list decides: a reference without a public URL is cited by its entry, never its URL.
    assert [(s.a.get_text(), s.a.get("href")) for s in cites] == [
        ("[1]", "#ref-1"), ("[2]", "https://ok.example/2"), ("[3]", "#ref-3")]
    urls = [c.url for c in page.report.citations]
    assert urls[0].startswith("javascript:"), "the model keeps the URL as written, for the integrity check"
    refs = soup.find(id="references").find_all("li")
    entry_links = [[a.get("href") for a in li.find_all("a") if not a.find_parent(class_="cited-in")] for li in refs]
    assert entry_links == [[], ["https://ok.example/2"], []]


def test_owasp_cheat_sheet_yields_nothing_active():
    page = checked_page(OWASP)
    soup = _assert_inert(page.html)
    # The payloads are shown, as code, not dropped: the page still teaches what the sheet teaches.
    codes = " ".join(code.get_text() for code in soup.find_all("code"))
    assert "<SCRIPT" in codes.upper() and "javascript:" in codes.lower()
    assert "&#0000106&#0000097" in codes, "character references in code stay literal"


@pytest.mark.parametrize("fonts", ["embedded", "google", "system"])
def test_default_report_is_inert(fonts):
    _assert_inert(checked_page(HERE.parents[1] / "content" / "graph-engineering.md", fonts=fonts).html)


def test_a_long_url_is_checked_but_never_kept():
    """An embedded image's data: URL (megabytes) is checked at every build but not memoised: `serve` rebuilding
    with a changing image would otherwise keep every version alive."""
    from graphsite.builder.fragments import public_url
    from graphsite.builder.sanitize import is_safe_url, url_scheme
    from graphsite.urls import problem

    long_url = "data:image/png;base64," + "A" * 4096
    long_link = "https://example.org/" + "a" * 4096  # public: its problems are asked too
    short_url = "https://example.org/short"
    checks = (url_scheme, is_safe_url, public_url, problem)
    for check in checks:
        check.cache_clear()  # type: ignore[attr-defined]
    assert (url_scheme(long_url), is_safe_url(long_url), public_url(long_url)) == ("data", False, "")
    assert public_url(long_link) == long_link
    assert [check.cache_info().currsize for check in checks] == [0, 0, 0, 0]  # type: ignore[attr-defined]
    assert (url_scheme(short_url), is_safe_url(short_url)) == ("https", True)
    assert url_scheme.cache_info().currsize > 0  # type: ignore[attr-defined]
