"""Live link checks: every link gets one verdict: from its text alone (malformed, a scheme not checked, a private
address), from the cache (a success still fresh), or from the network (graphsite/citations/checker.py).

The run has an optional total deadline (links.deadline) and stops cleanly on SIGINT, SIGTERM or SIGHUP: the verdicts
reached so far are kept, cached and returned as a partial report, and the rest are `unchecked`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import signal
import threading
import time
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urldefrag, urlsplit

from graphsite.citations.results import Link, LinkReport, LinkResult, Place
from graphsite.signals import SIGNALS
from graphsite.urls import malformed, mask, non_public, normalize, origin, secret

if TYPE_CHECKING:
    from graphsite.citations.cache import LinkCache
    from graphsite.citations.checker import Checker
    from graphsite.citations.console import Progress
    from graphsite.config import Config, LinksConfig

T = TypeVar("T")
# Schemes a page may link that are not fetched: listed as skipped with the reason, never requested.
_NOT_CHECKED = {"mailto": "an e-mail address", "tel": "a telephone number", "sms": "a text message",
                "ftp": "an FTP server", "sftp": "an SFTP server", "ssh": "an SSH server", "irc": "an IRC channel",
                "news": "a news group", "xmpp": "a chat address", "data": "inline data",
                "javascript": "a script", "magnet": "a torrent"}
_SIGNALS = {number: signal.Signals(number).name for number in SIGNALS}  # the signals that stop any graphsite run
WAITING_AFTER = 3.0  # seconds without a verdict before the progress line names the URLs in flight


def request_url(url: str) -> str:
    """Return the URL as it is requested: normalised (IDN host in ASCII, scheme and host lower case)."""
    url = url.strip()
    if url.startswith("//"):
        url = "https:" + url  # protocol-relative: the published page is served over https
    return normalize(url)


def classify(url: str, settings: LinksConfig) -> LinkResult | None:
    """Return the verdict on `url` that needs no request (malformed, skipped, private, local), else None."""
    now = time.time()
    target = request_url(url)
    try:
        scheme = urlsplit(target).scheme.lower()
    except ValueError as exc:
        return LinkResult(url, "dead", f"malformed URL: it cannot be parsed ({exc})", checked_at=now)
    broken = malformed(target)
    if broken and scheme in ("http", "https"):
        return LinkResult(url, "dead", f"malformed URL: it {broken}", checked_at=now)
    if scheme == "file":
        return LinkResult(url, "private", "a file: URL names a file on the author's machine; no reader can open "
                                          "it", checked_at=now)
    if not scheme:
        return LinkResult(url, "local", "a relative link; the published page is one index.html, so it will be "
                                        "broken there", checked_at=now)
    carries = secret(target)
    if carries:  # asking would send the credential, and the answer would say nothing of the reader's page
        return LinkResult(url, "skipped", f"not requested: it {carries} (citation-secret-in-url); take the "
                                                "credential out of the report", checked_at=now)
    if scheme not in ("http", "https"):
        what = _NOT_CHECKED.get(scheme, f"a {scheme}: link")
        return LinkResult(url, "skipped", f"{scheme}: links are not checked ({what})", checked_at=now)
    for prefix in settings.skip:
        if url.startswith(prefix) or target.startswith(prefix):
            return LinkResult(url, "skipped", f"skipped by links.skip ({prefix})", checked_at=now)
    private = None if settings.allow_private else non_public(target)
    if private:
        return LinkResult(url, "private", f"not requested: it {private} (links.allow_private to check it)",
                          checked_at=now)
    return None


def check_links(links: Sequence[str | Link], config: Config | LinksConfig, *, use_cache: bool = True,
                offline: bool = False, progress: bool = True) -> LinkReport:
    """Return the verdict on every unique link of `links`, in order: a fresh success from the cache (any
    cached verdict when `offline`), else a request; the cache is then refreshed with this run's verdicts."""
    from graphsite.citations.cache import LinkCache
    from graphsite.config import LinksConfig

    settings = config if isinstance(config, LinksConfig) else config.links
    start = time.perf_counter()
    written, lines, places = _unique(links)
    cache = LinkCache.load(settings.cache_path(), settings.max_age, read=use_cache or offline)
    decided = _without_request(written, settings, cache if use_cache or offline else None, offline=offline)
    pending = [key for key in written if key not in decided]
    checked, requests, stopped_by = _over_the_network(pending, settings, progress)
    warnings = _save(cache, checked)
    every = {**decided, **checked}
    # The one place a result's URL is masked: every verdict above is keyed by the URL requested, so two links
    # that differ only in a secret stay two rows, however alike they read once masked.
    by_key = {key: dataclasses.replace(every[key], url=mask(url), lines=lines[key], places=places[key])
              for key, url in written.items()}
    return LinkReport(tuple(by_key.values()), time.perf_counter() - start, requests, tuple(warnings), stopped_by,
                      by_key)


def _without_request(written: dict[str, str], settings: LinksConfig, cache: LinkCache | None, *,
                     offline: bool) -> dict[str, LinkResult]:
    """Return the verdicts reached without a request: from the link's text (classify), then from the cache (a
    fresh success; anything it holds when `offline`); offline, the rest are `unchecked`."""
    decided: dict[str, LinkResult] = {}
    for key, url in written.items():
        verdict = classify(url, settings)
        if verdict is not None:
            decided[key] = verdict
    if cache is not None:
        for key in written:
            if key not in decided and (hit := cache.fresh(key, offline=offline)) is not None:
                decided[key] = hit
    if offline:
        decided.update({key: LinkResult(key, "unchecked", "not in the link cache (--offline)")
                        for key in written if key not in decided})
    return decided


