"""The network half of a link check: one task per link, asked one host at a time in turn, the first ones while
the links are still being found; the run's deadline; SIGINT, SIGTERM and SIGHUP, which end it cleanly with the
verdicts reached (the rest `unchecked`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
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
    from graphsite.citations.checker import Checker
    from graphsite.citations.console import Progress
    from graphsite.citations.live import FoundLinks
    from graphsite.config import LinksConfig

T = TypeVar("T")
_SIGNALS = {number: signal.Signals(number).name for number in SIGNALS}  # the signals that stop any graphsite run
WAITING_AFTER = 3.0  # seconds without a verdict before the progress line names the URLs in flight


async def run(early: list[str], found: FoundLinks, settings: LinksConfig, progress: bool
               ) -> tuple[dict[str, LinkResult], int, str]:
    """Return the verdicts reached, the requests sent, and the signal that stopped the run ("" if none)."""
    from graphsite.citations.checker import Checker, new_client
    from graphsite.citations.console import Progress

    loop = asyncio.get_running_loop()
    begun = loop.time()
    stop = _Stop(loop)
    client = new_client(settings)
    started: dict[str, asyncio.Task[LinkResult]] = {}
    meter = Progress(0, enabled=False)
    watcher: asyncio.Future[None] | None = None
    everything: asyncio.Future[Any] | None = None
    try:
        checker = Checker(client, settings, _fragments(early))

        def start(keys: list[str]) -> None:
            for url in interleave([key for key in keys if key not in started]):
                started[url] = asyncio.ensure_future(checker.check(url))

        start(early)
        if not found.done:  # the parse runs in a thread while the early requests are in flight
            await loop.run_in_executor(None, found.find)
        wanted = set(found.pending)
        for key in [key for key in started if key not in wanted]:
            started[key].cancel()  # not a link after all (a URL in an indented code block, say): no verdict
        checker.want(_fragments(found.pending))
        start(found.pending)
        tasks = {url: started[url] for url in found.pending}
        meter = Progress(len(tasks), enabled=progress)
        meter.advance(sum(task.done() for task in tasks.values()))
        for task in tasks.values():
            if not task.done():
                task.add_done_callback(lambda t: meter.advance() if not t.cancelled() else None)
        watcher = asyncio.ensure_future(_watch(checker, meter))
        everything = asyncio.ensure_future(asyncio.wait(list(tasks.values()))) if tasks else None
        left = settings.deadline - (loop.time() - begun) if settings.deadline else None
        try:
            if everything is not None and not stop.name:
                await asyncio.wait([everything, stop.event_waiter], timeout=max(left, 0) if left is not None else None,
                                   return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.remove()
            pending: list[asyncio.Future[Any]] = [stop.event_waiter, *started.values(), *checker.pages.values(),
                                                  *(f for f in (everything, watcher) if f is not None)]
            for future in pending:
                future.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
    finally:
        stop.remove()
        client.close()
        meter.finish()
        for task in started.values():
            task.cancel()
    return {url: _outcome(url, task, stop.name, settings) for url, task in tasks.items()}, checker.requests, \
        stop.name


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
        by_host.setdefault(origin(url), []).append(url)
    if len(by_host) <= 1:
        return list(urls)
    return [url for turn in itertools.zip_longest(*by_host.values()) for url in turn if url is not None]


def _outcome(url: str, task: asyncio.Future[LinkResult], stopped_by: str, settings: LinksConfig) -> LinkResult:
    if not task.cancelled():
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
