"""The network half of a link check: one task per link, asked one host at a time in turn, the first ones before
the links are found (the builder's parse runs once they are sent, while their answers come); the run's deadline;
SIGINT, SIGTERM and SIGHUP, which end it cleanly with the verdicts reached (the rest `unchecked`)."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import itertools
import signal
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urldefrag

from graphsite.citations.results import LinkResult
from graphsite.signals import SIGNALS
from graphsite.urls import origin

if TYPE_CHECKING:
    import ssl

    from graphsite.citations.checker import Checker
    from graphsite.citations.console import Progress
    from graphsite.citations.http import Client
    from graphsite.citations.live import FoundLinks
    from graphsite.config import LinksConfig

T = TypeVar("T")
_SIGNALS = {number: signal.Signals(number).name for number in SIGNALS}  # the signals that stop any graphsite run
WAITING_AFTER = 3.0  # seconds without a verdict before the progress line names the URLs in flight
# The most the builder's parse waits for the first requests to be written before it runs (it holds the event loop
# while it runs: in a thread beside it, the two took 15-25 ms more CPU on 200 links than one after the other).
FIRST_WAVE = 0.05


async def run(early: list[str], found: FoundLinks, settings: LinksConfig, progress: bool,
              tls_context: concurrent.futures.Future[ssl.SSLContext] | None = None
              ) -> tuple[dict[str, LinkResult], int, str]:
    """Return the verdicts reached, the requests sent, and the signal that stopped the run ("" if none);
    `tls_context` is the TLS context the run started making (tls.start), if it did."""
    from graphsite.citations.checker import Checker, new_client
    from graphsite.citations.console import Progress

    loop = asyncio.get_running_loop()
    begun = loop.time()
    stop = _Stop(loop)
    client = new_client(settings, tls_context)
    checker = Checker(client, settings, _fragments([*early, *found.early_fragments]))
    links = _Starter(checker, settings.concurrency)
    watcher: asyncio.Future[None] | None = None
    try:
        links.add(early)
        if not found.done:
            await _first_wave(checker, client)
            # the text's other URLs, judged once the first requests are out (their fragments are the checker's
            # already: found.early_fragments)
            links.add(found.requested_later())
            parsing = loop.time()
            found.find()  # the builder's parse, while the first requests wait for their answers
            checker.paused(loop.time() - parsing)  # the loop was held: the time is not the links'
        links.keep(found.pending)  # an early URL the parse did not find (in an indented code block): no verdict
        checker.want(_fragments(found.pending))
        links.add(found.pending)
        links.meter = Progress(len(found.pending), enabled=progress)
        links.meter.advance(sum(key in links.started and links.started[key].done() for key in found.pending))
        watcher = asyncio.ensure_future(_watch(checker, links.meter))
        left = settings.deadline - (loop.time() - begun) if settings.deadline else None
        if not links.finished.is_set() and not stop.name:
            waiter = asyncio.ensure_future(links.finished.wait())
            await asyncio.wait([waiter, stop.event_waiter], timeout=max(left, 0) if left is not None else None,
                               return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
        if links.error is not None:  # a link's check broke (the CA bundle unreadable): the run cannot go on
            raise links.error
    finally:
        stop.remove()
        links.waiting.clear()  # the deadline or a signal: nothing more is started
        pending: list[asyncio.Future[Any]] = [stop.event_waiter, *links.started.values(), *checker.pages.values(),
                                              *([watcher] if watcher is not None else [])]
        for future in pending:
            future.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        client.close()
        links.meter.finish()
    return {url: _outcome(url, links.started.get(url), stop.name, settings) for url in found.pending}, \
        checker.requests, stop.name


class _Starter:
    """Starts one task per link, in turn by host (`interleave`), at most `limit` of them at once (more would only
    wait for a host's turn or a slot, and delay the first requests: 2,000 tasks started together took 0.15 s
    before the first request went out); `finished` is set once every link kept has its verdict."""

    def __init__(self, checker: Checker, limit: int) -> None:
        from graphsite.citations.console import Progress

        self.checker, self.limit = checker, limit
        self.waiting: collections.deque[str] = collections.deque()
        self.started: dict[str, asyncio.Task[LinkResult]] = {}
        self.open: set[str] = set()  # the links started, kept, and not done yet
        self.alive = 0  # the tasks running (a link dropped may still fetch a page that a kept one waits for)
        self.error: BaseException | None = None  # the first a task raised instead of a verdict: the run ends
        self.finished = asyncio.Event()
        self.meter = Progress(0, enabled=False)

    def add(self, keys: list[str]) -> None:
        queued = set(self.waiting)
        self.waiting.extend(interleave([key for key in keys if key not in self.started and key not in queued]))
        self._fill()

    def keep(self, keys: list[str]) -> None:
        """Drop every link not in `keys`: not started, or cancelled, unless it is the one fetching a page that a
        link kept waits for (the other #fragment of the same page)."""
        wanted = set(keys)
        pages = {urldefrag(key)[0] for key in wanted}
        self.waiting = collections.deque(key for key in self.waiting if key in wanted)
        for key, task in self.started.items():
            if key not in wanted:
                self.open.discard(key)
                if urldefrag(key)[0] not in pages:
                    task.cancel()
        self._fill()

    def _fill(self) -> None:
        while self.alive < self.limit and self.waiting and self.error is None:
            key = self.waiting.popleft()
            task = self.started[key] = asyncio.ensure_future(self.checker.check(key))
            self.alive += 1
            self.open.add(key)
            task.add_done_callback(functools.partial(self._done, key))
        if (self.open or self.waiting) and self.error is None:
            self.finished.clear()
        else:
            self.finished.set()

    def _done(self, key: str, task: asyncio.Task[LinkResult]) -> None:
        self.alive -= 1
        if not task.cancelled() and self.error is None:
            self.error = task.exception()
        if key in self.open:
            self.open.discard(key)
            if not task.cancelled():
                self.meter.advance()
        self._fill()


async def _first_wave(checker: Checker, client: Client) -> None:
    """Return once every request begun has been written out (connected, then sent), or after FIRST_WAVE
    seconds (a request that fails to connect is never written)."""
    await asyncio.sleep(0)  # every task started takes its first step: the requests it may begin, begin
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(client.written(checker.requests), FIRST_WAVE)


def _fragments(urls: list[str]) -> dict[str, set[str]]:
    """Return each page of `urls` with the #fragments linked on it."""
    fragments: dict[str, set[str]] = {}
    for url in urls:
        target, fragment = urldefrag(url)
        if fragment:
            fragments.setdefault(target, set()).add(fragment)
    return fragments


def interleave(urls: list[str]) -> list[str]:
    """Return `urls` in the order they are requested: one per host in turn (the first link of every host, then
    the second of every host, …), each host's links in their own order.

    A report lists a host's links together; taken in that order, the per-host limit keeps several requests to
    the first hosts in flight at once, each on a new connection, while later hosts wait. Taken in turn, the
    same number of requests is in flight, spread over more hosts, and a host's next link goes over the
    connection its previous one kept alive: on 2,000 links over 200 hosts, 200 connections instead of 800."""
    by_host: dict[str, list[str]] = {}
    for url in urls:
        by_host.setdefault(_host(url), []).append(url)
    if len(by_host) <= 1:
        return list(urls)
    return [url for turn in itertools.zip_longest(*by_host.values()) for url in turn if url is not None]


def _host(url: str) -> str:
    """Return the origin whose turn `url` takes; a URL without one (a port out of range: not asked, its verdict
    comes from its text) is a host of its own."""
    try:
        return origin(url)
    except ValueError:
        return url


def _outcome(url: str, task: asyncio.Future[LinkResult] | None, stopped_by: str, settings: LinksConfig
             ) -> LinkResult:
    if task is not None and not task.cancelled():
        error = task.exception()
        if error is not None:
            raise error
        return task.result()
    if stopped_by:
        return LinkResult(url, "unchecked", f"not checked: the run was stopped by {stopped_by}")
    return LinkResult(url, "timeout", f"no verdict within the run's deadline of {settings.deadline:g} s "
                                      "(links.deadline)", checked_at=time.time())


class _Stop:
    """SIGINT, SIGTERM and SIGHUP end the run (in the main thread): `name` says which, `event_waiter` completes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop, self.name, self.installed = loop, "", []
        self.event = asyncio.Event()
        self.event_waiter = asyncio.ensure_future(self.event.wait())
        if threading.current_thread() is not threading.main_thread():
            return
        for number, name in _SIGNALS.items():
            try:
                loop.add_signal_handler(number, self._stop, name)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            self.installed.append(number)

    def _stop(self, name: str) -> None:
        if not self.name:
            self.name = name
        self.event.set()

    def remove(self) -> None:
        for number in self.installed:
            self.loop.remove_signal_handler(number)
        self.installed = []


async def _watch(checker: Checker, meter: Progress) -> None:
    """Name the URLs in flight on the progress line once no verdict came for a while."""
    while True:
        await asyncio.sleep(0.5)
        if meter.idle() >= WAITING_AFTER:
            meter.waiting(checker.waiting())


def run_to_completion(coroutine: Coroutine[Any, Any, T]) -> T:
    """Return the coroutine's result, also when the caller's thread already runs an event loop
    (a notebook, or a sync Playwright session in the same process): then it runs in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
