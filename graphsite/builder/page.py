"""The page's HTML from its view: pure functions that write the theme's markup and escape every value they did
not author (the text of the report, its ids and URLs), as an autoescaping template would.

This was the Jinja2 template `theme/page.html.j2`. Written as Python, a build neither imports Jinja2 (a fifth of
the start-up of a small build) nor compiles or loads compiled template code from a cache: the markup is
graphsite's own code, in the package. `tests/builder/test_page_golden.py` holds the whole pages the template made.
Only fragments the builder made and sanitised (`*_html`), the theme's CSS and JS and the font stylesheet are
written unescaped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.ladder import Ladder
    from graphsite.builder.model import Card, CounterFrame, FrontMatter, Report, Section
    from graphsite.builder.render import Entry

GOOGLE_FONTS_CSS = ("https://fonts.googleapis.com/css2?family=Inter:wght@400;600"
                    "&family=IBM+Plex+Mono:wght@400&family=Source+Serif+4:opsz,wght@8..60,600"
                    "&display=swap")


def escape(value: object) -> str:
    """Return `value` as HTML text or attribute value: the five characters markup could read, escaped (the same
    entities as MarkupSafe's, so pages stay byte-identical)."""
    text = str(value)
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&#34;")
    if "'" in text:
        text = text.replace("'", "&#39;")
    return text


@frozen
class PageView:
    """Everything the page shows, computed by `render.render_page`; `inline` turns front-matter text into safe
    inline HTML (emphasis, code, links)."""

    report: Report
    inline: Callable[[str], str]
    csp: str
    css: str
    js: str
    fonts: str
    subdomain: str = ""
    published: str = ""
    indexable: bool = False
    description: str = ""
    canonical: str = ""
    font_css: str = ""
    fonts_js: str = ""
    ladder: Ladder | None = None
    vertical_ladder: Ladder | None = None
    rule_targets: tuple[str, ...] = ()
    reference_groups: tuple[tuple[str, list[Entry]], ...] = ()
    source_links: dict[int, tuple[str, str]] | None = None
    checks_summary: str = ""
    note: str = ""  # the "Changed since" note's markup (builder/changenote.py), "" when the page shows none


def page_html(view: PageView) -> str:
    """Return the whole page: head, header, cards and rules, ladder, index, sections, notes, references, footer."""
    parts = [_head(view), _header(view), "<main>\n", view.note, _glance(view), _ladders(view),
             _toc(view.report)]
    report = view.report
    if report.intro_html:
        parts.append(f'<div id="intro" class="intro">\n{report.intro_html}\n</div>\n')
    parts.append('<div id="report" class="report">\n')
    parts += (_section(section, view) for section in report.sections)
    parts.append("</div>\n")
    if report.notes_html:
        parts.append('<section id="notes" class="notes" aria-labelledby="notes-title">\n'
                     f'  <h2 id="notes-title">Notes</h2>\n{report.notes_html}\n</section>\n')
    if report.references:
        parts.append(_references(view))
    parts.append("</main>\n")
    parts.append(_footer(view))
    return "".join(parts)


def _head(view: PageView) -> str:
    report, front, description, canonical = view.report, view.report.front, view.description, view.canonical
    headline = escape(front.headline or report.title)
    robots = "index, follow" if view.indexable else "noindex, nofollow"
    parts = ['<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
             '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
             f'<meta http-equiv="Content-Security-Policy" content="{escape(view.csp)}">\n'
             '<meta name="referrer" content="no-referrer">\n<meta name="generator" content="graphsite">\n'
             f'<meta name="robots" content="{robots}">\n<title>{escape(report.title)}</title>\n']
    if description:
        parts.append(f'<meta name="description" content="{escape(description)}">\n')
    if canonical:
        parts.append(f'<link rel="canonical" href="{escape(canonical)}">\n')
    parts.append(f'<meta property="og:type" content="article">\n<meta property="og:title" content="{headline}">\n')
    if description:
        parts.append(f'<meta property="og:description" content="{escape(description)}">\n')
    if canonical:
        parts.append(f'<meta property="og:url" content="{escape(canonical)}">\n')
    parts.append(f'<meta name="twitter:card" content="summary">\n<meta name="twitter:title" content="{headline}">\n')
    if description:
        parts.append(f'<meta name="twitter:description" content="{escape(description)}">\n')
    parts.append('<meta name="theme-color" content="#0a0e17">\n')
    if view.fonts == "google":
        parts.append('<link rel="preconnect" href="https://fonts.googleapis.com">\n'
                     '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>\n'
                     f'<link rel="stylesheet" href="{escape(GOOGLE_FONTS_CSS)}">\n')
    if view.font_css:
        parts.append(f"<style>{view.font_css}</style>\n")
    if view.fonts_js:
        parts.append(f"<script>{view.fonts_js}</script>\n")
    parts.append(f"<style>{view.css}</style>\n</head>\n")
    return "".join(parts)


def _header(view: PageView) -> str:
    report, front = view.report, view.report.front
    parts = [f'<body class="fonts-{escape(view.fonts)}">\n<a class="skip" href="#toc">Skip to the sections</a>\n'
             '<header id="top" class="top">\n  <div class="top-line">\n']
    if front.badge:
        parts.append(f'    <p class="badge">{escape(front.badge)}</p>\n')
    if view.subdomain:
        published = (f' on <time datetime="{escape(view.published)}">{escape(view.published)}</time>'
                     if view.published else "")
        parts.append('    <p class="live"><span class="dot" aria-hidden="true"></span>published at '
                     f"<code>{escape(view.subdomain)}</code>{published}</p>\n")
    parts.append("  </div>\n")
    if front.kicker:
        parts.append(f'  <p class="kicker">{escape(front.kicker)}</p>\n')
    headline = escape(front.headline or report.title)
    if report.subtitle:
        parts.append(f'  <h1>{headline}</h1>\n'
                     f'  <p class="subtitle" id="{escape(report.title_id)}">{escape(report.subtitle)}</p>\n')
    else:
        title_id = f' id="{escape(report.title_id)}"' if report.title_id else ""
        parts.append(f"  <h1{title_id}>{headline}</h1>\n")
    if front.lede:
        parts.append(f'  <p class="lede">{view.inline(front.lede)}</p>\n')
    parts.append(_byline(front))
    parts.append("</header>\n")
    return "".join(parts)


def _byline(front: FrontMatter) -> str:
    if not (front.authors or front.date):
        return ""
    authors = f"By {escape(', '.join(front.authors))}" if front.authors else ""
    between = " · " if front.authors and front.date else ""
    date = f"<time>{escape(front.date)}</time>" if front.date else ""
    return f'  <p class="byline">{authors}{between}{date}</p>\n'


def _glance(view: PageView) -> str:
    """Return the cards (the floors and the counter-frame) and the operating rules beside them."""
    front = view.report.front
    if not (front.floors or front.counter_frame or front.rules):
        return ""
    parts = ['<div class="glance">\n']
    if front.floors or front.counter_frame:
        parts.append('  <section id="cards" class="cards" aria-label="The floors of the ladder">\n')
        last = len(front.floors) - 1
        parts += (_card(card, index == last, view.inline) for index, card in enumerate(front.floors))
        if front.counter_frame:
            parts.append(_counter_card(front.counter_frame, view.inline))
        parts.append("  </section>\n")
    if front.rules:
        parts.append('  <aside id="rules" class="rules" aria-labelledby="rules-title">\n'
                     f'    <h2 id="rules-title">The {len(front.rules)} operating rules</h2>\n    <ol>\n')
        for rule, target in zip(front.rules, view.rule_targets, strict=True):
            shown = f'<a href="#{escape(target)}">{escape(rule)}</a>' if target else escape(rule)
            parts.append(f"      <li>{shown}</li>\n")
        parts.append("    </ol>\n  </aside>\n")
    parts.append("</div>\n")
    return "".join(parts)


def _card(card: Card, newest: bool, inline: Callable[[str], str]) -> str:
    parts = [f'    <article class="card{" card-new" if newest else ""}">\n']
    if card.label:
        parts.append(f'      <p class="card-label">{escape(card.label)}</p>\n')
    if card.year:
        parts.append(f'      <p class="card-year">{escape(card.year)}</p>\n')
    if card.title:
        parts.append(f'      <h2 class="card-title">{escape(card.title)}</h2>\n')
    if card.definition:
        parts.append(f'      <p class="card-definition">{inline(card.definition)}</p>\n')
    if card.critique:
        parts.append('      <ul class="card-critique">\n')
        parts += (f"        <li>{inline(line)}</li>\n" for line in card.critique)
        parts.append("      </ul>\n")
    parts.append("    </article>\n")
    return "".join(parts)


def _counter_card(frame: CounterFrame, inline: Callable[[str], str]) -> str:
    parts = ['    <article class="card card-counter">\n      <h2 class="card-label">counter-frame</h2>\n'
             f'      <blockquote class="card-quote"><p>{inline(frame.quote)}</p></blockquote>\n']
    if frame.who or frame.where or frame.date:
        who = escape(", ".join(part for part in (frame.who, frame.where) if part))
        date = f" · {escape(frame.date)}" if frame.date else ""
        parts.append(f'      <p class="card-who">— {who}{date}</p>\n')
    parts.append("    </article>\n")
    return "".join(parts)


def _named_steps(ladder: Ladder) -> str:
    return ", ".join(f"{escape(step.title)} ({escape(step.year)})" for step in ladder.steps)


def _ladders(view: PageView) -> str:
    """Return the ladder drawn twice: wide (floor 1 bottom left) and narrow (the newest floor on top)."""
    wide, narrow = view.ladder, view.vertical_ladder
    if not wide or not narrow:
        return ""
    parts = ['<figure id="ladder" class="ladder">\n'
             f'  <svg class="ladder-wide" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {wide.width} '
             f'{wide.height}" role="img" aria-labelledby="ladder-title">\n'
             f'    <title id="ladder-title">The ladder: {_named_steps(wide)}</title>\n']
    for step in wide.steps:
        parts.append(f'    <g class="step{" step-new" if step.newest else ""}">\n'
                     f'      <rect x="{step.x}" y="{step.y}" width="{step.width}" height="{step.height}" rx="6">'
                     "</rect>\n"
                     f'      <text x="{step.x + 10}" y="{step.y + 17}" class="step-label">{escape(step.label)}'
                     "</text>\n"
                     f'      <text x="{step.x + 10}" y="{step.y + 34}" class="step-title">{escape(step.title)}'
                     "</text>\n"
                     f'      <text x="{step.x + 10}" y="{step.y + 50}" class="step-year">{escape(step.year)}</text>\n'
                     "    </g>\n")
    parts.append("  </svg>\n"
                 f'  <svg class="ladder-narrow" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {narrow.width} '
                 f'{narrow.height}" role="img" aria-label="The ladder, newest floor first: {_named_steps(narrow)}">\n')
    for step in narrow.steps:
        parts.append(f'    <g class="step{" step-new" if step.newest else ""}">\n'
                     f'      <rect x="{step.x}" y="{step.y}" width="{step.width}" height="{step.height}" rx="6">'
                     "</rect>\n"
                     f'      <text x="{step.x + 10}" y="{step.y + 17}" class="step-label">{escape(step.label)}'
                     "</text>\n"
                     f'      <text x="{step.x + step.width - 10}" y="{step.y + 17}" class="step-year" '
                     f'text-anchor="end">{escape(step.year)}</text>\n'
                     f'      <text x="{step.x + 10}" y="{step.y + 36}" class="step-title">{escape(step.title)}'
                     "</text>\n"
                     "    </g>\n")
    parts.append("  </svg>\n  <figcaption>Each floor keeps the one below it: the newest floor is the structure the "
                 "older ones live in.</figcaption>\n</figure>\n")
    return "".join(parts)


def _toc(report: Report) -> str:
    """Return the section index with the toolbar (expand/collapse all, search) the page script shows."""
    parts = ['<nav id="toc" class="toc" aria-labelledby="toc-title">\n  <h2 id="toc-title">Sections</h2>\n  <ol>\n']
    parts += (f'    <li><a href="#{escape(section.id)}"><span class="idx">{escape(section.index)}</span> '
              f"{escape(section.title)}</a></li>\n" for section in report.sections)
    if report.notes_html:
        parts.append('    <li><a href="#notes">Notes</a></li>\n')
    if report.references:
        parts.append(f'    <li><a href="#references">{escape(report.references_title or "References")}</a></li>\n')
    parts.append('    <li><a href="#teardown">Teardown</a></li>\n  </ol>\n'
                 '  <p class="back-top"><a href="#top">Back to top</a></p>\n'
                 '  <div id="toolbar" class="toolbar" hidden><button type="button" data-details="open">Expand all'
                 '</button> <button type="button" data-details="close">Collapse all</button>\n'
                 '    <div class="search" role="search"><label>Find in the report <input type="search" name="q" '
                 'autocomplete="off" spellcheck="false"></label> <span class="found" role="status" '
                 'aria-live="polite"></span></div>\n  </div>\n</nav>\n')
    return "".join(parts)


def _section(section: Section, view: PageView) -> str:
    """Return one section: heading with permalink, Source line, summary (or outline), the rest folded away."""
    ident, index, title = escape(section.id), escape(section.index), escape(section.title)
    named = section.title if section.index == "§" else f"{section.index} {section.title}"
    parts = [f'<section class="sec" aria-labelledby="{ident}">\n'
             f'  <h2 id="{ident}"><span class="idx">{index}</span> {section.title_html}&nbsp;<a class="permalink" '
             f'href="#{ident}" aria-label="Link to this section: {escape(named)}">#</a></h2>\n']
    if section.sources:
        parts.append(f'  <p class="source">Source:{_sources(section.sources, view.source_links or {})}</p>\n')
    elif view.report.citations:
        parts.append('  <p class="source source-none">Source: no sources cited in this section</p>\n')
    if section.summary_html:
        parts.append(f'  <div class="summary">\n{section.summary_html}\n  </div>\n')
    elif section.outline:
        links = " ·".join(f' <a href="#{escape(target)}">{escape(text)}</a>' for target, text in section.outline)
        parts.append(f'  <p class="outline">In this section:{links}</p>\n')
    if section.detail_html:
        summary = (f"    <summary>Read “{title}” in full</summary>\n" if section.index == "§" else
                   f'    <summary>Read {index} in full<span class="visually-hidden">: {title}</span></summary>\n')
        parts.append(f'  <details class="detail">\n{summary}    <div class="detail-body">\n{section.detail_html}\n'
                     "    </div>\n  </details>\n")
    parts.append("</section>\n")
    return "".join(parts)


def _sources(numbers: Iterable[int], links: dict[int, tuple[str, str]]) -> str:
    parts = []
    for number in numbers:
        link = links.get(number)
        parts.append(f' <a href="{escape(link[0])}" aria-label="{escape(link[1])}">[{number}]</a>' if link
                     else f" [{number}]")
    return "".join(parts)


def _references(view: PageView) -> str:
    """Return the reference list: its heading, the author's text around it, the link check's summary, and every
    entry in its group."""
    report = view.report
    parts = [f'<section id="references" class="references" aria-labelledby="{escape(report.references_id)}">\n'
             f'  <h2 id="{escape(report.references_id)}">{escape(report.references_title)}</h2>\n']
    if report.references_intro_html:
        parts.append(f"{report.references_intro_html}\n")
    if view.checks_summary:
        parts.append(f'  <p class="ref-checked">{escape(view.checks_summary)}</p>\n')
    for group, entries in view.reference_groups:
        if group:
            parts.append(f"  <h3>{escape(group)}</h3>\n")
        parts.append('  <ol class="reference-list">\n')
        parts += (_entry(entry) for entry in entries)
        parts.append("  </ol>\n")
    if report.references_after_html:
        parts.append(f'  <div class="references-after">\n{report.references_after_html}\n  </div>\n')
    parts.append("</section>\n")
    return "".join(parts)


def _entry(entry: Entry) -> str:
    element_id = f' id="{escape(entry.element_id)}"' if entry.element_id else ""
    parts = [f'    <li{element_id} value="{entry.number}">\n']
    if entry.href:
        parts.append(f'<a href="{escape(entry.href)}" rel="noopener noreferrer">{escape(entry.title)}</a>\n'
                     f'      <span class="ref-url">{escape(entry.href)}</span>\n')
    else:
        private = " not-public" if entry.note == "not public" else ""
        parts.append(f'<span class="ref-title">{escape(entry.title)}</span> '
                     f'<span class="ref-note{private}">{escape(entry.note)}</span>\n')
    if entry.same_as:
        parts.append(f'      <span class="ref-note">same source as <a href="#ref-{entry.same_as}">reference '
                     f"{entry.same_as}</a></span>\n")
    if entry.state:
        parts.append(f'      <span class="ref-state ref-{escape(entry.state_class)}">{escape(entry.state)}</span>\n')
    if entry.cited_in:
        places = "".join(f' <a href="#{escape(target)}" aria-label="Reference {entry.number} is cited in '
                         f'{escape(label if label.startswith("§") else "the " + label)}">{escape(label)}</a>'
                         for target, label in entry.cited_in)
        parts.append(f'      <span class="cited-in">cited in{places}</span>\n')
    parts.append("    </li>\n")
    return "".join(parts)


def _footer(view: PageView) -> str:
    parts = ['<footer id="footer" class="footer">\n'
             '  <p><a id="hosted" class="hosted" href="#teardown">Hosted on Dokploy / Swarm / Traefik / Cloudflare'
             "</a></p>\n"
             '  <section id="teardown" class="teardown" aria-labelledby="teardown-title">\n'
             '    <h2 id="teardown-title">Teardown</h2>\n'
             "    <p>This page documents how to take itself down. One command removes its DNS record, its Traefik "
             "route and its Swarm service, then proves that nothing is left:</p>\n"
             f'    <pre><code>graphsite teardown {escape(view.subdomain or "<subdomain>")}</code></pre>\n']
    if not view.subdomain:
        prefix = view.report.front.prefix
        starts = f" (it starts with <code>{escape(prefix)}-</code>)" if prefix else ""
        parts.append("    <p>Replace <code>&lt;subdomain&gt;</code> with the name <code>graphsite deploy</code> "
                     f"printed{starts}.</p>\n")
    parts.append(f"  </section>\n</footer>\n<script>{view.js}</script>\n</body>\n</html>\n")
    return "".join(parts)
