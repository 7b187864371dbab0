"""The HTTP side of a link check: one verdict per http(s) URL, within deadlines, politely. With
graphsite/citations/http.py (the client), the only part of graphsite/citations that talks to the network.

A global and a per-host limit (the host actually contacted, hop by hop) and keep-alive; GET
only, never HEAD (a HEAD 200 says nothing of the page a reader gets: a server may answer HEAD 200 and GET 404, and
a challenge or a soft 404 shows only in the body); redirects followed by hand (so that each hop is reported and
loops detected); `Retry-After` honoured on 429/503 up to a cap; bounded retries with exponential
backoff for timeouts, connection errors and 5xx. Every request has one total deadline (connect, headers and
body: a server that trickles is cut off) and every link one deadline for all its attempts.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

from graphsite.citations.challenges import challenge_by
from graphsite.citations.http import Client, HTTPError, Response, ShortBody
from graphsite.citations.pages import AnchorScanner, soft_404, wanted_names
from graphsite.citations.results import RETRY_STATUSES, LinkResult, retry_after
from graphsite.citations.verdict import Answer, Failure, Page, Scan, verdict
from graphsite.urls import mask, non_public, origin

if TYPE_CHECKING:
    import concurrent.futures
    import ssl

    from graphsite.config import LinksConfig

MAX_REDIRECTS = 20  # what Chromium and Firefox follow
PEEK_BYTES = 32 * 1024  # of every page, to tell a challenge or a soft 404 from the real page
DRAIN_BYTES = 64 * 1024  # a small body is read whole: the connection stays reusable and a short body shows
BACKOFF = 0.5  # seconds before the first retry; doubles each time


class _Budget:
    """Retries left for one URL, shared by its requests (redirect hops included), and the link's deadline (loop
    time), which starts with its first request: waiting for a turn behind other links of a slow host does not use
    it up."""

    def __init__(self, retries: int, seconds: float) -> None:
        self.left, self.used, self.seconds = retries, 0, seconds
        self.deadline: float | None = None

    def start(self) -> None:
        if self.deadline is None:
            self.deadline = asyncio.get_running_loop().time() + self.seconds

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left, self.used = self.left - 1, self.used + 1
        return True

    def remaining(self) -> float:
        if self.deadline is None:
            return self.seconds
        return self.deadline - asyncio.get_running_loop().time()


class _Received:
    """Bytes of a body received so far (read after a deadline cut the request off)."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.bytes = 0


