"""Jekyll's kramdown and Liquid markup left in a Markdown file: removed from the page, each one warned.

A README copied out of a Jekyll site keeps `{:toc}`, `{: .no_toc}` (kramdown attribute lists) and `{% … %}`
(Liquid tags such as `{% post_url … %}` or `{% raw %}`); no Markdown renderer but Jekyll's gives them a meaning,
so the page would show them as literal text. They are removed from prose (never from code), a link whose
whole destination was a Liquid tag keeps its text, a paragraph left empty goes, a list that held only the
`{:toc}` placeholder goes, and each removal is a `markup-leftover` warning naming its line.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

from graphsite.builder.model import Finding
from graphsite.patterns import lazy_pattern

LEFTOVER = "markup-leftover"
# `{:toc}`, `{: .class #id key="v"}`, `{::options … /}`; a Liquid tag `{% … %}` (with `{%-`/`-%}` trimming).
_leftover = lazy_pattern(r"\{::?[^{}\n]*\}|\{%-?[^\n]*?-?%\}")
# `[text]({% post_url x %})`: the link's destination is a Liquid tag, so the link is not even a link.
_liquid_link = lazy_pattern(r"\[([^\[\]\n]*)\]\(\s*\{%[^\n]*?%\}\s*\)")


def remove_leftovers(tokens: list[Token], body_line: int) -> tuple[list[Token], list[Finding]]:
    """Return the tokens without kramdown/Liquid markup in their text, and a warning per removal."""
    found: list[Finding] = []
    for token in tokens:
        if token.type != "inline" or not token.children or "{" not in token.content:
            continue
        line = (token.map[0] if token.map else 0) + body_line
        before, breaks = len(found), 0
        for child in token.children:
            breaks += child.type in {"softbreak", "hardbreak"}
            if child.type == "text" and "{" in child.content:
                child.content = _strip(child.content, line + breaks, found)
        if len(found) > before:
            token.meta["leftover"] = True
            token.meta["toc"] = "{:toc}" in token.content.replace(" ", "")
            token.content = _leftover().sub("", _liquid_link().sub(r"\1", token.content))
    return (_drop_emptied(tokens) if found else tokens), found


def _strip(text: str, line: int, found: list[Finding]) -> str:
    def removed(match: re.Match[str]) -> str:
        written = match.group(0) if len(match.group(0)) <= 40 else match.group(0)[:39] + "…"
        found.append(Finding(LEFTOVER, f"`{written}` is Jekyll/kramdown markup, which Markdown does not read: "
                             "removed from the page", line=line))
        return match.group(1) if match.re is _liquid_link() else ""

    return _leftover().sub(removed, _liquid_link().sub(removed, text))


def _blank(token: Token) -> bool:
    return all(c.type in {"softbreak", "hardbreak"} or (c.type == "text" and not c.content.strip())
               for c in token.children or ())


def _drop_emptied(tokens: list[Token]) -> list[Token]:
    """Return `tokens` without paragraphs the removal left empty, and without a list whose one item held only
    `TOC` and the `{:toc}` that kramdown replaces with the table of contents."""
    kept: list[Token] = []
    skip_until: tuple[str, int] | None = None
    for index, token in enumerate(tokens):
        if skip_until is not None:
            if token.type == skip_until[0] and token.level == skip_until[1]:
                skip_until = None
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else token
        if token.type == "paragraph_open" and following.meta.get("leftover") and _blank(following):
            skip_until = ("paragraph_close", token.level)
            continue
        if token.type in {"bullet_list_open", "ordered_list_open"} and _toc_placeholder(tokens, index):
            skip_until = (token.type.replace("_open", "_close"), token.level)
            continue
        kept.append(token)
    return kept


def _toc_placeholder(tokens: list[Token], start: int) -> bool:
    """Return whether the list opening at `start` is kramdown's `* TOC` + `{:toc}` (one item, that text)."""
    close = tokens[start].type.replace("_open", "_close")
    end = next((i for i in range(start + 1, len(tokens))
                if tokens[i].type == close and tokens[i].level == tokens[start].level), len(tokens))
    inlines = [t for t in tokens[start:end] if t.type == "inline"]
    items = sum(t.type == "list_item_open" and t.level == tokens[start].level + 1 for t in tokens[start:end])
    return items == 1 and len(inlines) == 1 and bool(inlines[0].meta.get("toc"))