def _over_the_network(pending: list[str], settings: LinksConfig, progress: bool
                      ) -> tuple[dict[str, LinkResult], int, str]:
    """Return the verdicts on `pending` from the network, the requests sent, and the signal that stopped the
    run ("" if none), with the progress line on stderr."""
    from graphsite.citations.console import Progress

    meter = Progress(len(pending), enabled=progress)
    try:
        return _run_to_completion(_run(pending, settings, meter)) if pending else ({}, 0, "")
    finally:
        meter.finish()


def _save(cache: LinkCache, checked: dict[str, LinkResult]) -> list[str]:
    """Merge this run's network verdicts into the cache; return the warnings of the cache and of the run.
    When no host answered at all, the machine is likely offline: its failures are not cached."""
    network = [r for r in checked.values() if r.state != "unchecked"]
    offline_now = _offline(network)
    cache.save([r for r in network if not (offline_now and r.status is None)])
    warnings = list(cache.warnings)
    if offline_now:
        warnings.append(f"none of the {len(network)} links got an HTTP answer: this machine may be offline, so "
                        "the dead verdicts may say nothing about the links (they were not cached)")
    return warnings


def _unique(links: Sequence[str | Link]
            ) -> tuple[dict[str, str], dict[str, tuple[int, ...]], dict[str, tuple[Place, ...]]]:
    """Return key (the URL requested) -> the URL as first written, key -> every line that links to it, and
    key -> every place it is written, in line order."""
    written: dict[str, str] = {}
    lines: dict[str, list[int]] = {}
    places: dict[str, set[Place]] = {}
    for item in links:
        link = item if isinstance(item, Link) else Link(item)
        url = link.url.strip()
        if not url:
            continue
        key = _key(url)
        written.setdefault(key, url)
        lines.setdefault(key, []).extend(n for n in link.lines if n not in lines[key])
        places.setdefault(key, set()).update(link.places)
    return written, {key: tuple(sorted(found)) for key, found in lines.items()}, \
        {key: tuple(sorted(found, key=lambda p: (p.line, p.column))) for key, found in places.items()}


def _key(url: str) -> str:
    """Return what identifies a link in a run: the URL requested (http(s) and relative), else as written."""
    return request_url(url) if _scheme(url) in ("http", "https", "") else url


def results_by_url(links: Sequence[str | Link], report: LinkReport) -> dict[str, LinkResult]:
    """Return each URL of `links` (as given to check_links) with its result in `report` (check_links' answer),
    matched by the URL requested (the results' own URLs are masked), never by position: a link the answer holds
    no verdict for is `unchecked` (unknown), never given another link's verdict."""
    found: dict[str, LinkResult] = {}
    for item in links:
        url = item.url if isinstance(item, Link) else item
        if url.strip():
            found[url] = report.by_key.get(_key(url.strip())) or LinkResult(
                mask(url.strip()), "unchecked", "no verdict for this link in the link check's answer")
    return found


def _scheme(url: str) -> str:
    try:
        return urlsplit(url).scheme.lower()
    except ValueError:
        return ""


async def _run(urls: list[str], settings: LinksConfig, meter: Progress) -> tuple[dict[str, LinkResult], int, str]:
    """Return the verdicts reached, the requests sent, and the signal that stopped the run ("" if none)."""
    from graphsite.citations.checker import Checker, new_client

    fragments: dict[str, set[str]] = {}
    for url in urls:
        target, fragment = urldefrag(url)
        if fragment:
            fragments.setdefault(target, set()).add(fragment)
    loop = asyncio.get_running_loop()
    stop = _Stop(loop)
    client = new_client(settings)
    try:
        checker = Checker(client, settings, fragments)
        tasks = {url: asyncio.ensure_future(checker.check(url)) for url in interleave(urls)}
        for task in tasks.values():
            task.add_done_callback(lambda t: meter.advance() if not t.cancelled() else None)
        watcher = asyncio.ensure_future(_watch(checker, meter))
        everything = asyncio.ensure_future(asyncio.wait(list(tasks.values())))
        try:
            await asyncio.wait([everything, stop.event_waiter], timeout=settings.deadline or None,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.remove()
            pending: list[asyncio.Future[Any]] = [everything, watcher, stop.event_waiter, *tasks.values(),
                                                  *checker.pages.values()]
            for future in pending:
                future.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
    finally:
        client.close()
    return {url: _outcome(url, task, stop.name, settings) for url, task in tasks.items()}, checker.requests, \
        stop.name


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


def _offline(results: list[LinkResult]) -> bool:
    """Return whether no host answered at all (this machine offline, rather than every link dead)."""
    asked = [r for r in results if r.state not in ("skipped", "private", "local", "unchecked")]
    return len(asked) >= 3 and all(r.status is None for r in asked)


def _run_to_completion(coroutine: Coroutine[Any, Any, T]) -> T:
    """Return the coroutine's result, also when the caller's thread already runs an event loop
    (a notebook, or a sync Playwright session in the same process): then it runs in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()



