"""The page in a real headless Chromium, served from a loopback HTTP server: JS off, JS on, each font mode.

A handful of page loads on one shared browser: every detail reachable with JS off (print opens every
accordion), a #fragment inside a closed accordion opens it, expand/collapse-all and the search box work, no
console error, no CSP violation, and by default (embedded fonts) no request leaves the page.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from graphsite.builder.build import page_from_source, write_page

pytestmark = pytest.mark.browser

REPORT = Path(__file__).resolve().parents[2] / "content" / "graph-engineering.md"
RULES_TARGET = "32-the-seven-operating-rules"
FIRST_RULE_TARGET = "72-keep-nodes-boring"
COLLECT_CSP = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
    e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"""
MODES = ("embedded", "system", "google")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A loopback HTTP server with the default page built in each font mode: /embedded/, /system/, /google/."""
    root = tmp_path_factory.mktemp("site")
    for fonts in MODES:
        write_page(page_from_source(REPORT, subdomain="graph-eng-abc123", fonts=fonts), root / fonts)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def hosts(requests: list[str]) -> set[str]:
    return {urlsplit(url).hostname or "" for url in requests}


def _open(browser, url: str, *, javascript: bool = True, width: int = 1400):
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": width, "height": 1000})
    page = context.new_page()
    events = {"console": [], "requests": []}
    page.on("console", lambda message: events["console"].append((message.type, message.text)))
    page.on("request", lambda request: events["requests"].append(request.url))
    if javascript:
        page.add_init_script(COLLECT_CSP)
    page.goto(url)
    page.wait_for_load_state("load")
    return context, page, events


def test_js_off_every_word_is_reachable_and_print_opens_every_accordion(browser, site):
    context, page, events = _open(browser, f"{site}/embedded/", javascript=False)
    try:
        bodies = page.locator("details.detail .detail-body")
        count = bodies.count()
        assert count >= 10
        assert page.locator("details[open]").count() == 0
        assert not bodies.first.is_visible(), "folded by default"
        assert page.locator("#toolbar").is_hidden(), "no dead buttons without JS"
        page.emulate_media(media="print")
        for index in range(count):
            assert bodies.nth(index).is_visible(), f"detail {index} hidden in print"
        for part in (".card", ".rules"):  # kept whole across pages, and the rules box no longer a full page tall
            assert page.locator(part).first.evaluate("el => getComputedStyle(el).breakInside") == "avoid", part
        assert page.locator("#rules").bounding_box()["height"] < 400
        assert page.locator(".ref-url").first.is_visible(), "reference URLs print in full"
        page.emulate_media(media="screen")
        page.locator("details.detail > summary").first.click()  # native, no JS
        assert bodies.first.is_visible()
        page.locator("#rules a").first.click()  # a link into a closed accordion: the browser opens it
        assert page.locator(f"[id='{FIRST_RULE_TARGET}']").is_visible()
        assert not [text for kind, text in events["console"] if kind == "error"]
        assert hosts(events["requests"]) == {"127.0.0.1"}
    finally:
        context.close()


def test_js_on_fragment_opens_its_accordion_and_expand_collapse_all(browser, site):
    context, page, events = _open(browser, f"{site}/system/#{RULES_TARGET}")
    try:
        target = page.locator(f"[id='{RULES_TARGET}']")
        assert target.is_visible()
        assert target.evaluate("el => el.closest('details').open") is True
        total = page.locator("details").count()
        page.get_by_role("button", name="Collapse all").click()
        assert page.locator("details[open]").count() == 0 and not target.is_visible()
        page.evaluate(f"document.querySelector('#toc a').href = '#{RULES_TARGET}'")
        page.locator("#toc a").first.click()  # same fragment as the URL: no hashchange, the click opens it
        assert target.is_visible()
        page.get_by_role("button", name="Expand all").click()
        assert page.locator("details[open]").count() == total
        page.get_by_role("button", name="Collapse all").click()
        deep = page.locator("details h3[id^='108-']")  # §10.8, folded inside §10
        assert not deep.is_visible()
        page.evaluate("location.hash = '#' + document.querySelector(\"details h3[id^='108-']\").id")
        deep.wait_for(state="visible")
        assert page.evaluate("window.__csp") == []
        assert not [text for kind, text in events["console"] if kind == "error"]
        assert hosts(events["requests"]) == {"127.0.0.1"}, "with --fonts system no request leaves the page"
    finally:
        context.close()


def test_theme_and_responsive_cards(browser, site):
    context, page, _ = _open(browser, f"{site}/system/")
    try:
        def style(selector, prop):
            return page.locator(selector).first.evaluate(
                    f"el => getComputedStyle(el).{prop}")
        assert style("body", "backgroundColor") == "rgb(10, 14, 23)"
        assert style("section.sec", "borderBottom") == "1px solid rgb(31, 41, 55)"
        assert style("pre", "backgroundColor") == "rgb(15, 23, 42)"
        assert style("main p a[href^='http']", "color") == "rgb(125, 211, 252)"
        wide = [page.locator("#cards article").nth(i).bounding_box() for i in range(5)]
        assert min(box["width"] for box in wide) >= 16 * 16 - 1, "cards stay readable (16 rem)"
        rules = page.locator("#rules").bounding_box()
        assert rules["x"] > max(box["x"] for box in wide) and rules["y"] < wide[0]["y"] + 1, "rules beside cards"
        page.set_viewport_size({"width": 1280, "height": 800})
        # The report's checklist: the floors and the rules without scrolling (titles, on a 1280x800 screen).
        for part in ["#rules", *(f"#cards article:nth-child({i}) .card-title" for i in range(1, 5))]:
            box = page.locator(part).bounding_box()
            assert box["y"] + box["height"] <= 800, part
        page.set_viewport_size({"width": 390, "height": 800})
        narrow = [page.locator("#cards article").nth(i).bounding_box() for i in range(5)]
        assert len({round(box["x"]) for box in narrow}) == 1
        assert [box["y"] for box in narrow] == sorted(box["y"] for box in narrow)
        assert page.locator(".ladder-narrow").is_visible() and not page.locator(".ladder-wide").is_visible()
        size = page.locator(".ladder-narrow .step-title").first.evaluate(
            "el => el.getBoundingClientRect().height")
        assert size >= 11, "the phone ladder's titles stay readable"
    finally:
        context.close()


def test_default_page_embeds_its_fonts_and_requests_nothing_else(browser, site):
    context, page, events = _open(browser, f"{site}/embedded/")
    try:
        page.evaluate("document.fonts.ready")
        loaded = page.evaluate("[...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)")
        assert {"gs-sans", "gs-serif", "gs-mono"} <= set(loaded)
        assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("gs-sans")
        assert hosts(events["requests"]) == {"127.0.0.1"} and len(events["requests"]) == 1, "one request: the page"
        assert page.evaluate("window.__csp") == []
        assert not [text for kind, text in events["console"] if kind == "error"]
    finally:
        context.close()


def test_search_finds_text_inside_a_closed_accordion_and_opens_it(browser, site):
    context, page, _ = _open(browser, f"{site}/embedded/")
    try:
        deep = page.locator("details h3[id^='108-']")
        assert not deep.is_visible()
        words = deep.evaluate("el => el.textContent.replace('#', '').trim().split(' ').slice(1, 3).join(' ')")
        box = page.get_by_role("searchbox", name="Find in the report")
        box.fill(words)
        assert page.locator(".found").inner_text().endswith("press Enter to go to the first")
        for _ in range(50):  # bounded: Enter walks the matches until the heading's is selected
            box.press("Enter")
            if page.evaluate("getSelection().anchorNode && getSelection().anchorNode.parentElement.closest('h3')"
                             " && getSelection().anchorNode.parentElement.closest('h3').id.startsWith('108-')"):
                break
        assert deep.is_visible(), "the match's accordion opened"
        assert page.evaluate("getSelection().toString().toLowerCase()") == words.lower()
        box.fill("zzqx-no-such-words")
        assert page.locator(".found").inner_text() == "no match"
    finally:
        context.close()


def test_js_off_reads_the_same_words(browser, site):
    texts = []
    for javascript in (False, True):
        context, page, _ = _open(browser, f"{site}/embedded/", javascript=javascript)
        try:
            texts.append(page.evaluate("document.querySelector('main').textContent.replace(/\\s+/g, ' ')"))
        finally:
            context.close()
    assert texts[0] == texts[1] and len(texts[0]) > 50_000


def test_google_fonts_are_the_only_external_requests(browser, site):
    context, page, events = _open(browser, f"{site}/google/")
    try:
        assert hosts(events["requests"]) <= {"127.0.0.1", "fonts.googleapis.com", "fonts.gstatic.com"}
        assert "fonts.googleapis.com" in hosts(events["requests"])
        assert page.evaluate("window.__csp") == [], "the CSP allows the fonts it asks for"
    finally:
        context.close()
