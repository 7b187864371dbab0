"""Markdown → annotated markdown-it tokens: heading ids and numbers, citations, § cross-references.

The parser is CommonMark plus GFM tables, strikethrough, autolinks and footnotes. After parsing, the token
stream is annotated in place: every heading gets a stable, unique id; every `[[N](URL)]` (and every list
`[[3](u1), [11](u2)]`) becomes a citation with its Markdown line; every `§3.2` in running text becomes a link
to the heading numbered 3.2; every link to a scheme outside http, https, mailto, relative or #fragment loses
its href.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common import normalize_url
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.footnote import footnote_plugin

from graphsite.builder.footnotes import footnote_ids, install_footnote_tail, unreferenced_warnings
from graphsite.builder.leftovers import remove_leftovers
from graphsite.builder.model import Finding, InlineCitation
from graphsite.builder.rawhtml import Guard, guard_tokens, install_block_rule, unclosed_warnings
from graphsite.builder.sanitize import RESERVED_IDS, clean_html, is_reserved_id, is_safe_url
from graphsite.builder.targets import Targets, resolve_fragments, slugify
from graphsite.builder.tasklists import install_tasklists
from graphsite.builder.tex import convert_math, install_math
from graphsite.builder.written import written_links
from graphsite.patterns import lazy_pattern
from graphsite.urls import memoise_short
from graphsite.values import frozen

# A heading's own number: `3.` or `3.2` or `3.2.` before the title; `2026 roadmap` starts with a year, not a number.
HEADING_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)+|\d+(?=\.\s))\.?(?=\s)")
_XREF = lazy_pattern(r"§\s?(\d+(?:\.\d+)*)")
_SEPARATOR = lazy_pattern(r"\s*[,;]\s*")
_RESERVED_PATTERN = re.compile(r"^(?:ref-\d+|fn\d+|fnref\d+(?::\d+)?|sec-\d+)$")
_ALIGN = lazy_pattern(r"text-align:\s*(left|center|right)")
# GFM's extended autolinks (www. and http(s)://), not linkify's fuzzy bare domains: what GitHub links, no more.
_AUTOLINK = re.compile(r"(?<![\w/.@:-])(?:https?://|www\.)[\w-][^\s<]*", re.IGNORECASE)
_RAW_A_OPEN = lazy_pattern(r"<a[\s>]", re.IGNORECASE)
_RAW_A_CLOSE = lazy_pattern(r"</a\s*>", re.IGNORECASE)
_ENTITY_TAIL = lazy_pattern(r"&[a-zA-Z0-9]{1,32};$")
# The title names the list itself ("References", "7. Sources", "Reference list (60+ citations)"), not a section
# about some sources ("Primary sources", "Data sources"), whose numbered list is the author's text.
REFERENCES_TITLE = re.compile(r"^(?:\d{1,9}(?:\.\d{1,9}){0,8}\.?\s+)?(?:references?|reference list|bibliography|sources"
                              r"|citations|works cited)\b", re.IGNORECASE)
# Blocks nested deeper than this are not parsed (markdown-it stops there); a report that reaches it is warned.
MAX_NESTING = 40


@frozen
class Heading:
    level: int
    number: str  # "3.2" when the heading text starts with a number, else ""
    id: str
    text: str
    line: int  # 1-based, in the body
    token_index: int


@dataclass
class Parsed:
    """The annotated token stream of one body and what the annotation found."""

    tokens: list[Token]
    env: dict[str, Any]
    headings: list[Heading] = field(default_factory=list)
    citations: list[tuple[InlineCitation, int]] = field(default_factory=list)  # (citation, token index)
    warnings: list[Finding] = field(default_factory=list)
    section_level: int = 2  # the heading level of the report's sections (`#` when they are numbered `#`)
    group_level: int | None = None  # the level above, when its few huge sections are sectioned one level down
    title_index: int | None = None  # token index of the `#` heading that is the report's title, if any
    written: tuple[tuple[str, int], ...] = ()  # (href as written, file line) of every link, before annotation
    raw_ids: tuple[str, ...] = ()  # the ids (and <a name>s) of raw HTML kept on the page, sorted
    note_ids: tuple[str, ...] = ()  # the footnotes' ids (`fn1`) and their references' (`fnref1`, `fnref1:1`)

    def heading_ids(self) -> tuple[str, ...]:
        """Return the id of every heading, in order."""
        return tuple(h.id for h in self.headings)

    def headings_between(self, start: int, end: int) -> list[Heading]:
        """Return the headings after token `start` and before token `end` (a bisection: headings are in order)."""
        indexes = self.__dict__.get("_heading_indexes")
        if indexes is None:
            indexes = self.__dict__["_heading_indexes"] = [h.token_index for h in self.headings]
        return self.headings[bisect.bisect_right(indexes, start):bisect.bisect_left(indexes, end)]


class _Markdown(MarkdownIt):
    """markdown-it that parses every link, whatever its scheme, so that citations keep their URL for the
    integrity check; annotate() then takes the href away from the unsafe ones, and the sanitiser checks again."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return True

    def normalizeLink(self, url: str) -> str:  # noqa: N802 (markdown-it's name)
        """Return markdown-it's own normalisation of a link's destination, once per distinct destination: a
        report links the same sources again and again, and each normalisation parses and encodes the URL."""
        return _normalized_link(url)


