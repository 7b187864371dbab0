"""The `graphsite links` verb: every link of a report with its Markdown line, then a verdict on each.

The builder's `read_report` says which http(s) URLs the page links to (front matter, bare URLs and the
reference list included); the Markdown tokens add the links the page cannot serve (mailto:, tel:, file:,
relative paths, #fragments) and the line of each. Relative links are decided here, against the files beside
the report and the ids of the page; the rest go to the live check.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from markdown_it.token import Token

from graphsite.citations.live import check_links
from graphsite.citations.results import Link, LinkReport, LinkResult

if TYPE_CHECKING:
    from graphsite.builder.source import Source
    from graphsite.config import Config

_HTML_LINK = re.compile(r"""\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.IGNORECASE)
_GENERATED_ID = re.compile(r"^(?:ref-|fn|fnref)\d+(?::\d+)?$")  # references and footnotes: the builder's ids
_HTML_ID = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.IGNORECASE)


def check_report_links(source: Path, config: Config, *, use_cache: bool = True, offline: bool = False,
                       progress: bool = True) -> LinkReport:
    """Return a verdict on every link of the report at `source`, each with its Markdown lines, in line order."""
    from graphsite.builder.report import report_from_source
    from graphsite.builder.source import read_source

    text = read_source(Path(source))
    report = report_from_source(text)
    links = report_links(text, report.links)
    ids: set[str] = set()
    local = {link.url: _local_verdict(link.url, text, ids) for link in links if _is_relative(link.url)}
    checked = check_links([link for link in links if link.url not in local], config, use_cache=use_cache,
                          offline=offline, progress=progress)
    by_url = {r.url: r for r in checked.results}
    lines = {link.url: link.lines for link in links}
    by_url.update({url: dataclasses.replace(r, lines=lines[url]) for url, r in local.items()})
    ordered = sorted(by_url.values(), key=lambda r: (r.line is None, r.line or 0))
    return dataclasses.replace(checked, results=tuple(ordered))


def report_links(source: Source, page_urls: tuple[str, ...] = ()) -> list[Link]:
    """Return every link of `source` once, with the file lines that hold it: Markdown links and raw HTML
    `href`s in the body, then each of `page_urls` (the page's http(s) URLs) not seen there, found by its text."""
    from graphsite.builder.markdown import markdown

    file_lines = source.path.read_text(encoding="utf-8", errors="replace").split("\n") \
        if source.path.is_file() else []
    found: dict[str, list[int]] = {}
    body_lines = source.body.split("\n")
    for token in markdown().parse(source.body, {}):
        if not token.map:
            continue
        start, end = token.map
        for href in _hrefs(token):
            line = _line_of(href, body_lines, start, end) + source.body_line
            found.setdefault(href.strip(), []).append(line)
    _add_written(found, page_urls, file_lines)
    return [Link(url, tuple(sorted(set(lines)))) for url, lines in found.items()]


def _hrefs(token: Token) -> list[str]:
    """Return the link targets of one block token: its Markdown links and its raw HTML's href/src."""
    hrefs = [c.attrGet("href") for c in token.children or () if c.type == "link_open"]
    if token.type in ("html_block", "inline"):
        html = token.content if token.type == "html_block" else "".join(
            c.content for c in token.children or () if c.type == "html_inline")
        hrefs += [next(v for v in m.groups() if v is not None) for m in _HTML_LINK.finditer(html)]
    return [href for href in hrefs if isinstance(href, str) and href.strip()]


def _add_written(found: dict[str, list[int]], page_urls: tuple[str, ...], file_lines: list[str]) -> None:
    """Add each page URL the Markdown links did not give (a bare URL, a reference entry, front matter) with every
    line that holds its text; an IDN host is written two ways (markdown-it's href is punycode): both count."""
    for url in page_urls:
        forms = _written_forms(url)
        written = [n + 1 for n, line in enumerate(file_lines) if any(form in line for form in forms)]
        if url not in found:
            found[url] = written
        elif "xn--" in url:
            found[url] += written


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


def _line_of(href: str, lines: list[str], start: int, end: int) -> int:
    """Return the 0-based index of the first line in lines[start:end] holding `href` as written (or decoded),
    else `start`: a link split over lines is placed on its block's first line."""
    end = min(end, len(lines))
    if end - start <= 1:
        return start  # one line: no search needed (most links: a list item, a one-line paragraph)
    for index in range(start, end):
        if href in lines[index]:
            return index
    from graphsite.builder.markdown import markdown

    forms = {unquote(href), markdown().normalizeLinkText(href)} - {""}
    for index in range(start, end):
        if any(form in lines[index] for form in forms):
            return index
    return start


def _is_relative(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return not parts.scheme and not parts.netloc


def _local_verdict(url: str, source: Source, ids: set[str]) -> LinkResult:
    """Return the verdict on a relative link: a #fragment of the page itself, or a file beside the report.
    `ids` is filled with the page's ids on the first in-page link (one parse for all of them)."""
    now = time.time()
    parts = urlsplit(url.strip())
    if not parts.path:
        fragment = unquote(parts.fragment)
        if fragment and not ids:
            ids.update(_page_ids(source))
        if not fragment or fragment in ids or _GENERATED_ID.match(fragment):
            return LinkResult(url, "ok", "a link within the page", checked_at=now)
        return LinkResult(url, "local", f"no #{fragment} on the page (no heading or element has that id)",
                          checked_at=now)
    target = (source.path.parent / unquote(parts.path)).resolve()
    shown = unquote(parts.path)
    if target.exists():
        return LinkResult(url, "local", f"{shown} exists beside the report, but the published page is one "
                                        "index.html: link its public URL instead", checked_at=now)
    return LinkResult(url, "local", f"no file {shown} beside the report (and the published page is one "
                                    "index.html)", checked_at=now)


def _page_ids(source: Source) -> set[str]:
    """Return the ids the page will have: headings, the page's own, raw HTML's."""
    from graphsite.builder.markdown import parse
    from graphsite.builder.sanitize import RESERVED_IDS

    parsed = parse(source.body, source.body_line)
    ids = {h.id for h in parsed.headings} | set(RESERVED_IDS)
    ids |= {next(v for v in m.groups() if v is not None) for m in _HTML_ID.finditer(source.body)}
    return ids
