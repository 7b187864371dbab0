"""Offline citation integrity: does every numbered citation point at one real, public reference?

Pure functions of the report's citations and references; the builder calls `check_citations` at every
build and prints the findings (fatal under --strict unless the author accepted them in graphsite.toml).
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from graphsite import urls
from graphsite.builder.model import Finding, InlineCitation, Reference
from graphsite.codes import CITATION_CODES as CODES
from graphsite.codes import CITATION_PREFIX as PREFIX
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.config import Acceptance

__all__ = ["CODES", "PREFIX", "CitationCounts", "check_citations", "citation_counts", "unmatched_acceptances"]


@frozen
class CitationCounts:
    """What the build summary and --json report about citations."""

    inline: int
    references: int
    unique_urls: int

    def as_dict(self) -> dict[str, int]:
        return {"inline": self.inline, "references": self.references, "unique_urls": self.unique_urls}


@frozen
class _Raw:
    """A finding before acceptance, with the URLs an acceptance may be limited to."""

    finding: Finding
    urls: tuple[str, ...]


def check_citations(
    citations: Sequence[InlineCitation],
    references: Sequence[Reference],
    accept: Sequence[Acceptance] = (),
    links: Sequence[tuple[str, int]] = (),
) -> list[Finding]:
    """Return every citation finding, ordered by Markdown line; accepted ones carry `accepted=<reason>`.
    `links`: the body's other links (URL, line), checked for a credential only."""
    raw = [
        *_reference_findings(references),
        *_inline_findings(citations, references),
        *_link_findings(links, citations, references),
    ]
    findings = [_apply(item, accept) for item in raw]
    return sorted(findings, key=lambda f: (f.line or 0, f.number or 0, f.code, f.message))


def citation_counts(
    citations: Sequence[InlineCitation],
    references: Sequence[Reference],
    links: Iterable[str] = (),
) -> CitationCounts:
    """Return the counts: inline citations, reference entries, unique outbound http(s) URLs of the page."""
    every = [*links, *(c.url for c in citations), *(r.url for r in references)]
    outbound = {urls.normalize(u) for u in every if u.strip().lower().startswith(("http://", "https://"))}
    return CitationCounts(inline=len(citations), references=len(references), unique_urls=len(outbound))


def _finding(code: str, message: str, line: int, number: int | None, *found_urls: str) -> _Raw:
    """Return a finding about `found_urls`; a credential in any of them is masked in the message."""
    for url in found_urls:
        shown = urls.mask(url)
        if shown != url:
            message = message.replace(url, shown)
    return _Raw(Finding(code=PREFIX + code, message=message, line=line, number=number), found_urls)


def _url_finding(number: int, url: str, line: int, where: str) -> _Raw | None:
    found = urls.problem(url)
    if found is None:
        return None
    code, reason = found
    if not url.strip():
        return _finding(code, f"[{number}] {where} has no URL: a reader cannot follow it", line, number, url)
    return _finding(code, f"[{number}] {where} URL {url} {reason}", line, number, url)


def _reference_findings(references: Sequence[Reference]) -> Iterable[_Raw]:
    by_number: dict[int, list[Reference]] = defaultdict(list)
    by_url: dict[str, list[Reference]] = defaultdict(list)
    for ref in references:
        by_number[ref.number].append(ref)
        by_url[urls.normalize(ref.url)].append(ref)
        found = _url_finding(ref.number, ref.url, ref.line, "reference")
        if found:
            yield found
    for number, refs in by_number.items():
        for dup in refs[1:]:
            yield _finding("duplicate-number", f"reference number {number} appears again "
                           f"(first at line {refs[0].line}); renumber one of them", dup.line, number, dup.url)
    for url, refs in by_url.items():
        if len(refs) < 2 or not url.strip():
            continue
        first = refs[0]
        for dup in refs[1:]:
            same = dup.title.strip() == first.title.strip()
            detail = "the same title" if same else f"different titles ({_short(first.title)} / {_short(dup.title)})"
            yield _finding("duplicate-url", f"references [{first.number}] and [{dup.number}] share the URL "
                           f"{dup.url} with {detail}", dup.line, dup.number, dup.url)


