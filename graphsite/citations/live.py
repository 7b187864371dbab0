"""Live link checks: every outbound URL of the page, concurrently, politely, with one verdict each.

httpx async with a global and a per-host limit and keep-alive; HEAD first, GET when HEAD is refused or a
`#fragment` must be found; redirects followed by hand (so that each hop is reported and loops detected);
`Retry-After` honoured on 429/503 up to a cap; bounded retries with exponential backoff for timeouts,
connection errors and 5xx. The only module of graphsite/citations that talks to the network.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx

from graphsite.citations.cache import LinkCache
from graphsite.citations.results import (
    RETRY_STATUSES,
    LinkReport,
    LinkResult,
    anchors,
    has_fragment,
    retry_after,
    state_for_status,
)
from graphsite.urls import malformed

if TYPE_CHECKING:
    from graphsite.config import Config, LinksConfig

MAX_REDIRECTS = 10
MAX_BODY = 5 * 1024 * 1024
BACKOFF = 0.5  # seconds before the first retry; doubles each time


class _Failure(Exception):
    """No usable answer: `state` (dead or timeout) and a one-line reason."""

    def __init__(self, state: str, detail: str) -> None:
        super().__init__(detail)
        self.state, self.detail = state, detail


@dataclass(frozen=True)
class _Answer:
    status: int
    location: str | None
    anchors: frozenset[str] | None
    retry_after: str | None
    sets_cookie: bool = False


@dataclass(frozen=True)
class _Page:
    """What a fragment-less URL led to: the final answer and the redirect chain (or a failure)."""

    status: int | None
    final_url: str
    redirects: tuple[str, ...] = ()
    anchors: frozenset[str] | None = None
    failure: _Failure | None = None
    attempts: int = 1


class _Budget:
    """Retries left for one URL, shared by its HEAD and GET requests."""

    def __init__(self, retries: int) -> None:
        self.left, self.used = retries, 0

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left, self.used = self.left - 1, self.used + 1
        return True


class Checker:
    """Checks URLs with one shared client; a fragment-less URL is fetched once however often it is linked."""

    def __init__(self, client: httpx.AsyncClient, settings: LinksConfig, needs_body: set[str]) -> None:
        self.client, self.settings, self.needs_body = client, settings, needs_body
        self.slots = asyncio.Semaphore(max(1, settings.concurrency))
        self.hosts: dict[str, asyncio.Semaphore] = {}
        self.pages: dict[str, asyncio.Task[_Page]] = {}
        self.requests = 0

    async def check(self, url: str) -> LinkResult:
        """Return the verdict on `url`."""
        now = time.time()
        broken = malformed(url)
        if broken:
            return LinkResult(url, "dead", f"malformed URL: it {broken}", checked_at=now)
        reason = _skip_reason(url, self.settings.skip)
        if reason:
            return LinkResult(url, "skipped", reason, checked_at=now)
        target, fragment = urldefrag(url)
        if target not in self.pages:
            self.pages[target] = asyncio.ensure_future(self._page(target))
        page = await self.pages[target]
        return _verdict(url, fragment, page, now)

    async def _page(self, target: str) -> _Page:
        parts = urlsplit(target)
        host = self.hosts.setdefault(f"{parts.scheme}://{parts.netloc}".lower(),
                                     asyncio.Semaphore(max(1, self.settings.per_host)))
        budget = _Budget(self.settings.retries)
        async with host:
            try:
                return await self._follow(target, budget, target in self.needs_body)
            except _Failure as failure:
                return _Page(None, target, failure=failure, attempts=budget.used + 1)
            except (httpx.InvalidURL, ValueError) as exc:  # e.g. a redirect to a URL httpx cannot parse
                return _Page(None, target, failure=_Failure("dead", f"invalid URL: {_one_line(exc)}"))

    async def _follow(self, target: str, budget: _Budget, body: bool) -> _Page:
        chain: list[str] = []
        current = target
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self._answer(current, budget, body)
            if answer.location is None:
                return _Page(answer.status, current, tuple(chain), answer.anchors, attempts=budget.used + 1)
            following = urldefrag(urljoin(current, answer.location))[0]
            seen = [target, *chain].count(following)
            # A site may redirect to the same URL once to set a cookie (the client keeps it): not yet a loop.
            if seen > 1 or (seen == 1 and not answer.sets_cookie):
                loop = " → ".join([target, *chain, following])
                raise _Failure("dead", f"redirect loop: {loop}")
            chain.append(following)
            current = following
        raise _Failure("dead", f"more than {MAX_REDIRECTS} redirects (last: {current})")

    async def _answer(self, url: str, budget: _Budget, body: bool) -> _Answer:
        """Return the answer for `url`: HEAD, then GET when HEAD is refused or the body is needed."""
        if not body:
            head = await self._attempts("HEAD", url, budget, body=False)
            if head is not None:
                return head
        answer = await self._attempts("GET", url, budget, body=body)
        assert answer is not None
        return answer

    async def _attempts(self, method: str, url: str, budget: _Budget, *, body: bool) -> _Answer | None:
        """Return the answer to `method`, retrying what is worth retrying; None: fall back to GET."""
        while True:
            try:
                answer = await self._send(method, url, body)
            except httpx.TimeoutException:
                if not budget.take():
                    raise _Failure("timeout", f"no answer within {self.settings.timeout:g} s "
                                              f"({budget.used + 1} attempts)") from None
                if method == "HEAD":
                    return None
                await self._backoff(budget)
                continue
            except httpx.TransportError as exc:
                if _dns_failure(exc):
                    raise _Failure("dead", f"DNS: {urlsplit(url).hostname} not found") from None
                if not budget.take():
                    raise _Failure("dead", f"connection failed: {_one_line(exc)}") from None
                await self._backoff(budget)
                continue
            if answer.status in RETRY_STATUSES:
                wait = retry_after(answer.retry_after) if answer.status in (429, 503) else None
                if wait is not None and wait > self.settings.max_retry_after:
                    return answer  # the site asks for longer than we wait: report it as it is
                if method == "HEAD" and wait is None and answer.status != 429:
                    return None
                if budget.take():
                    await (asyncio.sleep(wait) if wait is not None else self._backoff(budget))
                    continue
                return answer
            if method == "HEAD" and answer.status >= 400:
                return None  # HEAD refused (405, 501, 403 to robots, …): ask again with GET
            return answer

    async def _backoff(self, budget: _Budget) -> None:
        await asyncio.sleep(BACKOFF * 2 ** (budget.used - 1))

    async def _send(self, method: str, url: str, body: bool) -> _Answer:
        async with self.slots:
            self.requests += 1
            response = await self.client.send(self.client.build_request(method, url), stream=True)
            try:
                location = response.headers.get("location") if response.is_redirect else None
                found = None
                if body and location is None and response.is_success and _is_html(response):
                    found = anchors(await _read(response))
                return _Answer(response.status_code, location, found, response.headers.get("retry-after"),
                               "set-cookie" in response.headers)
            finally:
                await response.aclose()


def _verdict(url: str, fragment: str, page: _Page, now: float) -> LinkResult:
    if page.failure is not None:
        return LinkResult(url, page.failure.state, page.failure.detail, checked_at=now)
    assert page.status is not None
    final = page.final_url + (f"#{fragment}" if fragment else "")
    state = state_for_status(page.status)
    moved = bool(page.redirects) and page.final_url != urldefrag(url)[0]  # not when a cookie round trip
    common = {"status": page.status, "redirects": page.redirects, "checked_at": now,
              "final_url": final if moved else ""}
    if state != "ok":
        tries = f" after {page.attempts} attempts" if page.attempts > 1 else ""
        where = f" at {page.final_url}" if moved else ""
        return LinkResult(url, state, f"HTTP {page.status}{where}{tries}", **common)
    if fragment and page.anchors is not None and not has_fragment(page.anchors, fragment):
        return LinkResult(url, "dead", f"the page has no #{fragment} anchor", **common)
    if moved:
        return LinkResult(url, "redirected", f"{len(page.redirects)} redirect(s) to {final}", **common)
    note = "" if not fragment or page.anchors is not None else "fragment not checked (not HTML)"
    return LinkResult(url, "ok", note, **common)


def _skip_reason(url: str, prefixes: Sequence[str]) -> str:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        return f"not an http(s) URL ({scheme or 'no scheme'})"
    for prefix in prefixes:
        if url.startswith(prefix):
            return f"skipped by links.skip ({prefix})"
    return ""


def _is_html(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml", "")


async def _read(response: httpx.Response) -> str:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BODY:
            break
    return b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")


def _dns_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return True
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return any(s in text for s in ("Name or service not known", "nodename nor servname", "No address associated",
                                    "Temporary failure in name resolution", "getaddrinfo failed"))


def _offline(results: list[LinkResult]) -> bool:
    """Return whether no host answered at all (this machine offline, rather than every link dead)."""
    asked = [r for r in results if r.state != "skipped"]
    return len(asked) >= 3 and all(r.status is None for r in asked)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


async def _run(urls: list[str], settings: LinksConfig, on_result: Callable[[LinkResult], None]) -> tuple[
        list[LinkResult], int]:
    needs_body = {urldefrag(u)[0] for u in urls if urldefrag(u)[1]}
    limits = httpx.Limits(max_connections=max(1, settings.concurrency),
                          max_keepalive_connections=max(1, settings.concurrency), keepalive_expiry=30.0)
    headers = {"User-Agent": settings.user_agent, "Accept-Language": "en-US,en;q=0.9",
               "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    async with httpx.AsyncClient(limits=limits, headers=headers, timeout=httpx.Timeout(settings.timeout),
                                 follow_redirects=False, trust_env=False) as client:
        checker = Checker(client, settings, needs_body)

        async def one(url: str) -> LinkResult:
            result = await checker.check(url)
            on_result(result)
            return result

        results = await asyncio.gather(*(one(u) for u in urls))
    return list(results), checker.requests


def _run_to_completion(coroutine):
    """Return the coroutine's result, also when the caller's thread already runs an event loop
    (a notebook, or a sync Playwright session in the same process): then it runs in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def check_links(urls: Sequence[str], config: Config | LinksConfig, *, use_cache: bool = True,
                progress: bool = True) -> LinkReport:
    """Return the verdict on every unique URL of `urls` (in order), from the cache when fresh enough."""
    from graphsite.citations.summary import Progress

    settings = getattr(config, "links", config)
    unique = list(dict.fromkeys(u.strip() for u in urls if u.strip()))
    start = time.perf_counter()
    cache = LinkCache.load(settings.cache_dir, settings.max_age) if use_cache else None
    cached = {u: hit for u in unique if cache and (hit := cache.fresh(u)) is not None}
    pending = [u for u in unique if u not in cached]
    meter = Progress(len(unique), enabled=progress)
    meter.advance(len(cached))
    try:
        checked, requests = _run_to_completion(_run(pending, settings, lambda _r: meter.advance())) \
            if pending else ([], 0)
    finally:
        meter.finish()
    by_url = {**cached, **{r.url: r for r in checked}}
    warnings = []
    if cache is not None:
        cache.update([r for r in checked if not r.detail.startswith("DNS:")] if _offline(checked) else checked)
        cache.save()
        warnings = list(cache.warnings)
    if _offline(checked):
        warnings.append(f"none of the {len(checked)} links got an HTTP answer: this machine may be offline, so "
                        "the dead verdicts may say nothing about the links (DNS failures were not cached)")
    return LinkReport(tuple(by_url[u] for u in unique), time.perf_counter() - start, requests, tuple(warnings))