@memoise_short  # a data: image's destination can be megabytes: `serve` would keep every one
def _normalized_link(url: str) -> str:
    return normalize_url.normalizeLink(url)


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """Return the one configured parser (building it costs more than parsing a report)."""
    md = _Markdown("commonmark", {"html": True, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"]).use(footnote_plugin).use(install_tasklists)
    install_block_rule(md)
    install_footnote_tail(md)
    install_math(md)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("link_close", _render_link_close)
    return md


@lru_cache(maxsize=1)
def _text_markdown() -> MarkdownIt:
    # Front matter is text: raw HTML in it is shown, not interpreted; links keep markdown-it's own checks.
    # No images: they would load from origins the CSP (computed from the body) does not allow.
    return MarkdownIt("commonmark", {"html": False}).disable("image")


def text_html(text: str) -> str:
    """Return front-matter text as sanitised inline HTML: emphasis, code and links; everything else escaped."""
    return clean_html(_text_markdown().renderInline(text)) if text else ""


def _render_link_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    prefix = '<sup class="cite">' if tokens[idx].meta.get("cite") else ""
    return prefix + self.renderToken(tokens, idx, options, env)


def _render_link_close(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    suffix = "</sup>" if tokens[idx].meta.get("cite") else ""
    return self.renderToken(tokens, idx, options, env) + suffix


def plain_text(children: list[Token] | None) -> str:
    """Return the visible text of inline tokens (a line break as a space), up to a heading's permalink."""
    parts = []
    for token in children or ():
        if token.type == "link_open" and token.attrGet("class") == "permalink":
            break
        if token.type in {"text", "code_inline", "math_inline", "math_inline_double"}:  # a formula as its TeX
            parts.append(token.content)
        elif token.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
    return "".join(parts)


def words(children: list[Token] | None) -> str:
    """Return the visible text of inline tokens with every run of whitespace as one space."""
    return " ".join(plain_text(children).split())


class Slugger:
    """Unique ids in document order: the second `Setup` becomes `setup-1`, as on GitHub."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def unique(self, text: str) -> str:
        base = slugify(text)
        if base in RESERVED_IDS or _RESERVED_PATTERN.match(base):
            base += "-h"
        slug, count = base, self.seen.get(base, 0)
        while slug in self.seen or slug in RESERVED_IDS:
            count += 1
            slug = f"{base}-{count}"
        self.seen[base] = count
        self.seen[slug] = 0
        return slug


def parse(body: str, body_line: int = 1, *, titled: bool = False) -> Parsed:
    """Return the annotated tokens of `body`; `body_line` is the file line of its first line, `titled` whether
    the front matter names the document (then no heading after the body's start is needed as its title)."""
    env: dict[str, Any] = {}
    tokens, leftovers = remove_leftovers(markdown().parse(body, env), body_line)
    parsed = Parsed(tokens, env, written=written_links(tokens, body, body_line, markdown()))
    _section_level(parsed, titled)
    _assign_heading_ids(parsed, body_line)
    guard = Guard((h.id for h in parsed.headings), is_reserved_id)
    guard_tokens(parsed.tokens, guard, body_line)
    parsed.raw_ids = tuple(sorted(guard.raw_ids))
    found = [*unclosed_warnings(env, body_line), *guard.warnings, *_nesting(parsed.tokens, body_line),
             *unreferenced_warnings(env, body_line), *leftovers, *convert_math(tokens, body_line)]
    parsed.warnings += sorted(found, key=lambda f: f.line or 0)
    numbers: dict[str, str] = {}
    for heading in parsed.headings:
        if heading.number:
            numbers.setdefault(heading.number, heading.id)
    for index, token in enumerate(parsed.tokens):
        if token.type == "inline" and token.children:
            line = (token.map[0] if token.map else 0) + body_line
            _annotate_inline(parsed, token, index, line, numbers)
        elif token.type in {"th_open", "td_open"}:
            _align_class(token)
    parsed.note_ids = footnote_ids(env)
    missing = resolve_fragments(parsed.tokens, Targets([*parsed.heading_ids(), *parsed.raw_ids, *parsed.note_ids]),
                                body_line)
    if missing:
        parsed.warnings = sorted([*parsed.warnings, *missing], key=lambda f: f.line or 0)
    return parsed


def is_references_title(title: str) -> bool:
    """Return whether a heading's text names a reference list ("References", "7. Sources", …)."""
    return bool(REFERENCES_TITLE.search(title))


def _heading_number(token: Token) -> str:
    match = HEADING_NUMBER.match(plain_text(token.children).strip())
    return match.group(1) if match else ""


def is_banner(children: list[Token] | None) -> bool:
    """Return whether a heading is made only of links, images and emoji (a sponsor banner, a logo, a badge
    row): no word of its own outside a link, so it names no document."""
    depth = 0
    for token in children or ():
        if token.type == "link_open" and token.attrGet("class") == "permalink":
            break
        depth += _link_step(token)
        if depth <= 0 and token.type in {"text", "code_inline"} and any(c.isalnum() for c in token.content):
            return False
    return True


def _section_level(parsed: Parsed, titled: bool) -> None:
    """Decide which heading level holds the report's sections, and which `#` heading (if any) is its title.

    One unnumbered `#` heading is the title and the sections are the next level down (usually `##`); a `#`
    heading followed by numbered `#` headings is the title of a report sectioned with `#`; several `#`
    headings, or numbered ones, are the sections themselves. A lone `#` among `##` sections in a document
    already titled (see `_lone_heading`) is read as one more `##`. A banner heading (links, images, emoji) is
    never the title. When the sections are few and huge (see `_few_and_huge`), the level below is
    sectioned too: each of those headings starts a section, and the few ones above stay as sections of
    their own (their text before the first sub-heading).
    """
    tokens = parsed.tokens
    tops = [i for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0
            and not is_references_title(plain_text(tokens[i + 1].children).strip())]
    named = [i for i in tops if not is_banner(tokens[i + 1].children)]
    ones = [i for i in named if tokens[i].tag == "h1"]
    first = ones[0] if ones and ones[0] == named[0] and not _heading_number(tokens[ones[0] + 1]) else None
    title = first if all(_heading_number(tokens[i + 1]) for i in ones[1:]) else None
    lone = _lone_heading(tokens, named, first) if title is None and (first is not None or titled) else None
    if lone is not None:
        title = first
        tokens[lone].tag = tokens[lone + 2].tag = "h2"
    levels = [int(tokens[i].tag[1]) for i in tops if i != title]
    parsed.title_index = title
    parsed.section_level = min(levels) if levels else 2
    if _few_and_huge(tokens, [i for i in tops if i != title], parsed.section_level):
        parsed.group_level = parsed.section_level
        parsed.section_level += 1


# A lone `#` stands among at least this many `##` sections (one of them before it) to be read as one of them.
LONE_AMONG = 3


def _lone_heading(tokens: list[Token], named: list[int], title: int | None) -> int | None:
    """Return the one unnumbered `#` heading that stands among `##` sections of a document titled already (by
    the `#` heading it opens with, or by its front matter), else None: a Jekyll post whose one `#` in the middle
    would otherwise make `#` the section level and fold every `##` after it into one section. Two or more `#`
    are the document's parts, and a numbered `#` (`# 2. Design`) its structure: they stay sections."""
    others = [i for i in named if tokens[i].tag == "h1" and i != title]
    if len(others) != 1 or _heading_number(tokens[others[0] + 1]):
        return None
    twos = [i for i in named if tokens[i].tag == "h2"]
    return others[0] if len(twos) >= LONE_AMONG and twos[0] < others[0] else None


# Sections are "few and huge" when there are at most FEW of them and one holds more than HUGE_WORDS words
# under at least SPLIT_HEADINGS headings of the level below (awesome-nodejs: six `##`, one of them holding 45
# `###` categories): one accordion of 8,000 words is no summary. The system-design primer's 30 `##` are not few.
FEW = 6
HUGE_WORDS = 3000
SPLIT_HEADINGS = 6


def _few_and_huge(tokens: list[Token], tops: list[int], level: int) -> bool:
    starts = [i for i in tops if int(tokens[i].tag[1]) == level]
    if not starts or len(starts) > FEW or level >= 6:
        return False
    below = f"h{level + 1}"
    for start, end in zip(starts, [*starts[1:], len(tokens)], strict=False):
        inner = [i for i in tops if start < i < end]
        if any(int(tokens[i].tag[1]) <= level for i in inner):
            end = min(i for i in inner if int(tokens[i].tag[1]) <= level)
        headings = sum(1 for i in inner if i < end and tokens[i].tag == below)
        size = sum(len(t.content.split()) for t in tokens[start:end] if t.type == "inline")
        if headings >= SPLIT_HEADINGS and size > HUGE_WORDS:
            return True
    return False


def _nesting(tokens: list[Token], body_line: int) -> list[Finding]:
    """Return a warning where blocks nest deeper than the parser follows them: markdown-it leaves the innermost
    container empty there (its content is not shown)."""
    deepest = next((t for t, after in zip(tokens, tokens[1:], strict=False)
                    if t.nesting == 1 and t.level == MAX_NESTING - 1 and after.nesting == -1), None)
    if deepest is None:
        return []
    line = (deepest.map[0] if deepest.map else 0) + body_line
    return [Finding("nesting-too-deep", f"blocks nest more than {MAX_NESTING - 1} levels deep here; the "
                    "deeper content is not shown", line=line)]


def _assign_heading_ids(parsed: Parsed, body_line: int) -> None:
    slugger = Slugger()
    tokens = parsed.tokens
    shift = 2 - parsed.section_level  # the page shows sections as <h2>: subsections follow from <h3>
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[index + 1]
        text = plain_text(inline.children).strip()
        match = HEADING_NUMBER.match(text)
        heading_id = slugger.unique(text)
        token.attrSet("id", heading_id)
        level = int(token.tag[1])
        line = (token.map[0] if token.map else 0) + body_line
        parsed.headings.append(Heading(level, match.group(1) if match else "", heading_id, text, line, index))
        if shift and level > parsed.section_level:
            token.tag = tokens[index + 2].tag = f"h{min(6, max(3, level + shift))}"
        # sections get their permalink from the template
        if level not in {parsed.section_level, parsed.group_level} or token.level != 0:
            inline.children = [*(inline.children or []), *_permalink(heading_id)]


def _permalink(target: str) -> list[Token]:
    space = Token("text", "", 0, content=" ")
    link = Token("link_open", "a", 1, attrs={"class": "permalink", "href": f"#{target}",
                                             "aria-label": "Permalink"})
    return [space, link, Token("text", "", 0, content="#"), Token("link_close", "a", -1)]


def _annotate_inline(parsed: Parsed, inline: Token, index: int, line: int, numbers: dict[str, str]) -> None:
    if "http" in inline.content or "www." in inline.content:
        inline.children = _autolink(inline.children or [])
    children = inline.children or []
    _mark_citations(parsed, children, index, line)
    for child in children:
        if child.type == "link_open" and not is_safe_url(str(child.attrGet("href") or "")):
            child.attrs.pop("href", None)
            child.attrSet("class", "neutralised")
    if "§" in inline.content:
        inline.children = _link_xrefs(children, numbers)


def _is_citation(children: list[Token], at: int) -> bool:
    """Return whether `children[at]` opens a `[N](URL)` citation link: a number linking out of the page (a
    number linking to an in-page `#fragment`, `[[1](#note)]`, is an endnote link, not a citation)."""
    return (at + 2 < len(children) and children[at].type == "link_open"
            and not str(children[at].attrGet("href") or "").startswith("#")
            and children[at + 1].type == "text" and children[at + 1].content.isascii()
            and children[at + 1].content.isdigit() and children[at + 2].type == "link_close")


def _citation_group(children: list[Token], start: int) -> tuple[list[int], int | None]:
    """Return the link_open indexes of a `[[N](u), [M](v)]` group opening at `start`, and the index of the
    text that closes it with `]`, or None when the author wrote more than citations inside the brackets
    (`[[21](u), "a note"]`) or mistyped the bracket (`[[17](u))`)."""
    links, at = [], start
    while _is_citation(children, at):
        links.append(at)
        after = at + 3
        text = children[after].content if after < len(children) and children[after].type == "text" else ""
        if text.startswith("]"):
            return links, after
        if _SEPARATOR().fullmatch(text) and _is_citation(children, after + 1):
            at = after + 1
            continue
        break
    return links, None


def _mark_citations(parsed: Parsed, children: list[Token], index: int, line: int) -> None:
    breaks = 0
    for at, child in enumerate(children):
        if child.type in {"softbreak", "hardbreak"}:
            breaks += 1
        if child.type != "text" or not child.content.endswith("[") or not _is_citation(children, at + 1):
            continue
        links, close = _citation_group(children, at + 1)
        if close is not None:  # a clean group: its brackets give way to the superscripts
            child.content = child.content[:-1]
            children[close].content = children[close].content[1:]
        for link in links:
            number = int(children[link + 1].content)
            url = str(children[link].attrGet("href") or "")
            children[link].meta["cite"] = children[link + 2].meta["cite"] = number
            children[link + 1].content = f"[{number}]"
            if link != links[-1]:
                children[link + 3].content = ""  # the separator between two citations
            parsed.citations.append((InlineCitation(number, url, line + breaks), index))


def _link_xrefs(children: list[Token], numbers: dict[str, str]) -> list[Token]:
    """Return `children` with every `§N` whose heading exists turned into a link to it."""
    result: list[Token] = []
    depth = 0
    for child in children:
        depth += _link_step(child)
        if child.type != "text" or depth > 0 or "§" not in child.content:
            result.append(child)
            continue
        position = 0
        for match in _XREF().finditer(child.content):
            target = numbers.get(match.group(1).rstrip("."))
            if target is None:
                continue
            result.append(Token("text", "", 0, content=child.content[position:match.start()]))
            result.append(Token("link_open", "a", 1, attrs={"class": "xref", "href": f"#{target}"}))
            result.append(Token("text", "", 0, content=match.group(0)))
            result.append(Token("link_close", "a", -1))
            position = match.end()
        result.append(Token("text", "", 0, content=child.content[position:]))
    return result


def _link_step(token: Token) -> int:
    """Return +1 when `token` opens a link (Markdown or raw `<a>`), -1 when it closes one, else 0."""
    if token.type == "link_open" or (token.type == "html_inline" and _RAW_A_OPEN().match(token.content)):
        return 1
    if token.type == "link_close" or (token.type == "html_inline" and _RAW_A_CLOSE().match(token.content)):
        return -1
    return 0


def _autolink_end(url: str) -> str:
    """Return `url` without the trailing characters GFM leaves outside an extended autolink (one pass from the
    end, the parenthesis balance kept as a count: linear however long the run of trailing punctuation)."""
    end = len(url)
    surplus = url.count(")") - url.count("(")  # unmatched closing parentheses in url[:end]
    while end:
        last = url[end - 1]
        if last in "?!.,:*_~'\"" or last == ")" and surplus > 0:
            surplus -= last == ")"
            end -= 1
        elif last == ";" and (entity := _ENTITY_TAIL().search(url, max(0, end - 34), end)) is not None:
            surplus -= url.count(")", entity.start(), end) - url.count("(", entity.start(), end)
            end = entity.start()
        else:
            break
    return url[:end]


def _autolink(children: list[Token]) -> list[Token]:
    """Return `children` with bare http(s):// and www. URLs in text (outside links) turned into links."""
    result: list[Token] = []
    depth = 0
    for child in children:
        depth += _link_step(child)
        if child.type != "text" or depth > 0 or not _AUTOLINK.search(child.content):
            result.append(child)
            continue
        position = 0
        for match in _AUTOLINK.finditer(child.content):
            url = _autolink_end(match.group(0))
            if "." not in url.split("//", 1)[-1]:
                continue
            href = url if "://" in url else f"http://{url}"
            result.append(Token("text", "", 0, content=child.content[position:match.start()]))
            link = Token("link_open", "a", 1, attrs={"href": markdown().normalizeLink(href)})
            link.meta["bare"] = match.group(0)  # as written, before GFM's trailing-punctuation rule
            result.append(link)
            result.append(Token("text", "", 0, content=url))
            result.append(Token("link_close", "a", -1))
            position = match.start() + len(url)
        result.append(Token("text", "", 0, content=child.content[position:]))
    return result


def _align_class(token: Token) -> None:
    style = str(token.attrGet("style") or "")
    match = _ALIGN().search(style)
    if match:
        token.attrs.pop("style", None)
        token.attrSet("class", f"al-{match.group(1)}")
