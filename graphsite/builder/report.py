"""Markdown source → Report: the intro, the sections (summary + detail), the references, the notes."""

from __future__ import annotations

import bisect
import dataclasses
import html
import re
from pathlib import Path
from typing import cast

from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType

from graphsite.builder.markdown import (
    HEADING_NUMBER,
    Parsed,
    is_banner,
    is_references_title,
    markdown,
    parse,
    text_html,
    words,
)
from graphsite.builder.model import FrontMatter, InlineCitation, Reference, Report, Section
from graphsite.builder.references import collect_references
from graphsite.builder.sanitize import clean_html, is_outbound
from graphsite.builder.section_summary import summarise
from graphsite.builder.source import DEFAULT_MAX_BYTES, Source, read_source
from graphsite.builder.tags import CLEAN_TAG, RAW_TAG
from graphsite.patterns import lazy_pattern
from graphsite.values import frozen

_URL_ATTRIBUTE = re.compile(r'\s(href|src)="([^"]*)"')
_ID_ATTRIBUTE = lazy_pattern(r'\s(id|name)="([^"]*)"')


def read_report(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Report:
    """Return the report at `path`, or raise SourceError."""
    return report_from_source(read_source(path, max_bytes=max_bytes))


def render(tokens: list[Token], env: EnvType) -> str:
    """Return block tokens as sanitised HTML."""
    if not tokens:
        return ""
    md = markdown()
    return clean_html(md.renderer.render(tokens, md.options, env)).strip()


def _render_inline(children: list[Token], env: EnvType) -> str:
    md = markdown()
    renderer = cast(RendererHTML, md.renderer)
    return clean_html(renderer.renderInline(children, md.options, env)).strip()


def _notes_start(tokens: list[Token]) -> int:
    return next((i for i, t in enumerate(tokens) if t.type == "footnote_block_open"), len(tokens))


def _strip_number(children: list[Token]) -> list[Token]:
    """Return a heading's inline tokens without its leading `3.` (the page shows it as §3)."""
    if children and children[0].type == "text":
        first = dataclasses.replace(children[0], content=HEADING_NUMBER.sub("", children[0].content).lstrip())
        return [first, *children[1:]]
    return children


@frozen
class _Layout:
    """Where the parts of the body are, as token ranges: the sections, the reference list, the notes."""

    sections: list[tuple[int, int]]  # (heading_open index, end) of every section
    references: tuple[int, int] | None  # the reference list's heading and end, wherever it sits
    notes: int  # index of the footnote block (len(tokens) without one)


def _layout(parsed: Parsed) -> _Layout:
    tokens = parsed.tokens
    notes = _notes_start(tokens)
    level_of = {h.token_index: h.level for h in parsed.headings}
    tops = [i for i in range(notes) if tokens[i].type == "heading_open" and tokens[i].level == 0]
    levels = {parsed.section_level, parsed.group_level}
    # A heading without a word (an image, a badge, an emoji) names no section: it stays in the text around it.
    starts = [i for i in tops if level_of[i] in levels and i != parsed.title_index
              and any(c.isalnum() for c in words(tokens[i + 1].children))]
    sections = list(zip(starts, [*starts[1:], notes], strict=False))
    candidates: list[tuple[int, int, int]] = []  # (level, -index, end)
    for index in tops:
        if index == parsed.title_index or not is_references_title(words(tokens[index + 1].children)):
            continue
        # The list runs to the next heading at its own level or a section's, whichever is higher.
        ceiling = max(level_of[index], parsed.section_level)
        end = next((i for i in tops if i > index and level_of[i] <= ceiling), notes)
        if any(t.type == "ordered_list_open" for t in tokens[index:end]):
            candidates.append((level_of[index], -index, end))
    # The highest heading that holds a list (not one of its `###` groups), the last one of that level.
    best = min(candidates, default=None)
    references = (-best[1], best[2]) if best is not None else None
    return _Layout(sections, references, notes)


def _section(parsed: Parsed, bounds: tuple[int, int], index: str, number: str, body_line: int,
             cut: tuple[int, int] | None) -> Section:
    tokens, env = parsed.tokens, parsed.env
    start, end = bounds
    inline = tokens[start + 1]
    body = tokens[start + 3:end]
    if cut is not None and start < cut[0] < end:  # the reference list sits inside this section
        body = tokens[start + 3:cut[0]] + tokens[cut[1]:end]
    while body and body[-1].type == "hr" and body[-1].level == 0:
        body = body[:-1]  # a rule that closes a section only separates it from the next: the page has borders
    summary, body = summarise(body)
    title_children = _strip_number(inline.children or []) if number else inline.children or []
    return Section(
        index=index,
        title=words(title_children),
        id=str(tokens[start].attrGet("id")),
        summary_html=render(summary, env),
        detail_html=render(body, env),
        line=(tokens[start].map or (0, 0))[0] + body_line,
        title_html=_render_inline(title_children, env),
        outline=tuple((h.id, h.text) for h in parsed.headings_between(start, end)
                      if h.level == parsed.section_level + 1),
    )


@frozen
class _References:
    """The reference section as the footer shows it."""

    entries: tuple[Reference, ...] = ()
    id: str = ""
    title: str = ""
    intro_html: str = ""
    after_html: str = ""


def _references(parsed: Parsed, bounds: tuple[int, int] | None, source: Source) -> _References:
    if bounds is None:
        return _References()
    tokens = parsed.tokens
    start, end = bounds
    before, after = _prose(tokens[start + 3:end])
    entries = collect_references(tokens[start + 3:end], source.body_line)
    return _References(tuple(entries), str(tokens[start].attrGet("id")), words(tokens[start + 1].children),
                       render(before, parsed.env), render(after, parsed.env))


def _sections(parsed: Parsed, layout: _Layout, body_line: int) -> list[Section]:
    numbers = {h.token_index: h.number for h in parsed.headings}
    shown = [b for b in layout.sections if layout.references is None or b[0] != layout.references[0]]
    numbered = any(numbers.get(start) for start, _ in shown)
    sections = []
    for ordinal, bounds in enumerate(shown, start=1):
        number = numbers.get(bounds[0], "")
        index = f"§{number}" if number else ("§" if numbered else f"§{ordinal}")
        sections.append(_section(parsed, bounds, index, number, body_line, layout.references))
    return sections


def _intro(parsed: Parsed, layout: _Layout) -> list[Token]:
    tokens = parsed.tokens
    end = layout.sections[0][0] if layout.sections else layout.notes
    title = parsed.title_index
    kept = [(i, t) for i, t in enumerate(tokens[:end]) if title is None or not title <= i < title + 3]
    if layout.references is not None:
        low, high = layout.references
        kept = [(i, t) for i, t in kept if not low <= i < high]
    return [t for _, t in kept]


def report_from_source(source: Source) -> Report:
    """Return the Report of a decoded source (pure: no file is read or written)."""
    parsed = parse(source.body, source.body_line, titled=bool(source.front.title))
    layout = _layout(parsed)
    # The title: the front matter's, else the `#` heading that titles the report; when the `#` headings are
    # the sections themselves, none of them names the whole report.
    title_heading = next((h for h in parsed.headings if h.token_index == parsed.title_index), None)
    if title_heading is None:
        title_heading = next((h for h in parsed.headings
                              if h.level == 1 and not is_banner(parsed.tokens[h.token_index + 1].children)), None)
    first_heading = next((h.text for h in parsed.headings if not is_banner(parsed.tokens[h.token_index + 1].children)
                          and not _CONTENTS.match(h.text)), "")
    if not any(h.level == 1 for h in parsed.headings):  # no `#` title: a logo before the first heading names it
        first_heading = _logo_alt(parsed) or first_heading
    title = (source.front.title or (title_heading.text if title_heading else "") or source.front.headline
             or first_heading or "Untitled report")  # never the file's name: it is the author's, not the reader's
    # A front-matter title that differs from the document's own `# H1` does not hide it: the H1 is the subtitle.
    subtitle = title_heading if (title_heading is not None and title_heading.token_index == parsed.title_index
                                 and source.front.title and _key(source.front.title) != _key(title_heading.text)) \
        else None
    references = _references(parsed, layout.references, source)
    citations = _placed(parsed, layout, references.id)
    sources = _sources(citations)
    sections = [dataclasses.replace(s, sources=sources.get(s.id, ()))
                for s in _sections(parsed, layout, source.body_line)]
    intro_html = render(_intro(parsed, layout), parsed.env)
    notes_html = render(parsed.tokens[layout.notes:], parsed.env)
    unique = _UniqueIds()
    intro_html = unique(intro_html)
    sections = [dataclasses.replace(s, summary_html=unique(s.summary_html), detail_html=unique(s.detail_html))
                for s in sections]
    notes_html = unique(notes_html)
    references = dataclasses.replace(references, intro_html=unique(references.intro_html),
                                     after_html=unique(references.after_html))
    pieces = [*map(text_html, _front_texts(source.front)), intro_html,
              *(p for s in sections for p in (s.summary_html, s.detail_html)), notes_html,
              references.intro_html, references.after_html]
    links, images = _outbound(pieces, [r.url for r in references.entries])
    return Report(
        path=source.path, front=source.front, title=title, sections=tuple(sections),
        subtitle=subtitle.text if subtitle else "",
        title_id=title_heading.id if title_heading and title_heading.token_index == parsed.title_index else "",
        citations=tuple(citations), references=references.entries, links=tuple(links), images=tuple(images),
        intro_html=intro_html, notes_html=notes_html, references_id=references.id,
        references_title=references.title, references_intro_html=references.intro_html,
        references_after_html=references.after_html,
        anchors=tuple((h.number, h.id) for h in parsed.headings if h.number),
        warnings=(*source.warnings, *parsed.warnings), written_links=parsed.written,
        heading_ids=parsed.heading_ids(), raw_ids=parsed.raw_ids, note_ids=parsed.note_ids,
    )


# A table of contents' heading names no document.
_CONTENTS = re.compile(r"^(?:table of )?contents$|^toc$", re.IGNORECASE)
_logo_src = lazy_pattern(r"""\ssrc\s*=\s*["']?[^"'\s>]*logo[^"'\s>/]*["'\s>]?""", re.IGNORECASE)
_alt = lazy_pattern(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def _logo_alt(parsed: Parsed) -> str:
    """Return the alt text of the logo before the first heading: the first image whose file is named `logo`
    (an awesome list's `<img src="media/logo.svg" alt="Awesome Node.js">`, zoxide's "zoxide logo"), which
    stands for the title; a sponsor's banner is not named so. "" when there is none."""
    for token in parsed.tokens:
        if token.type == "heading_open":
            return ""
        if token.type == "html_block" and "logo" in token.content.lower():
            for tag in RAW_TAG.finditer(token.content):
                if tag.group(2).lower() != "img" or not _logo_src().search(tag.group(3)):
                    continue
                alt = _alt().search(tag.group(3))
                text = " ".join((alt.group(1) or alt.group(2) or "").split()) if alt else ""
                text = re.sub(r"\s+logo$", "", text, flags=re.IGNORECASE)
                if any(c.isalnum() for c in text):
                    return text
    return ""


def _key(title: str) -> str:
    """Return a title as compared with another: case and spacing aside."""
    return " ".join(title.casefold().split())


class _UniqueIds:
    """Drops an id (or name) already used earlier on the page. An HTML parser repeats an unclosed `<a id=x>`
    in the blocks after it (it reconstructs open formatting elements), so the sanitised HTML can hold a copy
    of a raw id that was unique in the Markdown; the first one is the author's, later ones are the parser's."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, fragment: str) -> str:
        if 'id="' not in fragment and 'name="' not in fragment:
            return fragment
        # In tags only: `<a id="x">` written in a code span is text, and stays whole.
        ids = _ID_ATTRIBUTE()
        return CLEAN_TAG.sub(lambda tag: ids.sub(self._keep_first, tag.group(0)), fragment)

    def _keep_first(self, match: re.Match[str]) -> str:
        key = (match.group(1), match.group(2))
        if key in self.seen:
            return ""
        self.seen.add(key)
        return match.group(0)


def _prose(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """Return a reference section's text without its ordered lists and group headings: what comes before
    the first list, and what comes after it (a closing remark, a heading with no list under it: `### 9.1
    Extra` keeps its text and its id)."""
    groups: set[int] = set()  # the headings whose next block at their level is a list: its group's name
    listed = False
    for index in range(len(tokens) - 1, -1, -1):
        if tokens[index].level == 0 and tokens[index].type == "ordered_list_open":
            listed = True
        elif tokens[index].level == 0 and tokens[index].type == "heading_open":
            if listed:
                groups.add(index)
            listed = False
    before: list[Token] = []
    after: list[Token] = []
    kept, skip_until = before, None
    for index, token in enumerate(tokens):
        if skip_until is not None:
            if token.type == skip_until and token.level == 0:
                skip_until = None
            continue
        if token.level == 0 and (token.type == "ordered_list_open" or index in groups):
            skip_until = token.type.replace("_open", "_close")
            kept = after
            continue
        kept.append(token)
    while after and after[0].type == "hr":
        after = after[1:]
    return before, after


def _placed(parsed: Parsed, layout: _Layout, references_id: str) -> list[InlineCitation]:
    """Return the citations, each with the id of the section (or `intro`, `notes`, the reference list) it
    appears in (a binary search per citation: linear in the report's size)."""
    starts = [start for start, _ in layout.sections]
    ids = [str(parsed.tokens[start].attrGet("id")) for start in starts]
    placed = []
    for citation, index in parsed.citations:
        if index >= layout.notes:
            owner = "notes"
        elif layout.references is not None and layout.references[0] <= index < layout.references[1]:
            owner = references_id
        else:
            at = bisect.bisect_right(starts, index) - 1
            owner = ids[at] if at >= 0 else "intro"
        placed.append(dataclasses.replace(citation, section_id=owner))
    return placed


def _sources(citations: list[InlineCitation]) -> dict[str, tuple[int, ...]]:
    """Return, per section id, the citation numbers it cites, in order of first use."""
    numbers: dict[str, dict[int, None]] = {}
    for citation in citations:
        numbers.setdefault(citation.section_id, {})[citation.number] = None
    return {section: tuple(found) for section, found in numbers.items()}


def _front_texts(front: FrontMatter) -> list[str]:
    """Return the front-matter texts the page renders as inline Markdown (they may hold links), in page order."""
    texts = [front.lede]
    for card in front.floors:
        texts += [card.definition, *card.critique]
    return [*texts, front.counter_frame.quote] if front.counter_frame else texts


def _outbound(pieces: list[str], bare: list[str]) -> tuple[list[str], list[str]]:
    """Return the distinct http(s) URLs of links and images in the HTML `pieces` and the `bare` URLs, in order
    of first use, and the distinct http(s) image URLs among them."""
    urls: dict[str, None] = {}
    images: dict[str, None] = {}
    for piece in pieces:
        if "=" not in piece:
            continue
        found = (pair for tag in CLEAN_TAG.finditer(piece) for pair in _URL_ATTRIBUTE.findall(tag.group(0)))
        for attribute, value in found:
            url = html.unescape(value)
            if is_outbound(url):
                urls.setdefault(url, None)
                if attribute == "src":
                    images.setdefault(url, None)
    for url in bare:
        if is_outbound(url):
            urls.setdefault(url, None)
    return list(urls), list(images)
