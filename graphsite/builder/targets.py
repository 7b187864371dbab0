"""In-page link targets resolved the way GitHub resolves them, and the ones that resolve to nothing named.

A `#fragment` is compared with the ids of the page: the same id is kept; one that matches an id but for case
(`#Type-inference` for `type-inference`), or once slugged by GitHub's rules (`#Type Inference`, `#caf%C3%A9`),
is rewritten to that id; one that matches nothing is a warning naming its line (`link-missing-fragment`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import unquote

from markdown_it.token import Token

from graphsite.builder.model import Finding

MISSING_FRAGMENT = "link-missing-fragment"


def resolve_fragments(tokens: list[Token], ids: Iterable[str], known: Callable[[str], bool],
                      slugify: Callable[[str], str], body_line: int) -> list[Finding]:
    """Rewrite every Markdown link to a `#fragment` that matches an id loosely to that id, in place; return a
    warning for each one that matches none (`known` accepts the ids the page makes itself)."""
    exact = set(ids)
    folded: dict[str, str] = {}
    for target in exact:
        folded.setdefault(target.casefold(), target)
    found: list[Finding] = []
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        breaks = 0
        for child in token.children:
            breaks += child.type in {"softbreak", "hardbreak"}
            href = str(child.attrGet("href") or "") if child.type == "link_open" else ""
            if len(href) < 2 or not href.startswith("#"):
                continue
            fragment = href[1:]
            if fragment in exact or known(fragment):
                continue
            written = unquote(fragment)
            slug = slugify(written)
            target = folded.get(written.casefold()) or (slug if slug in exact else "")
            if target:
                child.attrSet("href", f"#{target}")
                continue
            line = (token.map[0] if token.map else 0) + body_line + breaks
            found.append(Finding(MISSING_FRAGMENT, f"the link to {_shown(href)} matches no heading or anchor "
                                 "of the page: a reader who follows it stays where they are", line=line))
    return found


def _shown(href: str) -> str:
    return href if len(href) <= 60 else href[:59] + "…"
