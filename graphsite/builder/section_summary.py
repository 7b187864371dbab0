"""A section's one-paragraph summary: its first prose paragraph, completed when it introduces a list, cut at a
sentence boundary within a word limit, never code.

When the section opens with that paragraph and it fits, the paragraph moves from the detail to the summary (the
page shows it once). Otherwise the summary is a shortened copy, and the detail keeps every word.
"""

from __future__ import annotations

import bisect
import re

from markdown_it.token import Token

from graphsite.patterns import lazy_pattern

WORD_LIMIT = 90
LIST_ITEMS = 3  # a list-only section's summary names its first three items
_sentence_end = lazy_pattern(r"[.!?…][\"')\]”’]?(?=\s|$)")
# Words that end in a full stop without ending a sentence: honorifics, Latin and bibliographic abbreviations.
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "rev", "gen", "col", "lt", "sgt", "capt", "hon",
    "e.g", "i.e", "cf", "vs", "viz", "al", "approx", "ca", "c", "pp", "p", "vol", "vols", "no", "nos", "ed", "eds",
    "fig", "figs", "eq", "ch", "sec", "art", "ref", "refs", "inc", "ltd", "co", "corp", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "est", "op", "ibid", "v"})
_LAST_WORD = lazy_pattern(r"(\S+)$")
# A copy must not repeat an id (a footnote reference), nor raw HTML (which may carry one), nor an image.
_NOT_COPIED = frozenset({"footnote_ref", "html_inline", "image"})


def summarise(body: list[Token]) -> tuple[list[Token], list[Token]]:
    """Return (summary block tokens, detail block tokens) of a section's body."""
    if _list_end(body, 0) is not None and not any(t.type == "paragraph_open" and t.level == 0 for t in body):
        return _list_summary(body), body
    first = _first_paragraph(body)
    if first is None:
        return [], body
    inline = body[first + 1]
    count = _word_count(inline.children)
    introduces = _text(inline.children).rstrip().endswith(":")
    items_end = _list_end(body, first + 3) if introduces else None
    if first == 0 and count <= WORD_LIMIT and (not introduces or items_end is None):
        return body[:3], body[3:]
    if first == 0 and items_end is not None and count + _list_words(body[3:items_end]) <= WORD_LIMIT:
        return body[:items_end], body[items_end:]
    children = [c for c in inline.children or () if c.type not in _NOT_COPIED]
    if items_end is not None:
        children = [*children, Token("text", "", 0, content=" " + _items(body[first + 3:items_end]))]
    return _paragraph(_cut(children, WORD_LIMIT)), body


def is_sentence_end(text: str, end: int) -> bool:
    """Return whether the full stop (or !, ?, …) just before `end` in `text` ends a sentence: not after an
    initial ("Josh C."), an honorific or abbreviation ("Dr.", "e.g.", "pp.", "vol."), nor dotted capitals
    ("U.S."), nor before a lowercase word. Decimals and versions ("3.11") never match: no space follows."""
    mark = text[:end].rstrip("\"')]”’")
    if not mark.endswith("."):
        return True
    following = text[end:].lstrip()
    if following[:1].islower():
        return False
    found = _LAST_WORD().search(mark[:-1])
    word = found.group(1).lstrip("\"'([“‘").lower() if found else ""
    if not word:
        return True
    if len(word) == 1 and word.isalpha():  # an initial
        return False
    if re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):  # U.S, e.g, i.e, a.m
        return False
    return word not in _ABBREVIATIONS


def _first_paragraph(body: list[Token]) -> int | None:
    """Return the index of the first top-level paragraph with words, else of the first one anywhere (in a list
    item or a quote), else None. Code, tables and headings are never a summary."""
    fallback = None
    for index, token in enumerate(body):
        if token.type != "paragraph_open" or not _text(body[index + 1].children).strip():
            continue
        if token.level == 0:
            return index
        if fallback is None:
            fallback = index
    return fallback


