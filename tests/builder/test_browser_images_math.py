"""Issue 21 in a real headless Chromium: an embedded local image loads under the page's CSP, and MathML built
from TeX renders, with no request and no CSP violation."""

from __future__ import annotations

import pytest

from graphsite.builder.build import page_from_source, write_page
from tests.builder.conftest import tiny_png

pytestmark = pytest.mark.browser

COLLECT_CSP = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
    e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"""


def test_an_embedded_image_and_mathml_show_under_the_csp(browser, tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(tiny_png(40))
    report = tmp_path / "r.md"
    report.write_text("# T\n\n## One\n\nThe diagram ![diagram](images/a.png) and $E = mc^2$.\n\n"
                      "$$\n\\frac{a}{b}\n$$\n", encoding="utf-8")
    target = write_page(page_from_source(report, fonts="system"), tmp_path / "site")
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.add_init_script(COLLECT_CSP)
    page.goto(target.as_uri())
    page.wait_for_load_state("load")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    try:
        assert page.evaluate("document.querySelector('img[alt=diagram]').naturalWidth") == 40
        heights = page.evaluate("[...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
        assert len(heights) == 2 and all(height > 0 for height in heights)
        assert page.evaluate("window.__csp") == []
        assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
    finally:
        context.close()
