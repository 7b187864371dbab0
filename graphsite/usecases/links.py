"""The `graphsite links` verb: every link of a report with its Markdown line, then a verdict on each.

The builder's report says which http(s) URLs the page links to (front matter, bare URLs and the reference
list included) and which links the author wrote (with the line of each, the links the page cannot serve
included: mailto:, tel:, file:, relative paths, #fragments). Relative links are decided here, against the files beside
the report and the ids of the page; the rest go to the live check.
"""

from __future__ import annotations

import bisect
import dataclasses
import errno
import html
import os
import re
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from graphsite.citations.live import check_links
from graphsite.citations.results import Link, LinkReport, LinkResult, Place
from graphsite.urls import mask, normalize

if TYPE_CHECKING:
    from graphsite.builder.model import Report
    from graphsite.builder.source import Source
    from graphsite.builder.targets import Targets
    from graphsite.config import Config

# What follows a URL up to a space, a tag or a table cell's end; the URL is written whole there when that is
# only punctuation, emphasis or a closing bracket (a bare URL's end leaves them out: builder/references._trim).
_TAIL = re.compile(r"[^\s<>|]*")
_URL_CLOSERS = ".,;:!?*_~`'\")]}"
# For likely_links: an http(s) URL up to a space, a quote, a tag or an unbalanced closing bracket (Wikipedia's
# `Graph_(discrete_mathematics)` keeps its parentheses); a fence that opens a code block; a code span; a comment.
_LIKELY = re.compile(r"https?://(?:[^\s<>\"'`()\[\]]|\([^\s<>\"'`()]*\))+", re.IGNORECASE)
_LIKELY_CLOSERS = ".,;:!?*_~"  # what a bare URL's end leaves out (a closing bracket never got in)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# A report longer than this is parsed before anything is asked: its parse takes a second or more, and while the
# parse holds the run a signal (Ctrl-C) waits for it to end.
EARLY_MAX_CHARS = 1 << 20


def check_report_links(source: Path, config: Config, *, use_cache: bool = True, offline: bool = False,
                       progress: bool = True) -> LinkReport:
    """Return a verdict on every link of the report at `source`, each with its Markdown lines, in line order.
    The URLs its text shows (`likely_links`) are asked first; then the builder reads and parses it while their
    answers come, and what the parse finds is what is checked."""
    path = Path(source)
    found = _Found(path, config.build.max_bytes)
    text = _peek(path, config.build.max_bytes)
    checked = check_links(found, config, early=likely_links(text) if len(text) <= EARLY_MAX_CHARS else [],
                          use_cache=use_cache, offline=offline, progress=progress)
    written = {link.url: link for link in found.links}
    # Not keyed by the result's URL: it is masked, and two links that differ only in a secret are two rows.
    results = [*checked.results, *(dataclasses.replace(r, url=mask(url), lines=written[url].lines,
                                                       places=written[url].places) for url, r in found.local.items())]
    ordered = sorted(results, key=lambda r: (r.line is None, r.line or 0))
    return dataclasses.replace(checked, results=tuple(ordered))


