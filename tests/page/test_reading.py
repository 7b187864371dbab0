"""What a reader sees, proven in Debian's Chromium: the PDF prints at full size with every code line, an opened
section shows its text once, the reader's font size keeps the hierarchy, wide screens get a sticky guide
(a plain list of links without JS), and search finds a phrase that crosses bold text."""

from __future__ import annotations

import math
import re
import statistics

import pytest

from graphsite.builder.build import page_from_source, write_page
from graphsite.builder.pdf import write_pdf

from .conftest import REPORT, serve

pytestmark = pytest.mark.browser

MIN_PDF_POINTS = 10.5
SECONDARY = (".source", ".card-definition", ".card-who", ".byline", ".ref-url", ".cited-in", ".toc li",
             ".rules li", "details > summary", ".reference-list li", "figcaption")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("reading")
    path = write_page(page_from_source(REPORT, subdomain="graph-eng-abc123"), root / "page")
    with serve(root) as url:
        yield root, path, f"{url}/page/"


@pytest.fixture(scope="module")
def pdf_pages(site):
    """The PDF's pages as (text, character sizes in points, font names) per page."""
    from pypdf import PdfReader

    root, path, _ = site
    reader = PdfReader(write_pdf(path, root / "report.pdf"))
    pages = []
    for page in reader.pages:
        sizes: list[float] = []
        fonts: set[str] = set()

        def visit(text, cm, tm, font, size, sizes=sizes, fonts=fonts):
            if not text.strip():
                return
            scale = math.hypot(tm[0] * cm[0] + tm[1] * cm[2], tm[0] * cm[1] + tm[1] * cm[3])
            sizes.extend([size * scale] * len(text.strip()))
            if font:
                fonts.add(str(font.get("/BaseFont")))
        text = page.extract_text(visitor_text=visit)
        for margin in (f"{len(pages) + 1} / {len(reader.pages)}", reader.metadata.title):  # printed in the margins
            assert margin in text, (len(pages) + 1, margin)
            text = text.replace(margin, "", 1)
        pages.append((text, sizes, fonts))
    return pages


def _open(browser, url, *, width=1440, javascript=True, font_size=None, bypass_csp=False):
    context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript,
                                  bypass_csp=bypass_csp)
    tab = context.new_page()
    if font_size:
        session = context.new_cdp_session(tab)
        session.send("Page.enable")
        session.send("Page.setFontSizes", {"fontSizes": {"standard": font_size, "fixed": round(font_size * 13 / 16)}})
    tab.goto(url)
    tab.evaluate("document.fonts.ready")
    return context, tab


def test_pdf_prints_at_full_size(pdf_pages):
    sizes = [size for _, page_sizes, _ in pdf_pages for size in page_sizes]
    assert statistics.median(sizes) >= MIN_PDF_POINTS, statistics.median(sizes)


def test_pdf_prints_every_glyph_in_an_embedded_face(pdf_pages):
    from fontTools.ttLib import TTFont

    from graphsite.builder.fonts import FACES
    from graphsite.paths import theme_dir

    embedded = {TTFont(theme_dir() / "fonts" / face.file)["name"].getDebugName(6) for face in FACES}
    used = {name.split("+", 1)[-1] for _, _, fonts in pdf_pages for name in fonts}
    assert used and used <= embedded, f"fallback fonts in the PDF: {sorted(used - embedded)}"


def test_pdf_holds_every_code_line(site, pdf_pages):
    from bs4 import BeautifulSoup

    _, path, _ = site
    text = re.sub(r"\s+", "", "".join(page_text for page_text, _, _ in pdf_pages))
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    lines = [re.sub(r"\s+", "", line)
             for pre in soup.select("main pre, footer pre") for line in pre.get_text().splitlines()]
    missing = [line for line in lines if line and line not in text]
    assert len(lines) > 100 and not missing, missing[:10]


def test_pdf_prints_each_summary_once_and_no_toggle(site, pdf_pages):
    from bs4 import BeautifulSoup

    _, path, _ = site
    text = " ".join(" ".join(page_text for page_text, _, _ in pdf_pages).split())
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    excerpts = [" ".join(p.get_text(" ").split()[:6]) for p in soup.select(".summary .excerpt")]
    assert excerpts and all(text.count(start) == 1 for start in excerpts), excerpts
    assert "Read §" not in text and "Read “" not in text, "accordion toggles do not print"


def test_an_opened_section_shows_its_summary_once(browser, site):
    _, _, url = site
    context, tab = _open(browser, url)
    try:
        repeated = tab.evaluate("""() => {
            const found = [];
            for (const section of document.querySelectorAll('#report > section')) {
                const details = section.querySelector('details');
                const summary = section.querySelector('.summary');
                if (!details || !summary) continue;
                const start = summary.innerText.trim().split(/\\s+/).slice(0, 8).join(' ');
                details.open = true;
                const text = section.innerText.replace(/\\s+/g, ' ');
                const count = text.split(start).length - 1;
                if (count !== 1) found.push(section.querySelector('h2').id + ': ' + count);
            }
            return found;
        }""")
        assert not repeated, repeated
    finally:
        context.close()


def _sizes(tab) -> dict[str, float]:
    return tab.evaluate("""(selectors) => {
        const size = (el) => parseFloat(getComputedStyle(el).fontSize);
        const out = {prose: size(document.querySelector('.summary p, .intro p'))};
        for (const selector of selectors) {
            const el = document.querySelector(selector);
            if (el) out[selector] = size(el);
        }
        return out;
    }""", list(SECONDARY))