def _link_findings(links: Sequence[tuple[str, int]], citations: Sequence[InlineCitation],
                   references: Sequence[Reference]) -> Iterable[_Raw]:
    """Yield a secret-in-url finding for each URL of the page that is not a citation's or a reference's (those
    are judged above) and carries a credential: it ships in the page all the same. Once per URL, at the first
    place `links` gives it (line 0: not known)."""
    seen = {urls.normalize(c.url) for c in citations} | {urls.normalize(r.url) for r in references}
    for url, line in links:
        key = urls.normalize(url)
        if key in seen:
            continue
        seen.add(key)
        reason = urls.secret(url)
        if reason:
            yield _finding("secret-in-url", f"link URL {url} {reason}", line, None, url)


def _short(title: str, limit: int = 48) -> str:
    text = " ".join(title.replace("**", "").split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _inline_findings(citations: Sequence[InlineCitation], references: Sequence[Reference]) -> Iterable[_Raw]:
    """Yield the findings of the inline citations: one pass to index them, one to judge (linear)."""
    listed: dict[int, Reference] = {}
    owners: dict[str, list[int]] = {}  # normalised URL -> the first two reference numbers listing it
    for ref in references:
        listed.setdefault(ref.number, ref)
        numbers = owners.setdefault(urls.normalize(ref.url), [])
        if len(numbers) < 2 and ref.number not in numbers:
            numbers.append(ref.number)
    places: dict[tuple[int, str], list[InlineCitation]] = {}
    for cite in citations:
        places.setdefault((cite.number, urls.normalize(cite.url)), []).append(cite)
    dangling: set[int] = set()
    for (number, url), group in places.items():
        cite = group[0]
        listing = listed.get(number)
        if listing is None:
            if number not in dangling:
                dangling.add(number)
                yield _finding("dangling", f"[{number}] is cited (URL {cite.url}) but the reference list "
                               f"has no entry {number}", cite.line, number, cite.url)
        elif urls.normalize(listing.url) != url:
            also = f" ({len(group)} places)" if len(group) > 1 else ""
            owner = next((n for n in owners.get(url, ()) if n != number), None)
            owned = f" (the URL of reference [{owner}])" if owner is not None else ""
            yield _finding("mismatch", f"[{number}] inline URL {cite.url}{also}{owned} differs from "
                           f"reference {number} (line {listing.line}): {listing.url or '(no URL)'}",
                           cite.line, number, cite.url, listing.url)
        else:
            continue
        found = _url_finding(number, cite.url, cite.line, "inline")
        if found:
            yield found
    cited = {c.number for c in citations}
    for number, ref in listed.items():
        if cited and number not in cited:  # a list no text cites by number is a plain bibliography
            yield _finding("unused", f"reference [{number}] is never cited in the text", ref.line, number, ref.url)


def _matches(acceptance: Acceptance, raw: _Raw) -> bool:
    code = acceptance.code if acceptance.code.startswith(PREFIX) else PREFIX + acceptance.code
    if code != raw.finding.code:
        return False
    if acceptance.number and acceptance.number != raw.finding.number:
        return False
    if not acceptance.url:
        return True
    pattern = urls.normalize(acceptance.url)
    return any(_fnmatch(urls.normalize(u), pattern) for u in raw.urls)


def _fnmatch(url: str, pattern: str) -> bool:
    """Return fnmatch.fnmatchcase(url, pattern), without compiling a regular expression for a pattern that is a
    URL without `*`, `?` or `[` (most acceptances: the URL itself), or one with a single `*`, at its end."""
    head = pattern[:-1] if pattern.endswith("*") else pattern
    if any(c in head for c in "*?["):
        return fnmatch.fnmatchcase(url, pattern)
    return url.startswith(head) if head != pattern else url == pattern


def _apply(raw: _Raw, accept: Sequence[Acceptance]) -> Finding:
    for acceptance in accept:
        if _matches(acceptance, raw):
            return replace(raw.finding, accepted=acceptance.reason)
    return raw.finding


def unmatched_acceptances(
    citations: Sequence[InlineCitation],
    references: Sequence[Reference],
    accept: Sequence[Acceptance],
    *,
    links: Sequence[tuple[str, int]],
) -> list[Acceptance]:
    """Return the acceptances that match no finding any more (stale entries the author can delete). `links`
    (the page's other links) is required: without them an accepted `secret-in-url` would look stale."""
    raw = [*_reference_findings(references), *_inline_findings(citations, references),
           *_link_findings(links, citations, references)]
    return [a for a in accept if not any(_matches(a, r) for r in raw)]
