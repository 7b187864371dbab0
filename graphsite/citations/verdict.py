"""What one URL's answers mean: the values the checker collects (pure data) and the verdict drawn from them.

Pure: no network. graphsite/citations/checker.py fills these values from real answers; `verdict` turns them
into one LinkResult, the fragment rules included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urldefrag

from graphsite.citations.pages import wanted_names
from graphsite.citations.results import LinkResult, state_for_status

if TYPE_CHECKING:
    from graphsite.config import LinksConfig


class Failure(Exception):
    """No usable answer: `state` (dead, timeout, private; dns inside the checker) and a one-line reason."""

    def __init__(self, state: str, detail: str) -> None:
        super().__init__(detail)
        self.state, self.detail = state, detail


@dataclass(frozen=True)
class Scan:
    """What was read of a page while looking for its fragments."""

    found: frozenset[str]
    outcome: str  # complete | cap (stopped at links.max_page_mib) | short (the body ended early) | found
    received: int
    expected: int | None


@dataclass(frozen=True)
class Answer:
    """One HTTP answer as the checker read it."""

    status: int
    location: str | None
    retry_after: str | None
    sets_cookie: bool = False
    challenge: str = ""  # the bot wall whose challenge this is (graphsite/citations/challenges.py)
    scan: Scan | None = None
    short: str = ""  # a body shorter than its Content-Length: how much of it came


@dataclass(frozen=True)
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
    final = page.final_url + (f"#{fragment}" if fragment else "")
    state = state_for_status(answer.status, challenge=answer.challenge)
    moved = bool(page.redirects) and page.final_url != urldefrag(url)[0]  # not when a cookie round trip
    redirects, final_url = page.redirects, final if moved else ""
    if state != "ok":
        tries = f" after {page.attempts} attempts" if page.attempts > 1 else ""
        where = f" at {page.final_url}" if moved else ""
        why = f" (a bot wall's challenge: {answer.challenge})" if answer.challenge else ""
        wait = f", Retry-After {answer.retry_after}" if answer.retry_after and state != "ok" else ""
        return LinkResult(url, state, f"HTTP {answer.status}{where}{why}{wait}{tries}", answer.status, final_url,
                          redirects, now)
    warning = answer.short
    names = wanted_names(fragment) if fragment else frozenset()
    if names:
        scan = answer.scan
        if scan is None:
            warning = "the #fragment was not checked: the page is not HTML"
        elif names.isdisjoint(scan.found):
            return LinkResult(url, *_missing_fragment(fragment, scan, settings), answer.status, final_url,
                              redirects, now)
        elif scan.outcome == "short":
            warning = f"{_ended(scan)} (the #{fragment} anchor was already there)"
    if moved:
        return LinkResult(url, "redirected", f"{len(page.redirects)} redirect(s) to {final}", answer.status,
                          final_url, redirects, now, warning=warning)
    return LinkResult(url, "ok", "", answer.status, final_url, redirects, now, warning=warning)


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