def test_the_readers_font_size_scales_the_prose_and_keeps_the_hierarchy(browser, site):
    _, _, url = site
    measured = {}
    for default in (12, 16, 20, 24):
        context, tab = _open(browser, url, font_size=default)
        try:
            measured[default] = _sizes(tab)
        finally:
            context.close()
    assert measured[24]["prose"] >= 1.4 * measured[16]["prose"] - 0.01, measured
    for default, sizes in measured.items():
        larger = {name: size for name, size in sizes.items() if size > sizes["prose"] + 0.01}
        assert not larger, (default, sizes["prose"], larger)


def test_wide_screens_get_a_sticky_guide_and_narrow_ones_do_not(browser, site):
    _, _, url = site
    context, tab = _open(browser, url, width=1440)
    try:
        tab.evaluate("document.querySelector('#s5, #report section:nth-of-type(6) h2').scrollIntoView()")
        tab.wait_for_timeout(100)
        guide = tab.evaluate("""() => {
            const toc = document.getElementById('toc'), box = toc.getBoundingClientRect();
            const text = document.getElementById('report').getBoundingClientRect();
            const current = toc.querySelector('[aria-current]');
            return {position: getComputedStyle(toc).position, top: box.top, beside: box.left >= text.right,
                    visible: box.bottom > 0 && box.top < innerHeight, current: current && current.textContent,
                    back: toc.querySelector('.back-top a').offsetParent !== null};
        }""")
        assert guide["position"] == "sticky" and guide["beside"] and guide["visible"], guide
        assert guide["current"] and guide["back"], guide
    finally:
        context.close()
    for width in (1199, 768, 375):
        context, tab = _open(browser, url, width=width)
        try:
            narrow = tab.evaluate("""() => {
                const toc = document.getElementById('toc');
                return {position: getComputedStyle(toc).position,
                        back: toc.querySelector('.back-top a').offsetParent !== null,
                        before: toc.getBoundingClientRect().bottom <= document.getElementById('report')
                            .getBoundingClientRect().top};
            }""")
            assert narrow == {"position": "static", "back": False, "before": True}, (width, narrow)
        finally:
            context.close()


def test_the_guide_is_a_list_of_links_without_javascript(browser, site):
    _, _, url = site
    context, tab = _open(browser, url, width=1440, javascript=False)
    try:
        links = tab.locator("#toc ol a")
        assert links.count() >= 15 and tab.evaluate("getComputedStyle(toc).position") == "sticky"
        target = links.nth(3).get_attribute("href")
        links.nth(3).click()
        assert tab.evaluate("location.hash") == target
        assert tab.evaluate(f"document.getElementById('{target[1:]}').getBoundingClientRect().top") < 100
    finally:
        context.close()


def test_search_finds_a_phrase_that_crosses_bold_text(browser, site):
    _, _, url = site
    context, tab = _open(browser, url)
    try:
        box = tab.get_by_role("searchbox", name="Find in the report")
        assert tab.locator(".found").inner_text() == ""
        phrase = tab.evaluate("""() => {
            const strong = [...document.querySelectorAll('#report strong')].find(s => {
                const next = s.nextSibling;
                return next && next.nodeType === 3 && /^\\s*\\w+\\s+\\w+/.test(next.data) && !s.closest('.excerpt');
            });
            const tail = strong.nextSibling.data.trim().split(/\\s+/).slice(0, 2).join(' ');
            return strong.textContent.trim().split(/\\s+/).slice(-2).join(' ') + ' ' + tail;
        }""")
        box.fill(phrase)
        assert re.fullmatch(r"\d+ match(es)?: press Enter.*", tab.locator(".found").inner_text())
        box.press("Enter")
        selected = " ".join(tab.evaluate("getSelection().toString()").split())
        assert selected.lower() == phrase.lower()
        assert tab.locator(".found").get_attribute("role") == "status"
        box.fill("graph")  # many matches: Enter goes forward, Shift+Enter back
        box.press("Enter")
        box.press("Enter")
        assert tab.locator(".found").inner_text().startswith("match 2 of")
        box.press("Shift+Enter")
        assert tab.locator(".found").inner_text().startswith("match 1 of")
    finally:
        context.close()


TEXT_SPACING = ("* { line-height: 1.5 !important; letter-spacing: .12em !important; word-spacing: .16em !important; }"
                " p { margin-bottom: 2em !important; }")


@pytest.mark.parametrize("width", [375, 1440])
def test_text_spacing_overrides_clip_nothing(browser, site, width):
    _, _, url = site
    context, tab = _open(browser, url, width=width, bypass_csp=True)  # the user's style sheet, as a bookmarklet
    try:
        tab.add_style_tag(content=TEXT_SPACING)
        clipped = tab.evaluate("""() => {
            const found = [];
            if (document.documentElement.scrollWidth > innerWidth) found.push('page scrolls sideways');
            for (const el of document.querySelectorAll('body *')) {
                const style = getComputedStyle(el);
                if (el.closest('.scroll, .visually-hidden, svg, details:not([open]) > :not(summary)')) continue;
                const clips = /hidden|clip/.test(style.overflowX + style.overflowY);
                if (clips && (el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1))
                    found.push(el.tagName + '.' + el.className);
            }
            return found;
        }""")
        assert not clipped, clipped[:10]
    finally:
        context.close()