def _list_end(body: list[Token], at: int) -> int | None:
    """Return the index after the list that starts at `at` (a top-level list), else None."""
    if at >= len(body) or body[at].type not in {"bullet_list_open", "ordered_list_open"}:
        return None
    close = body[at].type.replace("_open", "_close")
    level = body[at].level
    for index in range(at + 1, len(body)):
        if body[index].type == close and body[index].level == level:
            return index + 1
    return None


def _text(children: list[Token] | None) -> str:
    return "".join(c.content for c in children or () if c.type in {"text", "code_inline"})


def _word_count(children: list[Token] | None) -> int:
    return len(_text(children).split())


def _list_words(tokens: list[Token]) -> int:
    return sum(_word_count(t.children) for t in tokens if t.type == "inline")


def _items(tokens: list[Token]) -> str:
    """Return the first line of each item of a list as one sentence: `a; b; c.`"""
    items = []
    for index, token in enumerate(tokens):
        if token.type == "list_item_open" and token.level == tokens[0].level + 1:
            inline = next((tokens[at] for at in range(index, len(tokens)) if tokens[at].type == "inline"), None)
            text = " ".join(_text(inline.children if inline else None).split()).rstrip(".;,")
            if text:
                items.append(text)
    return "; ".join(items) + "." if items else ""


def _cut(children: list[Token], limit: int) -> list[Token]:
    """Return inline tokens cut after the last sentence that ends within `limit` words (or at the limit, with
    an ellipsis, when no sentence ends that early); open links and emphasis are closed again."""
    words = 0
    best: tuple[int, int] | None = None  # (child index, end offset) of the last sentence end within the limit
    for index, child in enumerate(children):
        if child.type not in {"text", "code_inline"}:
            continue
        ends = [m.end() for m in re.finditer(r"\S+", child.content)]  # where each word of the token ends
        if child.type == "text":
            for match in _sentence_end().finditer(child.content):
                if not is_sentence_end(child.content, match.end()):
                    continue
                within = bisect.bisect_right(ends, match.end())  # words of this token up to the sentence end
                if words + within > limit:
                    break
                best = (index, match.end())
        if words + len(ends) > limit:
            if best is None:
                best = (index, ends[limit - words - 1] if limit > words else 0)
                return _close([*children[:index], _shortened(children[index], best[1], ellipsis=True)])
            return _close([*children[:best[0]], _shortened(children[best[0]], best[1], ellipsis=True)])
        words += len(ends)
    return children


def _list_summary(body: list[Token]) -> list[Token]:
    """Return the summary of a section that is only a list: its first items, then an ellipsis if more follow."""
    end = _list_end(body, 0) or len(body)
    items = [t for t in body[:end] if t.type == "list_item_open" and t.level == body[0].level + 1]
    if len(items) > LIST_ITEMS:
        end = body.index(items[LIST_ITEMS])
    text = _items(body[:end])
    if not text:
        return []
    if len(items) > LIST_ITEMS or end < len(body) and _list_end(body, 0) != len(body):
        text = text.removesuffix(".") + "; …"
    return _paragraph(_cut([Token("text", "", 0, content=text)], WORD_LIMIT))


def _shortened(token: Token, offset: int, *, ellipsis: bool) -> Token:
    copy = Token(token.type, token.tag, token.nesting, content=token.content[:offset].rstrip())
    if ellipsis:
        copy.content += " …"
    return copy


def _close(children: list[Token]) -> list[Token]:
    """Return `children` followed by the closing tokens of every element they leave open."""
    open_tokens: list[Token] = []
    for child in children:
        if child.nesting == 1:
            open_tokens.append(child)
        elif child.nesting == -1 and open_tokens:
            open_tokens.pop()
    closing = []
    for opened in reversed(open_tokens):
        token = Token(opened.type.replace("_open", "_close"), opened.tag, -1, markup=opened.markup)
        token.meta = dict(opened.meta)
        closing.append(token)
    return [*children, *closing]


def _paragraph(children: list[Token]) -> list[Token]:
    inline = Token("inline", "", 0, children=children, content="")
    # class="excerpt": a shortened copy; the detail below holds the paragraph whole.
    return [Token("paragraph_open", "p", 1, block=True, attrs={"class": "excerpt"}), inline,
            Token("paragraph_close", "p", -1, block=True)]
