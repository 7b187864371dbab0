"""The verdict on one URL from what its answers were (pure): statuses, challenges, fragments, redirects."""

from __future__ import annotations

import pytest

from graphsite.citations.verdict import Answer, Failure, Page, Scan, verdict
from graphsite.config import LinksConfig

URL = "https://a.example/doc"
SETTINGS = LinksConfig(max_page_mib=2)


def page(status: int = 200, *, scan: Scan | None = None, redirects: tuple[str, ...] = (), final: str = URL,
         **answer) -> Page:
    return Page(final, Answer(status, None, answer.pop("retry_after", None), scan=scan, **answer), redirects)


@pytest.mark.parametrize("answer, state, words", [
    (page(200), "ok", ""),
    (page(503, retry_after="3600"), "unavailable", "HTTP 503, Retry-After 3600"),
    (page(503, challenge="Cloudflare"), "blocked", "a bot wall's challenge: Cloudflare"),
    (page(429), "blocked", "HTTP 429"),
    (page(404), "dead", "HTTP 404"),
    (page(200, redirects=(URL + "/",), final=URL + "/"), "redirected", "1 redirect(s)"),
])
def test_the_state_of_an_answer(answer, state, words):
    result = verdict(URL, "", answer, 0.0, SETTINGS)
    assert result.state == state and words in result.detail


@pytest.mark.parametrize("scan, state, words", [
    (Scan(frozenset({"x"}), "found", 10, None), "ok", ""),
    (Scan(frozenset(), "complete", 10, 10), "dead", "the page has no #x anchor"),
    (Scan(frozenset(), "cap", 2 << 20, None), "unverified", "first 2 MiB"),
    (Scan(frozenset(), "short", 10, 500), "unverified", "ended after 10 of 500 bytes"),
    (Scan(frozenset({"x"}), "short", 10, 500), "ok", ""),
])
def test_the_fragment_rules(scan, state, words):
    result = verdict(URL + "#x", "x", page(200, scan=scan), 0.0, SETTINGS)
    assert result.state == state and words in result.detail
    if scan.outcome == "short" and state == "ok":
        assert "ended after 10 of 500 bytes" in result.warning


def test_a_fragment_on_a_page_that_is_not_html_is_ok_with_a_warning():
    result = verdict(URL + "#x", "x", page(200, scan=None), 0.0, SETTINGS)
    assert result.state == "ok" and "not HTML" in result.warning


def test_a_failure_is_the_verdict():
    result = verdict(URL, "", Page(URL, failure=Failure("timeout", "no answer")), 0.0, SETTINGS)
    assert (result.state, result.detail) == ("timeout", "no answer")
