"""The link targets of a body as its author wrote them, each with its file line: Markdown links and the
href of raw HTML, read from markdown-it's tokens before the builder annotates them (citations, §
cross-references and unsafe schemes change the tokens; `graphsite links` reports what the author wrote).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

_HTML_LINK = re.compile(r"""\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.IGNORECASE)


def written_links(tokens: list[Token], body: str, body_line: int, md: MarkdownIt) -> tuple[tuple[str, int], ...]:
    """Return (href, file line) for every link target of the block `tokens` of `body`, in order."""
    body_lines = body.split("\n")
    found: list[tuple[str, int]] = []
    for token in tokens:
        if not token.map:
            continue
        start, end = token.map
        for href in _hrefs(token):
            found.append((href.strip(), _line_of(href, body_lines, start, end, md) + body_line))
    return tuple(found)


def _hrefs(token: Token) -> list[str]:
    """Return the link targets of one block token: its Markdown links and its raw HTML's href."""
    hrefs = [c.attrGet("href") for c in token.children or () if c.type == "link_open"]
    if token.type in ("html_block", "inline"):
        html = token.content if token.type == "html_block" else "".join(
            c.content for c in token.children or () if c.type == "html_inline")
        hrefs += [next(v for v in m.groups() if v is not None) for m in _HTML_LINK.finditer(html)]
    return [href for href in hrefs if isinstance(href, str) and href.strip()]


def _line_of(href: str, lines: list[str], start: int, end: int, md: MarkdownIt) -> int:
    """Return the 0-based index of the first line in lines[start:end] holding `href` as written (or decoded),
    else `start`: a link split over lines is placed on its block's first line."""
    end = min(end, len(lines))
    if end - start <= 1:
        return start  # one line: no search needed (most links: a list item, a one-line paragraph)
    for index in range(start, end):
        if href in lines[index]:
            return index
    forms = {unquote(href), md.normalizeLinkText(href)} - {""}
    for index in range(start, end):
        if any(form in lines[index] for form in forms):
            return index
    return start
