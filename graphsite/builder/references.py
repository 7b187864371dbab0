"""The reference list: the numbered entries `N. Title … URL` of the report's final references section."""

from __future__ import annotations

import time

from markdown_it.token import Token

from graphsite.builder.markdown import is_references_title, markdown, parse, plain_text, words
from graphsite.builder.model import Reference, SourceCheck, SourceChecks
from graphsite.patterns import lazy_pattern

__all__ = ["check_words", "checks_summary", "collect_references", "day", "entry_title", "entry_url",
           "is_references_title"]

# A bare URL in an entry's text: a scheme of at most 32 characters (a long run of `+` cannot make the search
# quadratic), then everything up to a space or an angle bracket.
_bare = lazy_pattern(r"(?<![\w/:])([a-zA-Z][a-zA-Z0-9+.\-]{0,31}://[^\s<>]+|mailto:[^\s<>]+|www\.[^\s<>]+)")


def entry_url(raw: str) -> str:
    """Return the last URL written in a reference entry's Markdown `raw` (see _entry_url)."""
    return _entry_url([t for t in parse(raw).tokens if t.type == "inline"])[0]


def _entry_url(inlines: list[Token]) -> tuple[str, str]:
    """Return (href, the URL as written) of the last URL in a reference entry's inline tokens, or ("", ""):
    links and `<autolinks>` as markdown-it parsed them by CommonMark's rules (balanced parentheses, `<…>`
    destinations), bare URLs by GFM's (a `...` placeholder at the end stays part of the URL)."""
    md = markdown()
    found = ("", "")
    for inline in inlines:
        depth = 0
        for child in inline.children or ():
            if child.type == "link_open":
                depth += 1
                if depth == 1:
                    found = _link_url(child)
            elif child.type == "link_close":
                depth -= 1
            elif child.type == "text" and depth == 0 and ("://" in child.content or "mailto:" in child.content):
                for match in _bare().finditer(child.content):  # schemes GFM does not link (file:, ftp:, …)
                    written = _trim(match.group(1))
                    found = (md.normalizeLink(written), written)
    return found


def _link_url(link: Token) -> tuple[str, str]:
    bare = link.meta.get("bare")
    if not bare:
        href = str(link.attrGet("href") or "")
        return href, href
    written = _trim(bare)
    return markdown().normalizeLink(written if "://" in written else f"http://{written}"), written


def _trim(url: str) -> str:
    """Return a bare URL without the punctuation that ends the sentence around it (`...` placeholders stay);
    one pass from the end, linear however long the run of trailing punctuation."""
    end = len(url)
    surplus = url.count(")") - url.count("(")
    while end:
        last = url[end - 1]
        if last in "*_`'\"":
            end -= 1
        elif last == ")" and surplus > 0:
            surplus -= 1
            end -= 1
        elif end > 1 and last in ".,;:!?" and url[end - 2] != ".":
            end -= 1
        else:
            break
    return url[:end]


def entry_title(tokens: list[Token], url: str, written: str = "") -> str:
    """Return the readable title of a reference entry: its text without the URL and trailing punctuation."""
    text = " ".join(plain_text(t.children) for t in tokens if t.type == "inline")
    for shown in dict.fromkeys((written, url)):
        if shown:
            text = text.replace(shown, " ")
    text = " ".join(text.split())
    return text.rstrip(" .,;:—–-").strip() or url


def collect_references(tokens: list[Token], body_line: int) -> list[Reference]:
    """Return the entries of every top-level ordered list in a references section's tokens."""
    references: list[Reference] = []
    group = ""
    base_level = tokens[0].level if tokens else 0
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == base_level:
            group = words(tokens[index + 1].children)
        if token.type != "list_item_open" or token.level != base_level + 1 or not token.info.isdigit():
            continue
        end = _closing(tokens, index)
        start_line = (token.map or (0, 0))[0]
        url, written = _entry_url([t for t in tokens[index:end] if t.type == "inline"])
        references.append(Reference(int(token.info), url, entry_title(tokens[index:end], url, written),
                                    start_line + body_line, group))
    return references


def _closing(tokens: list[Token], start: int) -> int:
    level = tokens[start].level
    for index in range(start + 1, len(tokens)):
        if tokens[index].type == "list_item_close" and tokens[index].level == level:
            return index
    return len(tokens)


def day(moment: float) -> str:
    """Return the UTC date of `moment` (seconds since the epoch) as the page writes it: 2026-12-01."""
    return time.strftime("%Y-%m-%d", time.gmtime(moment))


def check_words(check: SourceCheck) -> str:
    """Return what the reference list says of a link check's verdict, short enough for a screen reader
    (<= 80 characters): "checked 2026-12-01", "unreachable on 2026-12-01 (HTTP 404)", …"""
    if check.checked_at <= 0 or check.state in _NOT_CHECKED:
        return "not checked"
    on = day(check.checked_at)
    status = f" (HTTP {check.status})" if check.status is not None else ""
    if check.state in ("ok", "redirected"):
        return f"checked {on}"
    if check.state == "warn":
        return f"checked {on}: the page may be gone"
    if check.state == "blocked":
        return f"blocked by a bot check on {on}" if check.bot_check or check.status is None \
            else f"the site refused the check on {on}{status}"
    if check.state == "dead":
        return f"unreachable on {on}{status}"
    if check.state == "unavailable":
        return f"site unavailable on {on}{status}"
    if check.state == "timeout":
        return f"no answer in time on {on}"
    return f"not verified on {on}"


_NOT_CHECKED = frozenset({"skipped", "unchecked", "local", "private"})
# How the summary above the list counts the verdicts, in this order.
_TALLY = (("reachable", ("ok", "redirected")), ("may be gone", ("warn",)), ("unreachable", ("dead",)),
          ("blocked by a bot check or refused", ("blocked",)),
          ("not verified", ("unavailable", "timeout", "unverified")))


def checks_summary(checks: SourceChecks, urls: list[str]) -> str:
    """Return the one sentence near the reference list: how many of the list's sources (`urls`, the URLs of its
    entries that have a verdict, each once) were checked, when, and what came of it."""
    verdicts = dict(checks.verdicts)
    found = [verdicts[url] for url in dict.fromkeys(urls) if url in verdicts]
    checked = [check for check in found if check.checked_at > 0 and check.state not in _NOT_CHECKED]
    days = sorted({day(check.checked_at) for check in checked}) or [day(checks.checked_at)]
    when = f"on {days[0]}" if len(days) == 1 else f"between {days[0]} and {days[-1]}"
    parts = [f"{count} {words}" for words, states in _TALLY
             if (count := sum(1 for check in checked if check.state in states))]
    unchecked = len(dict.fromkeys(urls)) - len(checked)
    if unchecked:
        parts.append(f"{unchecked} not checked")
    sources = "source" if len(checked) == 1 else "sources"
    return f"Links checked {when} (UTC): {len(checked)} {sources}" + (f", {', '.join(parts)}." if parts else ".")