class _Found:
    """The report's links, found by the builder when called (read, decoded, front matter checked, parsed once;
    the link check calls it once its first requests are sent); relative links are decided here, the rest
    returned for the check."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path, self.max_bytes = path, max_bytes
        self.links: list[Link] = []
        self.local: dict[str, LinkResult] = {}

    def __call__(self) -> list[Link]:
        from graphsite.builder.report import report_from_source
        from graphsite.builder.source import read_source
        from graphsite.builder.targets import Targets

        text = read_source(self.path, max_bytes=self.max_bytes)
        report = report_from_source(text)
        self.links = report_links(text, report)
        targets = Targets([*report.heading_ids, *report.raw_ids, *report.note_ids])
        self.local = {link.url: _local_verdict(link.url, text, targets) for link in self.links
                      if _is_relative(link.url)}
        return [link for link in self.links if link.url not in self.local]


def _peek(path: Path, max_bytes: int) -> str:
    """Return the text of the regular file at `path` for likely_links, "" when it is not one, cannot be read or
    is over `max_bytes` (the builder's read_source, which reads it next, says why). Standard input (`-`) is not
    peeked at: it can be read only once."""
    if str(path) == "-":
        return ""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not hang (read_source refuses it).
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return ""
    with os.fdopen(descriptor, "rb") as file:
        try:
            info = os.fstat(descriptor)
            # read(n) takes n bytes of memory first: its size, not build.max_bytes (up to a GiB)
            raw = file.read(min(info.st_size, max_bytes) + 1) if stat.S_ISREG(info.st_mode) else b""
        except OSError:
            return ""
    # longer than its size: it grew meanwhile (read_source reads it again and says if it is now too long)
    return raw.decode("utf-8", errors="replace") if len(raw) <= min(info.st_size, max_bytes) else ""


def likely_links(text: str) -> list[str]:
    """Return the http(s) URLs the report's text seems to link to, in order, found without parsing it (a scan
    of the text, linear in its size): what the check may ask before the builder's parse, which decides what is
    checked, is done. Fenced code blocks, code spans and HTML comments are left out (a URL written there is no
    link); a URL in an indented code block is not told apart, and may be asked for, its answer unused."""
    urls: dict[str, None] = {}
    fence = ""
    for line in _COMMENT.sub("", text).splitlines():
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        if "://" in line:
            for written in _LIKELY.findall(_CODE_SPAN.sub("", line)):
                url = written.rstrip(_LIKELY_CLOSERS)
                # `&amp;` in a link's destination or an href is `&` in the URL (as markdown-it and HTML read it)
                urls.setdefault(html.unescape(url) if "&" in url else url, None)
    return list(urls)


def page_links(source: Path, report: Report, config: Config) -> list[Link]:
    """Return the page's http(s) URLs (what `build --check-links` checks), each with every place it is written
    in the report at `source` (read again: the build keeps the parse, not the text)."""
    from graphsite.builder.source import read_source

    located = {link.url: link for link in report_links(read_source(source, max_bytes=config.build.max_bytes), report)}
    return [located.get(url) or Link(url) for url in report.links]


def report_links(source: Source, report: Report) -> list[Link]:
    """Return every link of `source` once, with the file lines that hold it: the links the author wrote in the
    body (Markdown and raw HTML, from the builder's one parse), then each of the page's http(s) URLs not seen
    there (a bare URL, a reference entry, front matter), found by its text."""
    found: dict[str, list[int]] = {}
    for href, line in report.written_links:
        found.setdefault(href, []).append(line)
    text = source.text()
    _add_written(found, report.links, text)
    places = _Places(text, report)
    return [Link(url, tuple(sorted({*lines, *(p.line for p in where)})), where)
            for url, lines in found.items() for where in [places.of(url, lines)]]


class _Places:
    """Every place a URL is written on the lines known to hold it (its links, its citations, its reference entry):
    line and column, and the inline citation [N] or the reference entry N it belongs to (the k-th time a URL is
    written on a line is the k-th citation of it there). Only those lines are searched: the whole text once per
    URL took 0.6 s on a report of 4,000 links."""

    def __init__(self, text: str, report: Report) -> None:
        self.text = text
        self.starts = [0, *(newline.end() for newline in re.finditer("\n", text)), len(text) + 1]
        self.citations: dict[tuple[int, str], list[int]] = {}
        self.lines: dict[str, set[int]] = {}
        for cite in report.citations:
            key = normalize(cite.url)
            self.citations.setdefault((cite.line, key), []).append(cite.number)
            self.lines.setdefault(key, set()).add(cite.line)
        self.references: dict[tuple[int, str], int] = {}
        for ref in report.references:
            key = normalize(ref.url)
            self.references[ref.line, key] = ref.number
            self.lines.setdefault(key, set()).add(ref.line)

    def of(self, url: str, lines: list[int]) -> tuple[Place, ...]:
        """Return the places of `url`; a line where its text is not found (a form markdown-it rewrote) is named
        without a column."""
        key = normalize(url)
        forms: set[str] | None = None  # the other ways it may be written, worked out only when needed
        places: list[Place] = []
        for line in sorted({*lines, *self.lines.get(key, ())}):
            start = self.starts[line - 1]
            text = self.text[start:self.starts[line] - 1] if line < len(self.starts) else ""
            offsets = _occurrences(text, url)
            if not offsets:
                forms = _written_forms(url) if forms is None else forms
                offsets = sorted({at for form in forms for at in _occurrences(text, form)})
            columns = [at + 1 for at in offsets] or [0]
            numbers = iter(self.citations.get((line, key), []))
            for column in columns:
                reference = self.references.get((line, key))
                citation = next(numbers, None) if reference is None else None
                places.append(Place(line, column, citation, reference))
        return tuple(places)


def _add_written(found: dict[str, list[int]], page_urls: tuple[str, ...], text: str) -> None:
    """Add each page URL the Markdown links did not give (a bare URL, a reference entry, front matter) with every
    line that holds its text; an IDN host is written two ways (markdown-it's href is punycode): both count.
    Only those URLs are looked for, each with str.find over the whole text: a Python scan of every line for
    every URL of the page took 1.3 s of CPU on a report of 2,000 links."""
    wanted = [url for url in page_urls if url not in found or "xn--" in url]
    if not wanted:
        return
    starts = [0, *(newline.end() for newline in re.finditer("\n", text))]  # the offset of each line
    for url in wanted:
        written = sorted({bisect.bisect_right(starts, at) for form in _written_forms(url)
                          for at in _occurrences(text, form)})
        if url not in found:
            found[url] = written
        else:
            found[url] += written


def _occurrences(text: str, url: str) -> list[int]:
    """Return every offset where `url` is written in `text` as a whole URL, not as the start of a longer one
    (`…/page/7` is not written on a line that only holds `…/page/707`): what follows it up to a space or a tag
    may only be the punctuation and emphasis a bare URL's end leaves out (`…/a?`, `…/a.**`, `~~…/a~~`)."""
    at, offsets = text.find(url), []
    while at >= 0:
        tail = _TAIL.match(text, at + len(url))
        if tail is None or not tail.group(0).strip(_URL_CLOSERS):
            offsets.append(at)
        at = text.find(url, at + 1)
    return offsets


def _written_forms(url: str) -> set[str]:
    """Return the ways an author may have written `url`: as it is, percent-decoded, and with an IDN host in
    Unicode (the page holds `xn--bcher-kva.example`, the report `bücher.example`)."""
    forms = {url, unquote(url)}
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return forms
    if "xn--" in host:
        try:
            readable = host.encode("ascii").decode("idna")
        except UnicodeError:
            return forms
        forms |= {form.replace(host, readable) for form in tuple(forms)}
    return forms - {""}


def _is_relative(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return not parts.scheme and not parts.netloc


def _local_verdict(url: str, source: Source, targets: Targets) -> LinkResult:
    """Return the verdict on a relative link: a #fragment of the page itself (resolved by the builder's own
    `Targets`, as the build resolves it: case and GitHub's slug rules aside), or a file beside the report. What
    it says of the link is masked (`notes.md;token=…`, `#access_token=…`); the caller masks its URL."""
    now = time.time()
    parts = urlsplit(url.strip())
    if not parts.path:
        fragment = unquote(parts.fragment)
        if not fragment or targets.resolve(parts.fragment) is not None:
            return LinkResult(url, "ok", "a link within the page", checked_at=now)
        return LinkResult(url, "local", f"no {mask('#' + fragment)} on the page (no heading or element has that "
                                        "id)", checked_at=now)
    target = source.path.parent / unquote(parts.path)
    shown = mask(unquote(parts.path))
    exists = _exists(target)
    if isinstance(exists, str):
        return LinkResult(url, "local", f"cannot tell whether {shown} is beside the report: {exists} "
                                        f"({mask(str(target))}); "
                                        "the published page is one index.html either way", checked_at=now)
    if exists:
        return LinkResult(url, "local", f"{shown} exists beside the report, but the published page is one "
                                        "index.html: link its public URL instead", checked_at=now)
    return LinkResult(url, "local", f"no file {shown} beside the report (and the published page is one "
                                    "index.html)", checked_at=now)


# What says no file is there: none by that name, a path through a file, a link loop, a name no file can have.
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})


def _exists(path: Path) -> bool | str:
    """Return whether `path` exists, or why that cannot be told (permission denied, an I/O error): unknown is not
    "no file". os.stat, not Path.exists, which from Python 3.12 on answers False for any error."""
    try:
        os.stat(path)
    except ValueError:  # a NUL byte: no file name can hold one
        return False
    except OSError as exc:
        if exc.errno in _ABSENT:
            return False
        return exc.strerror or str(exc)
    return True
