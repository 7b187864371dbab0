"""The verdicts on the page: a page built with --check-links says, per reference, what came of its check and,
once near the list, how many sources were checked and when; a page built without says nothing of checks."""

from __future__ import annotations

import time

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from graphsite.builder.model import SourceCheck
from graphsite.builder.references import check_words
from graphsite.cli import main

TODAY = time.strftime("%Y-%m-%d", time.gmtime())


def write_report(path, server):
    path.write_text(f"""# Checked sources

## 1. Claims

A claim [[1]({server.url('/ok')})], another [[2]({server.url('/missing')})], a walled one
[[3]({server.url('/cloudflare-200')})] and one that repeats [[5]({server.url('/ok')})].

## References

1. A working page. {server.url('/ok')}
2. A page that is gone. {server.url('/missing')}
3. A page behind a bot wall. {server.url('/cloudflare-200')}
4. A book with no URL at all.
5. The working page again. {server.url('/ok')}
6. My notes. file:///home/me/notes.md
""", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory, shared_pitfall_server):
    """The same report built with and without --check-links: (checked soup, unchecked soup, outputs)."""
    root = tmp_path_factory.mktemp("verdicts")
    (root / "graphsite.toml").write_text("[links]\ntimeout = 2.0\nretries = 0\nallow_private = true\n")
    source = write_report(root / "r.md", shared_pitfall_server)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.delenv("GRAPHSITE_CONFIG", raising=False)
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        checked = CliRunner().invoke(main, ["build", str(source), "--check-links", "--out", "checked"])
        plain = CliRunner().invoke(main, ["build", str(source), "--out", "plain"])
    assert checked.exit_code == 1, checked.output  # /missing is dead: the page is written all the same
    assert plain.exit_code == 0, plain.output
    read = lambda name: BeautifulSoup((root / name / "index.html").read_text(encoding="utf-8"), "html.parser")  # noqa: E731
    return read("checked"), read("plain"), root


def _states(soup):
    return {li["value"]: (li.select_one(".ref-state").get_text() if li.select_one(".ref-state") else "")
            for li in soup.select(".reference-list li")}


def test_a_checked_page_says_what_came_of_each_reference(pages):
    checked, _, _ = pages
    assert _states(checked) == {
        "1": f"checked {TODAY}", "2": f"unreachable on {TODAY} (HTTP 404)",
        "3": f"blocked by a bot check on {TODAY}", "4": "", "5": f"checked {TODAY}", "6": ""}
    summary = checked.select_one("#references .ref-checked").get_text()
    assert summary == (f"Links checked on {TODAY} (UTC): 3 sources, 1 reachable, 1 unreachable, "
                       "1 blocked by a bot check or refused.")


def test_an_unchecked_page_claims_nothing(pages):
    _, plain, _ = pages
    assert set(_states(plain).values()) == {""}
    assert plain.select_one(".ref-checked") is None and "checked" not in plain.select_one("#references").get_text()


def test_a_reference_says_why_it_is_not_a_link_and_which_it_repeats(pages):
    for soup in pages[:2]:
        notes = {li["value"]: [n.get_text(" ", strip=True) for n in li.select(".ref-note")]
                 for li in soup.select(".reference-list li")}
        private = ["not public"]  # the server is on 127.0.0.1: checked (links.allow_private), never linked
        assert notes == {"1": private, "2": private, "3": private, "4": ["no URL given"],
                         "5": [*private, "same source as reference 1"], "6": private}
        assert soup.select_one("#ref-5 .ref-note a")["href"] == "#ref-1"


def test_names_in_the_reference_list_stay_short(pages):
    for soup in pages[:2]:
        for element in soup.select("#references [aria-label], #references a"):
            name = element.get("aria-label") or element.get_text(" ", strip=True)
            if element.name == "a" and element.get("href", "").startswith("http"):
                continue  # a source's own title is its name, as the author wrote it
            assert len(name) <= 80, name


@pytest.mark.parametrize("check", [
    SourceCheck(state, status, time.time(), bot) for state in ("ok", "redirected", "warn", "blocked", "unavailable",
                                                              "dead", "timeout", "unverified", "skipped")
    for status in (None, 404, 503) for bot in (False, True)])
def test_every_verdict_has_short_words(check):
    words = check_words(check)
    assert 0 < len(words) <= 80 and (TODAY in words or words == "not checked"), words


@pytest.mark.browser
def test_in_a_browser_the_checked_page_shows_the_states_and_the_date(pages, browser):
    from tests.page.conftest import axe_violations, serve

    _, _, root = pages
    with serve(root) as base:
        context = browser.new_context(bypass_csp=True, viewport={"width": 1200, "height": 900})  # for axe
        try:
            shown = {}
            for name in ("checked", "plain"):
                page = context.new_page()
                page.goto(f"{base}/{name}/index.html#references")
                shown[name] = page.locator("#references").inner_text()
                if name == "checked":
                    violations = [v for v in axe_violations(page) if "#references" in v or ".ref-" in v]
                    assert violations == [], violations
                page.close()
        finally:
            context.close()
    assert f"Links checked on {TODAY} (UTC): 3 sources" in shown["checked"]
    for words in (f"checked {TODAY}", f"unreachable on {TODAY} (HTTP 404)", f"blocked by a bot check on {TODAY}"):
        assert words in shown["checked"], shown["checked"]
    assert "checked" not in shown["plain"] and TODAY not in shown["plain"] and "unreachable" not in shown["plain"]
    assert "no URL given" in shown["plain"] and "same source as reference 1" in shown["plain"]


def test_every_citation_name_stays_within_80_characters(tmp_path):
    from graphsite.usecases.build import checked_page

    long_title = "A very long title of a source " * 6
    source = tmp_path / "r.md"
    source.write_text(f"# R\n\n## 1. Part\n\nClaims [[1](https://one.example/)] [[2](https://x.com/a/status/...)]"
                      f" [[123](https://api.example/v1?api_key=hunter2)].\n\n## References\n\n"
                      f"1. {long_title} https://one.example/\n2. {long_title} https://x.com/a/status/...\n"
                      f"123. {long_title} https://api.example/v1?api_key=hunter2\n", encoding="utf-8")
    soup = BeautifulSoup(checked_page(source).html, "html.parser")
    labels = [a["aria-label"] for a in soup.select("sup.cite a")]
    assert len(labels) == 3 and all(len(label) <= 80 for label in labels), labels
    assert labels[1].endswith("(link incomplete; goes to the reference list)"), labels
    assert labels[2].endswith("(link withheld; goes to the reference list)") and "hunter2" not in str(soup), labels
