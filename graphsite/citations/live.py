"""Live link checks: every link gets one verdict: from its text alone (malformed, a scheme not checked, a private
address), from the cache (a success still fresh), or from the network (graphsite/citations/network.py runs the
requests, graphsite/citations/checker.py decides each).

The run has an optional total deadline (links.deadline) and stops cleanly on SIGINT, SIGTERM or SIGHUP: the verdicts
reached so far are kept, cached and returned as a partial report, and the rest are `unchecked`.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from graphsite.citations.results import Link, LinkReport, LinkResult, Place
from graphsite.urls import malformed, mask, non_public, normalize, secret

if TYPE_CHECKING:
    import concurrent.futures
    import ssl

    from graphsite.citations.cache import LinkCache
    from graphsite.config import Config, LinksConfig

# The early URLs judged before the first requests, in tasks' slots (links.concurrency): judging one (its text, the
# cache) takes 25-40 us, 50-80 ms for a report of 2,000 links, which went before the first request. The first
# requests need only the first slots' worth; the rest are judged once those are written, while their answers come.
EARLY_FIRST = 2
# Schemes a page may link that are not fetched: listed as skipped with the reason, never requested.
_NOT_CHECKED = {"mailto": "an e-mail address", "tel": "a telephone number", "sms": "a text message",
                "ftp": "an FTP server", "sftp": "an SFTP server", "ssh": "an SSH server", "irc": "an IRC channel",
                "news": "a news group", "xmpp": "a chat address", "data": "inline data",
                "javascript": "a script", "magnet": "a torrent"}


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


def check_links(links: Sequence[str | Link] | Callable[[], Sequence[str | Link]], config: Config | LinksConfig, *,
                early: Sequence[str] = (), use_cache: bool = True, offline: bool = False, progress: bool = True
                ) -> LinkReport:
    """Return the verdict on every unique link of `links`, in order: a fresh success from the cache (any
    cached verdict when `offline`), else a request; the cache is then refreshed with this run's verdicts.

    `links` may be the function that finds them (the builder's parse of a report): it then runs once the
    `early` URLs (those the report's text shows, found without parsing it) are requested, so the first answers
    are on their way while it runs. Only the links it returns get a verdict; an early URL it does not return is
    dropped (not asked, or its request cancelled, or its answer ignored)."""
    from graphsite.citations.cache import LinkCache
    from graphsite.config import LinksConfig

    settings = config if isinstance(config, LinksConfig) else config.links
    start = time.perf_counter()
    cache = LinkCache.load(settings.cache_path(), settings.max_age, read=use_cache or offline)
    found = FoundLinks(links, settings, cache if use_cache or offline else None, offline=offline)
    early = found.requested(early, first=EARLY_FIRST * settings.concurrency) if callable(links) and not offline \
        else []
    if not early:  # nothing to ask while the links are found: found first
        found.find()
        early = found.pending
    tls_context = None
    if any(key.startswith("https:") for key in early):  # made in a thread while the network half is imported
        from graphsite.citations import tls

        tls_context = tls.start(settings.ca_bundle)
    checked, requests, stopped_by = _over_the_network(early, found, settings, progress, tls_context)
    warnings = _save(cache, checked)
    every = {**found.decided, **checked}
    # The one place a result's URL is masked: every verdict above is keyed by the URL requested, so two links
    # that differ only in a secret stay two rows, however alike they read once masked.
    by_key = {key: dataclasses.replace(every[key], url=mask(url), lines=found.lines[key], places=found.places[key])
              for key, url in found.written.items()}
    return LinkReport(tuple(by_key.values()), time.perf_counter() - start, requests, tuple(warnings), stopped_by,
                      by_key)


class FoundLinks:
    """The links of a run once found (`find`), each by its key: as first written, its lines and places, the
    verdicts reached without a request, and the keys left to request (`pending`, in order)."""

    def __init__(self, links: Sequence[str | Link] | Callable[[], Sequence[str | Link]], settings: LinksConfig,
                 cache: LinkCache | None, *, offline: bool) -> None:
        self.links, self.settings, self.cache, self.offline = links, settings, cache, offline
        self.written: dict[str, str] = {}
        self.lines: dict[str, tuple[int, ...]] = {}
        self.places: dict[str, tuple[Place, ...]] = {}
        self.decided: dict[str, LinkResult] = {}
        self.pending: list[str] = []
        self.done = False
        self._early: dict[str, tuple[str, LinkResult | None]] = {}  # key -> (URL, its verdict without a request)
        self._later: list[str] = []  # early URLs not judged yet (requested_later)
        # the keys of every early URL with a #fragment, judged or not: the pages' fragments are known from the first
        # request, so a page whose fragments fall either side of the first slots is fetched once
        self.early_fragments: list[str] = []

    def find(self) -> list[str]:
        """Find the links (calling the finder when `links` is one); return the keys left to request."""
        links = self.links() if callable(self.links) else self.links
        self.written, self.lines, self.places = _unique(links)
        # An early URL written the same way was judged already (its text, the cache): not judged twice.
        known = {key: self._early[key][1] for key, url in self.written.items()
                 if key in self._early and self._early[key][0] == url}
        fresh = {key: url for key, url in self.written.items() if key not in known}
        self.decided = {**{key: r for key, r in known.items() if r is not None},
                        **_without_request(fresh, self.settings, self.cache, offline=self.offline)}
        self.pending = [key for key in self.written if key not in self.decided]
        self.done = True
        return self.pending

    def requested(self, early: Sequence[str], first: int) -> list[str]:
        """Return the keys of the `early` URLs that a request would decide (no verdict from their text or the
        cache): what may be asked before the links are found. Only the first `first` URLs are judged now
        (`first` more at a time while none of those judged needs a request), the rest by `requested_later`: the
        first in the order they are asked, one host at a time in turn (network.interleave), so that the first
        requests are spread over as many hosts as before."""
        if len(early) > first:
            _import_network_half(checker=False)  # a rerun whose every link is cached never needs the checker
            from graphsite.citations.network import interleave

            early = interleave(list(early))
        step = first  # at least 1: links.concurrency is
        judged = min(step, len(early))
        wanted = self._judge(early[:judged])
        while not wanted and judged < len(early):  # none of them is asked: the parse would go first
            wanted = self._judge(early[judged:judged + step])
            judged += step
        self._later = list(early[judged:])
        # a key without judging (a parse of the URL, no verdict): a later URL that is judged not to be asked
        # (links.skip, say) only has its page read further, for its fragment
        self.early_fragments = [_key(url.strip()) for url in self._later if "#" in url]
        return wanted

    def requested_later(self) -> list[str]:
        """Return the keys of the early URLs left to judge by `requested` that a request would decide (none once
        the links are found: the parse has judged them)."""
        later, self._later = self._later, []
        return [] if self.done else self._judge(later)

    def _judge(self, early: Sequence[str]) -> list[str]:
        written = {key: url for key, url in _unique(early)[0].items() if key not in self._early}
        decided = _without_request(written, self.settings, self.cache, offline=False)
        self._early.update({key: (url, decided.get(key)) for key, url in written.items()})
        return [key for key in written if key not in decided]


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


def _over_the_network(early: list[str], found: FoundLinks, settings: LinksConfig, progress: bool,
                      tls_context: concurrent.futures.Future[ssl.SSLContext] | None
                      ) -> tuple[dict[str, LinkResult], int, str]:
    """Return the verdicts on the links `found` left to request, the requests sent, and the signal that stopped
    the run ("" if none), with the progress line on stderr; the `early` keys are requested from the start."""
    if not early and found.done and not found.pending:
        return {}, 0, ""
    _import_network_half()
    from graphsite.citations.network import run, run_to_completion
    from graphsite.citations.tls import TrustError

    try:
        return run_to_completion(run(early, found, settings, progress, tls_context))
    except TrustError as exc:  # no https link can be checked: one error, not every https link dead
        from graphsite.errors import ConfigError

        raise ConfigError(str(exc), hint="set links.ca_bundle to a file of PEM CA certificates, or leave it "
                                         "empty for certifi's") from None


def _import_network_half(*, checker: bool = True) -> None:
    """Import graphsite/citations/network.py (and the checker, unless `checker` is false), the first time without
    a collection of the cyclic garbage collector, every object alive then frozen (gc.freeze).

    The import makes about 16,000 objects that live as long as the process (asyncio's, the checker's), and the
    collection it set off in the middle of asyncio scanned every one of them for nothing: 7 ms of CPU, a twentieth
    of a check of 200 links (benchmarks/links_vs_peers.py). Frozen, they are never scanned; the collections of
    the check see only what the check makes. Each call that imports freezes what is alive then (the order's
    import, then the checker's, may freeze twice in a run): frozen objects that become garbage in a cycle stay.
    One thread at a time: a second thread would read the collector as the first one left it (off) and keep it off."""
    wanted = ("graphsite.citations.network", *(("graphsite.citations.checker",) if checker else ()))
    if all(name in sys.modules for name in wanted):
        return
    with _NETWORK_IMPORT:
        collecting = gc.isenabled()
        gc.disable()
        try:
            for name in wanted:
                importlib.import_module(name)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()


_NETWORK_IMPORT = threading.Lock()


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


def _offline(results: list[LinkResult]) -> bool:
    """Return whether no host answered at all (this machine offline, rather than every link dead)."""
    asked = [r for r in results if r.state not in ("skipped", "private", "local", "unchecked")]
    return len(asked) >= 3 and all(r.status is None for r in asked)
