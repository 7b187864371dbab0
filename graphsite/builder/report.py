"""Markdown source → Report: the intro, the `##` sections (summary + detail), the references, the notes."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

from markdown_it.token import Token

from graphsite.builder.markdown import HEADING_NUMBER, Parsed, markdown, parse, text_html, words
from graphsite.builder.model import FrontMatter, InlineCitation, Reference, Report, Section
from graphsite.builder.references import collect_references, is_references_title
from graphsite.builder.sanitize import clean_html, is_outbound
from graphsite.builder.source import Source, read_source

_HREF = re.compile(r'\shref="([^"]*)"')


def read_report(path: Path) -> Report:
    """Return the report at `path`, or raise SourceError."""
    return report_from_source(read_source(path))


def _render(tokens: list[Token], env: dict) -> str:
    if not tokens:
        return ""
    md = markdown()
    return clean_html(md.renderer.render(tokens, md.options, env)).strip()


def _render_inline(children: list[Token], env: dict) -> str:
    md = markdown()
    return clean_html(md.renderer.renderInline(children, md.options, env)).strip()


def _without_footnotes(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    for index, token in enumerate(tokens):
        if token.type == "footnote_block_open":
            return tokens[:index], tokens[index:]
    return tokens, []


def _strip_number(children: list[Token]) -> list[Token]:
    """Return a heading's inline tokens without its leading `3.` (the page shows it as §3)."""
    if children and children[0].type == "text":
        first = dataclasses.replace(children[0], content=HEADING_NUMBER.sub("", children[0].content).lstrip())
        return [first, *children[1:]]
    return children


