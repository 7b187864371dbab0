"""What one URL's answers mean: the values the checker collects (pure data) and the verdict drawn from them.

Pure: no network. graphsite/citations/checker.py fills these values from real answers; `verdict` turns them
into one LinkResult, the fragment rules included.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urlsplit

from graphsite.citations.pages import wanted_names
from graphsite.citations.results import LinkResult, state_for_status
from graphsite.patterns import lazy_pattern
from graphsite.urls import mask
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.config import LinksConfig


class Failure(Exception):
    """No usable answer: `state` (dead, timeout, private, unverified; dns inside the checker) and a reason;
    `permanent` when asking again gets the same (TLS, not HTTP, oversized headers): not retried."""

    def __init__(self, state: str, detail: str, *, permanent: bool = False) -> None:
        super().__init__(detail)
        self.state, self.detail, self.permanent = state, detail, permanent


@frozen  # made once a page: its class costs more than its instances
class Scan:
    """What was read of a page while looking for its fragments."""

    found: frozenset[str]
    outcome: str  # complete | cap (stopped at links.max_page_mib) | short (the body ended early) | found
    received: int
    expected: int | None


# Answer and Page are made once a page, like Scan: a class of dataclass(frozen=True) costs ~4.7 M instructions
# to make (its methods compiled), more than its instances cost over @frozen's under ~1,000 pages.
@frozen
class Answer:
    """One HTTP answer as the checker read it."""

    status: int
    location: str | None
    retry_after: str | None
    sets_cookie: bool = False
    challenge: str = ""  # the bot wall whose challenge this is (graphsite/citations/challenges.py)
    scan: Scan | None = None
    short: str = ""  # a body shorter than its Content-Length: how much of it came
    soft_404: str = ""  # a 2xx page that says it is not there: why it reads so


@frozen
class Page:
    """What a fragment-less URL led to: the final answer and the redirect chain (or a failure)."""

    final_url: str
    answer: Answer | None = None
    redirects: tuple[str, ...] = ()
    failure: Failure | None = None
    attempts: int = 1


def verdict(url: str, fragment: str, page: Page, now: float, settings: LinksConfig) -> LinkResult:
    if page.failure is not None or page.answer is None:
        failure = page.failure or Failure("dead", "no answer")
        return LinkResult(url, failure.state, failure.detail, checked_at=now)
    answer = page.answer
    state = state_for_status(answer.status, challenge=answer.challenge)
    moved = bool(page.redirects) and page.final_url != urldefrag(url)[0]  # not when a cookie round trip
    # masked (a pre-signed URL redirected to), and only when the link moved: masking is a parse of the URL
    final_url = mask(page.final_url + (f"#{fragment}" if fragment else "")) if moved else ""
    redirects = tuple(map(mask, page.redirects))
    if state != "ok":
        tries = f" after {page.attempts} attempts" if page.attempts > 1 else ""
        where = f" at {mask(page.final_url)}" if moved else ""
        why = f" (a bot wall's challenge: {answer.challenge})" if answer.challenge else ""
        wait = f", Retry-After {answer.retry_after}" if answer.retry_after and state != "ok" else ""
        return LinkResult(url, state, f"HTTP {answer.status}{where}{why}{wait}{tries}", answer.status, final_url,
                          redirects, now, challenge=answer.challenge)
    warning = answer.short
    names = wanted_names(fragment) if fragment else frozenset()
    found = False  # the #fragment was found: the page is the real one, whatever its title
    if names:
        scan = answer.scan
        if scan is None:
            warning = "the #fragment was not checked: the page is not HTML"
        elif names.isdisjoint(scan.found) and not answer.soft_404:
            return LinkResult(url, *_missing_fragment(fragment, scan, settings), answer.status, final_url,
                              redirects, now)
        elif not names.isdisjoint(scan.found):
            found = True
            if scan.outcome == "short":
                warning = f"{_ended(scan)} (the #{fragment} anchor was already there)"
    suspect = "" if found else answer.soft_404 or (_sent_home(url, mask(page.final_url)) if moved else "")
    if suspect:
        return LinkResult(url, "warn", suspect, answer.status, final_url, redirects, now, warning=warning)
    if moved:
        return LinkResult(url, "redirected", f"{len(page.redirects)} redirect(s) to {final_url}", answer.status,
                          final_url, redirects, now, warning=warning)
    return LinkResult(url, "ok", "", answer.status, final_url, redirects, now, warning=warning)


_HOME = lazy_pattern(r"^/(?:[a-z]{2}(?:[-_][a-z]{2})?/)?(?:(?:index|default|home)(?:\.\w+)?)?$", re.IGNORECASE)


def _sent_home(url: str, final: str) -> str:
    """Return why a redirect reads as "the page is gone" (a deep link sent to the site's home page), else ""."""
    asked, reached = urlsplit(url), urlsplit(final)
    home = _HOME()
    if home.match(asked.path or "/") or not home.match(reached.path or "/") or reached.query \
            or asked.path.rstrip("/") == reached.path.rstrip("/"):  # /en to /en/ is the same page
        return ""
    return f"a deep link redirected to the site's home page ({final}): the page it named is likely gone"


def _missing_fragment(fragment: str, scan: Scan, settings: LinksConfig) -> tuple[str, str]:
    if scan.outcome == "cap":
        return "unverified", (f"no #{fragment} anchor in the first {settings.max_page_mib:g} MiB of the page "
                              "(links.max_page_mib); the rest was not read")
    if scan.outcome == "short":
        return "unverified", f"{_ended(scan)}, before any #{fragment} anchor"
    return "dead", f"the page has no #{fragment} anchor"


def _ended(scan: Scan) -> str:
    if scan.expected is None:
        return f"the body ended early, after {scan.received:,} bytes (no length was given)"
    return f"the body ended after {scan.received:,} of {scan.expected:,} bytes"