def new_client(settings: LinksConfig, tls_context: concurrent.futures.Future[ssl.SSLContext] | None = None
               ) -> Client:
    """Return the one client of a run: keep-alive per host, no redirects followed, no proxies; its TLS context is
    `tls_context` when the run started making it (tls.start), else made when first needed."""
    headers = {"User-Agent": settings.user_agent, "Accept-Language": "en-US,en;q=0.9",
               "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    return Client(headers, keep_per_host=settings.per_host, ca_bundle=settings.ca_bundle, tls_context=tls_context)


class Checker:
    """Checks URLs with one shared client; a fragment-less URL is fetched once however often it is linked.
    `fragments` maps a page to the fragments linked on it (the page is read until every one was seen)."""

    def __init__(self, client: Client, settings: LinksConfig, fragments: dict[str, set[str]]) -> None:
        self.client, self.settings = client, settings
        self.groups = {page: [g for g in map(wanted_names, names) if g] for page, names in fragments.items()}
        self.slots = asyncio.Semaphore(settings.concurrency)
        self.hosts: dict[str, asyncio.Semaphore] = {}
        self.pages: dict[str, asyncio.Future[Page]] = {}  # page URL -> its answer, shared by its fragments
        self.in_flight: dict[int, tuple[str, float]] = {}  # id -> (URL, loop time it was sent)
        self.budgets: set[_Budget] = set()  # of the links being checked
        self.timeouts: dict[int, asyncio.Timeout] = {}  # id -> the timeout of that request in flight
        self.requests = 0

    async def check(self, url: str) -> LinkResult:
        """Return the verdict on the http(s) `url` (well-formed, already normalised)."""
        now = time.time()
        target, fragment = urldefrag(url) if "#" in url else (url, "")
        shared = self.pages.get(target)
        if shared is not None:
            page = await asyncio.shield(shared)  # another link fetches this page: wait for its answer
        else:  # the first link to a page fetches it in its own task (no task more per link)
            shared = self.pages[target] = asyncio.get_running_loop().create_future()
            try:
                page = await self._page(target)
            except asyncio.CancelledError:
                shared.cancel()
                raise
            except BaseException as exc:
                shared.set_exception(exc)
                shared.exception()  # raised here already: no "exception never retrieved" when no link waits
                raise
            shared.set_result(page)
        return verdict(url, fragment, page, now, self.settings)

    def want(self, fragments: dict[str, set[str]]) -> None:
        """Add #fragments linked on pages: a page already asked for without one of them is asked for again, with
        all of them, by the next link that wants it (the links waiting for the first answer keep it)."""
        for page, names in fragments.items():
            known = self.groups.get(page, [])
            new = [group for group in map(wanted_names, names) if group and group not in known]
            if new:
                self.groups[page] = [*known, *new]
                self.pages.pop(page, None)

    def paused(self, seconds: float) -> None:
        """Give the links being checked back `seconds` the event loop spent on other work (the builder's parse
        of the report): each link's deadline and its request's timeout move on by that much, so an answer that
        came meanwhile is read, not taken for a timeout."""
        for budget in self.budgets:
            if budget.deadline is not None:
                budget.deadline += seconds
        for timeout in self.timeouts.values():
            when = timeout.when()
            if when is not None:
                timeout.reschedule(when + seconds)

    def waiting(self) -> list[tuple[str, float]]:
        """Return the URLs of the requests in flight and how long each has run, longest first."""
        now = asyncio.get_running_loop().time()
        return sorted(((mask(url), now - since) for url, since in self.in_flight.values()), key=lambda p: -p[1])

    async def _page(self, target: str) -> Page:
        budget = _Budget(self.settings.retries, self.settings.link_timeout)
        self.budgets.add(budget)
        try:
            return await self._follow(target, budget)
        except Failure as failure:
            return Page(target, failure=failure, attempts=budget.used + 1)
        except ValueError as exc:  # e.g. a redirect to a URL that cannot be parsed (a port out of range)
            return Page(target, failure=Failure("dead", f"invalid URL: {_one_line(exc)}"))
        finally:
            self.budgets.discard(budget)

    async def _follow(self, target: str, budget: _Budget) -> Page:
        chain: list[str] = []
        current = target
        groups = self.groups.get(target, [])
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self._answer(current, budget, groups)
            if answer.location is None:
                return Page(current, answer, tuple(chain), attempts=budget.used + 1)
            following = urldefrag(urljoin(current, answer.location))[0]
            seen = [target, *chain].count(following)
            # A site may redirect to the same URL once to set a cookie (the client keeps it): not yet a loop.
            if seen > 1 or (seen == 1 and not answer.sets_cookie):
                raise Failure("dead", f"redirect loop: {' → '.join(map(mask, [target, *chain, following]))}")
            if urlsplit(following).scheme.lower() not in ("http", "https"):
                raise Failure("dead", f"redirected to {mask(following)}, which is not an http(s) URL")
            private = None if self.settings.allow_private else non_public(following)
            if private:
                raise Failure("private", f"redirected to {mask(following)}, not requested: it {private}")
            chain.append(following)
            current = following
        raise Failure("dead", f"more than {MAX_REDIRECTS} redirects (last: {mask(current)})")

    async def _answer(self, url: str, budget: _Budget, groups: list[frozenset[str]]) -> Answer:
        """Return the answer to a GET of `url`, retrying what is worth retrying."""
        while True:
            try:
                answer = await self._send(url, groups, budget)
            except Failure as failure:
                if failure.state == "dns" or failure.permanent or not await self._retry(budget, None):
                    raise Failure("dead" if failure.state == "dns" else failure.state,
                                  failure.detail + _attempts_note(budget)) from None
                continue
            if answer.status in RETRY_STATUSES and not answer.challenge:
                wait = retry_after(answer.retry_after) if answer.status in (429, 503) else None
                if wait is not None and wait > self.settings.max_retry_after:
                    return answer  # the site asks for longer than we wait: report it as it is
                if await self._retry(budget, wait):
                    continue
            return answer

    async def _retry(self, budget: _Budget, wait: float | None) -> bool:
        """Wait before the next attempt and return True, or False when no retry is left or the wait would
        pass the link's deadline."""
        if budget.left <= 0:
            return False
        pause = wait if wait is not None else BACKOFF * 2 ** budget.used
        if pause >= budget.remaining():
            return False
        budget.take()
        await asyncio.sleep(pause)
        return True

    def _host(self, url: str) -> asyncio.Semaphore:
        key = origin(url)
        if key not in self.hosts:
            self.hosts[key] = asyncio.Semaphore(self.settings.per_host)
        return self.hosts[key]

    async def _send(self, url: str, groups: list[frozenset[str]], budget: _Budget) -> Answer:
        """Return one answer, within min(links.timeout, what is left of the link's deadline)."""
        async with self._host(url), self.slots:
            budget.start()
            seconds = min(self.settings.timeout, budget.remaining())
            if seconds <= 0:
                raise Failure("timeout", f"no answer within the link's {self.settings.link_timeout:g} s")
            loop = asyncio.get_running_loop()
            self.requests += 1
            received = _Received()
            key = id(received)
            self.in_flight[key] = (url, loop.time())
            try:
                async with asyncio.timeout(seconds) as timeout:
                    self.timeouts[key] = timeout
                    return await self._exchange(url, groups, received)
            except TimeoutError:
                whose = "" if seconds == self.settings.timeout else ", what was left of the link's deadline"
                raise Failure("timeout", f"no complete answer within {seconds:.3g} s{whose} "
                                          f"({_progress_note(received)})") from None
            except HTTPError as exc:
                if exc.dns:
                    raise Failure("dns", f"DNS: {urlsplit(url).hostname} not found") from None
                if exc.oversized:  # the server answered; what it says of the page could not be read
                    raise Failure("unverified", f"not read: {_one_line(exc)}", permanent=True) from None
                raise Failure("dead", f"connection failed: {_one_line(exc)}", permanent=exc.permanent) from None
            finally:
                del self.in_flight[key]
                self.timeouts.pop(key, None)

    async def _exchange(self, url: str, groups: list[frozenset[str]], received: _Received) -> Answer:
        response = await self.client.send("GET", url)
        received.status = response.status
        try:
            headers = response.headers
            if 300 <= response.status < 400 and "location" in headers:
                if response.length is not None and response.length <= DRAIN_BYTES:
                    await _start(response, received)  # a redirect's few bytes: the connection is kept
                return Answer(response.status, _location(headers["location"]), headers.get("retry-after"),
                              bool(response.cookies))
            scan, short = None, ""
            if groups and 200 <= response.status < 300 and _is_html(response) and response.decodable:
                scan, start = await self._scan(response, groups, received)
            else:
                start, short = await _start(response, received)
            challenge = challenge_by(response.status, headers, start)
            soft = soft_404(start) if 200 <= response.status < 300 and not challenge else ""
            return Answer(response.status, None, headers.get("retry-after"), bool(response.cookies),
                          challenge, scan, short, soft)
        finally:
            response.close()

    async def _scan(self, response: Response, groups: list[frozenset[str]], received: _Received
                    ) -> tuple[Scan, bytes]:
        """Stream the page through the anchor scanner until every fragment was seen, the cap, or the end; return
        what was found and the page's first bytes (PEEK_BYTES, for the challenge and soft-404 signatures)."""
        scanner = AnchorScanner(groups, response.charset)
        start = bytearray()
        cap = int(self.settings.max_page_mib * 1024 * 1024)
        outcome = "complete"
        try:
            async for chunk in response.chunks():
                if len(start) < PEEK_BYTES:
                    start += chunk[:PEEK_BYTES - len(start)]
                scanner.feed(chunk)
                received.bytes = response.received
                if scanner.done:
                    outcome = "found"
                    break
                if scanner.received >= cap:
                    outcome = "cap"
                    break
        except ShortBody:
            outcome = "short"  # the connection closed before the body was whole (shorter than Content-Length)
        except zlib.error:
            outcome = "short"  # a compressed body cut off or broken: what came was scanned
        if outcome != "found":
            scanner.close()
        return Scan(frozenset(scanner.found), outcome, response.received, response.length), bytes(start)


def _location(value: str) -> str:
    """Return a Location header as a browser reads it: its bytes (the client decodes headers as latin-1, byte
    for byte) with every byte outside printable ASCII percent-encoded, so raw UTF-8 stays UTF-8."""
    raw = value.encode("latin-1", errors="replace")
    return "".join(chr(b) if 0x21 <= b < 0x7F else f"%{b:02X}" for b in raw)


def _attempts_note(budget: _Budget) -> str:
    return f" ({budget.used + 1} attempts)" if budget.used else ""


def _progress_note(received: _Received) -> str:
    if received.status is None:
        return "no status line or headers received"
    return f"HTTP {received.status}, {received.bytes:,} bytes of the body received"


def _is_html(response: Response) -> bool:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml", "")


async def _start(response: Response, received: _Received) -> tuple[bytes, str]:
    """Return the body's first PEEK_BYTES, and a warning when it ends before its Content-Length. A body that may
    be small (a Content-Length up to DRAIN_BYTES, or none: chunked) is read up to DRAIN_BYTES, so that when it
    ends there the connection is kept for the host's next link."""
    limit = DRAIN_BYTES if response.length is None or response.length <= DRAIN_BYTES else PEEK_BYTES
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.chunks():
            chunks.append(chunk)
            size += len(chunk)
            received.bytes = response.received
            if size >= limit:
                break
    except ShortBody as short:
        return b"".join(chunks)[:PEEK_BYTES], (f"the body ended after {short.received:,} of "
                                               f"{response.length or 0:,} bytes (Content-Length)")
    except zlib.error:
        return b"".join(chunks)[:PEEK_BYTES], "the compressed body is broken"
    return b"".join(chunks)[:PEEK_BYTES], ""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]