def _split(tokens: list[Token]) -> tuple[list[Token], list[tuple[int, int]]]:
    """Return the intro tokens and the (start, end) token range of every `##` section."""
    starts = [i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2" and t.level == 0]
    bounds = list(zip(starts, [*starts[1:], len(tokens)], strict=False))
    intro = tokens[: starts[0]] if starts else tokens
    return intro, bounds


def _section(parsed: Parsed, start: int, end: int, index: str, number: str, body_line: int) -> Section:
    tokens, env = parsed.tokens, parsed.env
    inline = tokens[start + 1]
    body = tokens[start + 3:end]
    while body and body[-1].type == "hr" and body[-1].level == 0:
        body = body[:-1]  # a rule that closes a section only separates it from the next: the page has borders
    summary: list[Token] = []
    if body and body[0].type == "paragraph_open" and body[0].level == 0:
        summary, body = body[:3], body[3:]
    title_children = _strip_number(inline.children or []) if number else inline.children or []
    heading_id = str(tokens[start].attrGet("id"))
    return Section(
        index=index,
        title=words(title_children),
        id=heading_id,
        summary_html=_render(summary, env),
        detail_html=_render(body, env),
        line=(tokens[start].map or (0, 0))[0] + body_line,
        title_html=_render_inline(title_children, env),
        outline=tuple((h.id, h.text) for h in parsed.headings if h.level == 3 and start < h.token_index < end),
    )


@dataclasses.dataclass(frozen=True)
class _References:
    """The reference section as the footer shows it."""

    entries: tuple[Reference, ...] = ()
    id: str = ""
    title: str = ""
    intro_html: str = ""
    after_html: str = ""


def _references(parsed: Parsed, tokens: list[Token], bounds: tuple[int, int] | None, source: Source
                ) -> _References:
    if bounds is None:
        return _References()
    start, end = bounds
    before, after = _prose(tokens[start + 3:end])
    entries = collect_references(tokens[start + 3:end], source.body.split("\n"), source.body_line)
    return _References(tuple(entries), str(tokens[start].attrGet("id")), words(tokens[start + 1].children),
                       _render(before, parsed.env), _render(after, parsed.env))


def _sections(parsed: Parsed, bounds: list[tuple[int, int]], body_line: int) -> list[Section]:
    numbers = {h.token_index: h.number for h in parsed.headings}
    numbered = any(numbers.get(start) for start, _ in bounds)
    sections = []
    for ordinal, (start, end) in enumerate(bounds, start=1):
        number = numbers.get(start, "")
        index = f"§{number}" if number else ("§" if numbered else f"§{ordinal}")
        sections.append(_section(parsed, start, end, index, number, body_line))
    return sections


def report_from_source(source: Source) -> Report:
    """Return the Report of a decoded source (pure: no file is read or written)."""
    parsed = parse(source.body, source.body_line)
    tokens, notes = _without_footnotes(parsed.tokens)
    intro, bounds = _split(tokens)
    first_h1 = next((h for h in parsed.headings if h.level == 1), None)
    if first_h1 is not None and first_h1.token_index < len(intro):
        intro = intro[:first_h1.token_index] + intro[first_h1.token_index + 3:]
    title = source.front.title or (first_h1.text if first_h1 else "") or source.front.headline \
        or source.path.stem
    reference_bounds = next((b for b in reversed(bounds) if _is_reference_section(tokens, *b)), None)
    references = _references(parsed, tokens, reference_bounds, source)
    citations = _placed(parsed, bounds, len(tokens))
    sections = [dataclasses.replace(s, sources=_sources(citations, s.id))
                for s in _sections(parsed, [b for b in bounds if b != reference_bounds], source.body_line)]
    intro_html, notes_html = _render(intro, parsed.env), _render(notes, parsed.env)
    pieces = [*map(text_html, _front_texts(source.front)), intro_html,
              *(p for s in sections for p in (s.summary_html, s.detail_html)), notes_html,
              references.intro_html, references.after_html, *(r.url for r in references.entries)]
    return Report(
        path=source.path, front=source.front, title=title, sections=tuple(sections),
        citations=tuple(citations), references=references.entries, links=tuple(_outbound(pieces)),
        intro_html=intro_html, notes_html=notes_html, references_id=references.id,
        references_title=references.title, references_intro_html=references.intro_html,
        references_after_html=references.after_html,
        anchors=tuple((h.number, h.id) for h in parsed.headings if h.number), warnings=source.warnings,
    )


def _is_reference_section(tokens: list[Token], start: int, end: int) -> bool:
    return is_references_title(words(tokens[start + 1].children)) and any(
        t.type == "ordered_list_open" for t in tokens[start:end])


def _prose(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """Return a reference section's text without its ordered lists and group headings: what comes before
    the first list, and what comes after it (a closing remark stays below the list)."""
    before: list[Token] = []
    after: list[Token] = []
    kept, skip_until = before, None
    for token in tokens:
        if skip_until is not None:
            if token.type == skip_until and token.level == 0:
                skip_until = None
            continue
        if token.level == 0 and token.type in {"ordered_list_open", "heading_open"}:
            skip_until = token.type.replace("_open", "_close")
            kept = after
            continue
        kept.append(token)
    while after and after[0].type == "hr":
        after = after[1:]
    return before, after


def _placed(parsed: Parsed, bounds: list[tuple[int, int]], notes_start: int) -> list[InlineCitation]:
    """Return the citations, each with the id of the section (or `intro`, `notes`) it appears in."""
    owners = [(start, end, str(parsed.tokens[start].attrGet("id"))) for start, end in bounds]
    placed = []
    for citation, index in parsed.citations:
        owner = "notes" if index >= notes_start else next(
            (name for start, end, name in owners if start <= index < end), "intro")
        placed.append(dataclasses.replace(citation, section_id=owner))
    return placed


def _sources(citations: list[InlineCitation], section_id: str) -> tuple[int, ...]:
    return tuple(dict.fromkeys(c.number for c in citations if c.section_id == section_id))


def _front_texts(front: FrontMatter) -> list[str]:
    """Return the front-matter texts the page renders as inline Markdown (they may hold links), in page order."""
    texts = [front.lede]
    for card in front.floors:
        texts += [card.definition, *card.critique]
    return [*texts, front.counter_frame.quote] if front.counter_frame else texts


def _outbound(pieces: list[str]) -> list[str]:
    """Return the distinct http(s) URLs in `pieces` (HTML fragments or bare URLs), in order of first use."""
    urls: dict[str, None] = {}
    for piece in pieces:
        candidates = [html.unescape(m) for m in _HREF.findall(piece)] if "<" in piece else [piece]
        for url in candidates:
            if is_outbound(url):
                urls.setdefault(url, None)
    return list(urls)
