"""The reference list: the numbered entries `N. Title … URL` of the report's final references section."""

from __future__ import annotations

import re

from markdown_it.token import Token

from graphsite.builder.markdown import plain_text, words
from graphsite.builder.model import Reference

# The title names the list itself ("References", "7. Sources", "Reference list (60+ citations)"), not a section
# about some sources ("Primary sources", "Data sources"), whose numbered list is the author's text.
REFERENCES_TITLE = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s+)?(?:references?|reference list|bibliography|sources|citations"
                              r"|works cited)\b", re.IGNORECASE)
_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.\-]*:[^>\s]+)>")
_BARE = re.compile(r"(?<![\w/:])([a-zA-Z][a-zA-Z0-9+.\-]*://[^\s<>]+|mailto:[^\s<>]+|www\.[^\s<>]+)")
_MARKER = re.compile(r"^\s*\d+[.)]\s*")


def is_references_title(title: str) -> bool:
    return bool(REFERENCES_TITLE.search(title))


def entry_url(raw: str) -> str:
    """Return the last URL written in a reference entry's Markdown (a link, an autolink or a bare URL)."""
    found: list[tuple[int, str]] = []
    for pattern in (_MD_LINK, _AUTOLINK):
        for match in pattern.finditer(raw):
            found.append((match.start(), match.group(1)))
            raw = raw[: match.start()] + " " * (match.end() - match.start()) + raw[match.end():]
    for match in _BARE.finditer(raw):
        found.append((match.start(), _trim(match.group(1))))
    return max(found)[1] if found else ""


def _trim(url: str) -> str:
    """Return a bare URL without the punctuation that ends the sentence around it (`...` placeholders stay)."""
    while True:
        before = url
        url = url.rstrip("*_`'\"")
        if url.endswith(")") and url.count(")") > url.count("("):
            url = url[:-1]
        if len(url) > 1 and url[-1] in ".,;:!?" and url[-2] != ".":
            url = url[:-1]
        if url == before:
            return url


def entry_title(tokens: list[Token], url: str) -> str:
    """Return the readable title of a reference entry: its text without the URL and trailing punctuation."""
    text = " ".join(plain_text(t.children) for t in tokens if t.type == "inline")
    if url:
        text = text.replace(url, " ")
    text = " ".join(text.split())
    return text.rstrip(" .,;:—–-").strip() or url


def collect_references(tokens: list[Token], lines: list[str], body_line: int) -> list[Reference]:
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
        start_line, stop_line = token.map or (0, 0)
        raw = _MARKER.sub("", "\n".join(lines[start_line:stop_line]), count=1)
        url = entry_url(raw)
        references.append(Reference(int(token.info), url, entry_title(tokens[index:end], url),
                                    start_line + body_line, group))
    return references


def _closing(tokens: list[Token], start: int) -> int:
    level = tokens[start].level
    for index in range(start + 1, len(tokens)):
        if tokens[index].type == "list_item_close" and tokens[index].level == level:
            return index
    return len(tokens)
