"""In-page link targets resolved the way GitHub resolves them, and the ones that resolve to nothing named.

A `#fragment` (of a Markdown link, or of a raw HTML `href`) is compared with the ids of the page: the same id
is kept; one that matches an id but for case (`#Type-inference` for `type-inference`), or once slugged by
GitHub's rules (`#Type Inference`, `#caf%C3%A9`), is rewritten to that id; one that matches nothing is a warning
naming its line (`link-missing-fragment`).

`Targets` is the one resolver: the build rewrites and warns with it, and `graphsite links` (citations/
report_links.py) judges a report's `#fragment` links with it, so the two never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from html import escape as html_escape
from urllib.parse import unquote

from markdown_it.token import Token

from graphsite.builder.model import Finding
from graphsite.builder.sanitize import RESERVED_IDS
from graphsite.builder.tags import RAW_TAG
from graphsite.patterns import lazy_pattern

MISSING_FRAGMENT = "link-missing-fragment"
_raw_href = lazy_pattern(r"""(\shref\s*=\s*)("#[^"]*"|'#[^']*'|#[^\s"'=<>`]*)""", re.IGNORECASE)


# Ids the page makes after the body is parsed: reference entries (`ref-N`) and the template's section ids.
_LATER_IDS = lazy_pattern(r"(?:ref-\d+|sec-\d+)")


def slugify(text: str) -> str:
    """Return a GitHub-style slug: lower case, punctuation dropped, spaces to hyphens."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-") or "section"


class Targets:
    """The ids of the page (the body's headings, raw HTML ids, footnotes, and the template's own), and the
    id a written fragment stands for."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.exact = {*ids, *RESERVED_IDS}
        self.folded: dict[str, str] = {}
        for target in sorted(self.exact):
            self.folded.setdefault(target.casefold(), target)

    def resolve(self, fragment: str) -> str | None:
        """Return the id `fragment` stands for (itself when it is one), or None when it matches none."""
        if fragment in self.exact or _LATER_IDS().fullmatch(fragment):
            return fragment
        written = unquote(fragment)
        slug = slugify(written)
        return self.folded.get(written.casefold()) or (slug if slug in self.exact else None)


def resolve_fragments(tokens: list[Token], targets: Targets, body_line: int) -> list[Finding]:
    """Rewrite every link to a `#fragment` that matches an id loosely to that id, in place; return a warning
    for each one that matches none."""
    found: list[Finding] = []
    for token in tokens:
        line = (token.map[0] if token.map else 0) + body_line
        if token.type == "html_block" and "#" in token.content:
            token.content = _raw(token.content, targets, line, found)
        if token.type != "inline" or not token.children:
            continue
        breaks = 0
        for child in token.children:
            breaks += child.type in {"softbreak", "hardbreak"}
            if child.type == "html_inline" and "#" in child.content:
                child.content = _raw(child.content, targets, line + breaks, found)
            href = str(child.attrGet("href") or "") if child.type == "link_open" else ""
            if len(href) < 2 or not href.startswith("#"):
                continue
            target = targets.resolve(href[1:])
            if target is None:
                found.append(_missing(href, line + breaks))
            elif target != href[1:]:
                child.attrSet("href", f"#{target}")
    return found


def _raw(html: str, targets: Targets, line: int, found: list[Finding]) -> str:
    """Return raw HTML with every `href="#…"` in its tags resolved (a warning in `found` for each missing)."""
    def tag(match: re.Match[str]) -> str:
        return _raw_href().sub(lambda href: attribute(href, match.start()), match.group(0))

    def attribute(href: re.Match[str], at: int) -> str:
        written = href.group(2).strip("\"'")
        target = targets.resolve(written[1:]) if len(written) > 1 else written[1:]
        if target is None:
            found.append(_missing(written, line + html.count("\n", 0, at)))
            return href.group(0)
        return f'{href.group(1)}"#{html_escape(target)}"' if target != written[1:] else href.group(0)

    return RAW_TAG.sub(tag, html)


def _missing(href: str, line: int) -> Finding:
    shown = href if len(href) <= 60 else href[:59] + "…"
    return Finding(MISSING_FRAGMENT, f"the link to {shown} matches no heading or anchor of the page: a reader "
                   "who follows it stays where they are", line=line)
