"""Report → one self-contained HTML page: the theme's markup (`page.py`), its CSS and JS inlined, a CSP that
allows exactly what the page uses (its own style and script by hash, its embedded fonts, Google Fonts only
with `--fonts google`)."""

from __future__ import annotations

import dataclasses
import html
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite import digests
from graphsite.builder.fonts import font_face_css, page_characters
from graphsite.builder.fragments import Citable, citables, page_fragment, public_url, reference_title, unlinked_note
from graphsite.builder.ladder import ladder, vertical_ladder
from graphsite.builder.markdown import text_html
from graphsite.builder.model import Report, Section, SourceCheck
from graphsite.builder.page import GOOGLE_FONTS_CSS, PageView, escape, page_html
from graphsite.builder.references import check_words, checks_summary
from graphsite.builder.sanitize import url_scheme
from graphsite.builder.tags import ANY_TAG, CLEAN_IMG_SRC
from graphsite.errors import BuildError
from graphsite.paths import theme_dir
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.builder.outline import Outline

__all__ = ["DEFAULT_FONTS", "FONTS", "GOOGLE_FONTS_CSS", "Entry", "Rendered", "Theme", "load_theme", "render",
           "render_page"]

# embedded: the spec's typefaces inside the page (no request); google: Google's stylesheet; system: none.
FONTS = ("embedded", "google", "system")
DEFAULT_FONTS = "embedded"
DESCRIPTION_LIMIT = 160  # characters: what search engines and link previews show


@frozen
class Theme:
    css: str
    js: str
    directory: Path
    fonts_js: str = ""  # the head script that starts the embedded faces loading (with --fonts embedded only)
    changes_css: str = ""  # the style of the "Changed since" note (`build --since`), added only to a page with it


@lru_cache(maxsize=4)
def load_theme(directory: Path | None = None) -> Theme:
    """Return the theme in `directory` (default: graphsite's own): its style sheets and scripts (its fonts are
    read when a page embeds them). Raise BuildError naming a file that cannot be read: a broken installation."""
    try:
        directory = directory or theme_dir()
    except FileNotFoundError as exc:  # the theme's folder is not in the installation
        raise BuildError(str(exc), hint="reinstall graphsite") from None
    css, js, fonts_js, changes_css = (_theme_file(directory / name)
                                      for name in ("page.css", "page.js", "page-fonts.js", "changes.css"))
    return Theme(css, js, directory, fonts_js, changes_css)


def _theme_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror or str(exc)
        raise BuildError(f"{path}: cannot read the theme's file: {why}", hint="reinstall graphsite") from None


def csp_source(text: str) -> str:
    """Return the CSP source that allows the inline script or style `text` (`'sha256-…'`)."""
    return f"'sha256-{digests.base64_text(digests.sha256(text.encode('utf-8')).digest())}'"


def content_security_policy(css: str, js: str, fonts: str, image_sources: list[str], font_css: str = "",
                            fonts_js: str = "") -> str:
    """Return the page's CSP: nothing by default, then exactly its own style, script, fonts and images."""
    style = ([csp_source(font_css)] if font_css else []) + [csp_source(css)]  # in the page's order
    style += ["https://fonts.googleapis.com"] if fonts == "google" else []
    script = ([csp_source(fonts_js)] if fonts_js else []) + [csp_source(js)]  # in the page's order
    parts = ["default-src 'none'", f"style-src {' '.join(style)}", f"script-src {' '.join(script)}"]
    if fonts == "google":
        parts.append("font-src https://fonts.gstatic.com")
    elif font_css:
        parts.append("font-src data:")
    if image_sources:
        parts.append(f"img-src {' '.join(image_sources)}")
    # connect-src 'self': only the page's own hashed script could connect, and it does not; Lighthouse, though,
    # fetches /robots.txt from inside the page and reports "unable to download" under 'none'
    # (GoogleChrome/lighthouse#4386), which is not the page's fault and costs its SEO score.
    parts += ["connect-src 'self'", "base-uri 'none'", "form-action 'none'"]
    return "; ".join(parts)


def image_sources(fragments: list[str]) -> list[str]:
    """Return the CSP sources of every image in the HTML fragments: their origins, or 'self' for relative."""
    sources: dict[str, None] = {}
    for fragment in fragments:
        for src in (match.group(2) for match in CLEAN_IMG_SRC.finditer(fragment)):
            scheme = url_scheme(src)
            if scheme in {"http", "https"}:
                sources.setdefault("/".join(src.split("/", 3)[:3]), None)
            elif scheme == "data" and src.startswith("data:image/"):
                sources.setdefault("data:", None)  # a local image, embedded by the builder (builder/images.py)
            elif not scheme:
                sources.setdefault("'self'", None)
    return list(sources)


@frozen
class Entry:
    """One reference as the footer shows it: a link to its public URL, printed in full, or its title with why it
    is not a link (a placeholder, `file:` or private address is never shown), the live check's verdict in words
    (only on a page built with --check-links), the earlier entry whose URL it repeats, and its backlinks."""

    number: int
    title: str
    href: str  # the public URL, or "" when the reference has none
    element_id: str  # `ref-N` for the first entry of each number, "" for a duplicate
    cited_in: tuple[tuple[str, str], ...]
    note: str = ""  # why it is not a link ("no URL given", "not public", …), "" when it is one
    state: str = ""  # the check's verdict in words ("checked 2026-12-01"), "" when the page was not checked
    state_class: str = ""  # the verdict's state (ok, dead, …) for the stylesheet
    same_as: int | None = None  # the earlier reference with the same URL


def _reference_groups(report: Report) -> list[tuple[str, list[Entry]]]:
    cited_in = _cited_in(report)
    verdicts = dict(report.checks.verdicts) if report.checks else {}
    groups: list[tuple[str, list[Entry]]] = []
    seen: set[int] = set()
    first_of: dict[str, int] = {}  # URL -> the first reference number that gives it
    for reference in report.references:
        if not groups or groups[-1][0] != reference.group:
            groups.append((reference.group, []))
        element_id = "" if reference.number in seen else f"ref-{reference.number}"
        seen.add(reference.number)
        href = public_url(reference.url)
        first = first_of.setdefault(reference.url, reference.number) if reference.url else reference.number
        check = _shown_check(verdicts.get(reference.url))
        groups[-1][1].append(Entry(reference.number, reference_title(reference), href, element_id,
                                   tuple(cited_in.get(reference.number, ())), unlinked_note(reference.url),
                                   check_words(check) if check else "", check.state if check else "",
                                   first if first != reference.number else None))
    return groups


def _shown_check(check: SourceCheck | None) -> SourceCheck | None:
    """Return the verdict the reference list shows: none for a private address that was not requested (the
    entry already says "not public"); a private one the author had checked (links.allow_private) is shown."""
    return None if check is None or check.state == "private" else check


def _checked_urls(report: Report) -> list[str]:
    verdicts = dict(report.checks.verdicts) if report.checks else {}
    return [r.url for r in report.references if _shown_check(verdicts.get(r.url))]


def _cited_in(report: Report) -> dict[int, list[tuple[str, str]]]:
    """Return, per citation number, the distinct (section id, §N) places that cite it, in page order."""
    labels = {section.id: section.index for section in report.sections}
    labels.update(intro="intro", notes="notes")
    if report.references_id:
        labels[report.references_id] = "references"
    places: dict[int, dict[tuple[str, str], None]] = {}
    for citation in report.citations:
        places.setdefault(citation.number, {})[(citation.section_id, labels.get(citation.section_id, ""))] = None
    return {number: list(found) for number, found in places.items()}


def _source_links(report: Report, table: dict[int, Citable]) -> dict[int, tuple[str, str]]:
    """Return where each citation number's `[N]` in a Source: line points (its reference entry, else its
    public URL) and the link's accessible name."""
    links: dict[int, tuple[str, str]] = {}
    for citation in report.citations:
        entry = table.get(citation.number)
        if entry is not None:
            links.setdefault(citation.number, (f"#ref-{citation.number}", f"{entry.name} (in the reference list)"))
        elif public_url(citation.url):
            links.setdefault(citation.number, (citation.url, f"Citation {citation.number} (opens the source)"))
    return links


_STOPWORDS = frozenset({"a", "an", "the", "in", "at", "of", "to", "on", "for", "and", "or", "not", "just", "every",
                        "before", "you", "your", "as", "is", "be"})


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in _STOPWORDS}


def rule_targets(report: Report) -> list[str]:
    """Return, per operating rule, the id of the sub-section about it (every word of the rule in its title,
    fewest other words), else the §3.2 heading's id, else ""."""
    fallback = report.anchor("3.2")
    headings = [(target, _words(text)) for section in report.sections for target, text in section.outline]
    targets = []
    for rule in report.front.rules:
        wanted = _words(rule)
        found = sorted((len(words - wanted), target) for target, words in headings if wanted and wanted <= words)
        targets.append(found[0][1] if found else fallback)
    return targets


def description(report: Report) -> str:
    """Return the page's meta description: the author's description, else the lede, else the first paragraph,
    in at most 160 characters."""
    given = report.front.description or report.front.lede
    text = text_html(given) if given else ""
    for fragment in (text, report.intro_html, *(section.summary_html for section in report.sections)):
        text = " ".join(html.unescape(ANY_TAG.sub(" ", fragment)).split())
        if text:
            break
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    cut = text[: DESCRIPTION_LIMIT - 1].rsplit(" ", 1)[0].rstrip(" ,;:—–-")
    return cut + "…"


def section_place(section: Section) -> str:
    """Return how a label names a place in `section`: "§4", or its quoted title when it has no number."""
    return f"“{section.title}”" if section.index == "§" else section.index


def css_string(text: str) -> str:
    """Return `text` as a quoted CSS string: every character but letters, digits and spaces escaped, so no
    text can end the string or the style element."""
    return '"' + "".join(ch if ch.isalnum() or ch == " " else f"\\{ord(ch):x} " for ch in text) + '"'


def page_css(theme_css: str, title: str) -> str:
    """Return the page's style sheet: the theme's, then the report's title for the printed page's margin."""
    return f"{theme_css}\n@media print {{ @page {{ @top-right {{ content: {css_string(title)}; }} }} }}"


def _page_sections(report: Report, table: dict[int, Citable]) -> tuple[Section, ...]:
    return tuple(dataclasses.replace(section,
                                     summary_html=page_fragment(section.summary_html, table, f" in {place}"),
                                     detail_html=page_fragment(section.detail_html, table, f" in {place}"))
                 for section in report.sections for place in [section_place(section)])


@frozen
class Rendered:
    """A page's HTML; rendered `since` a previous version, what it changes against it (None: no previous version)
    and whether its "Changed since" note shows them (`noted`)."""

    html: str
    changes: Changes | None = None
    noted: bool = False


def render_page(report: Report, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
                theme: Theme | None = None, domain: str = "", indexable: bool = False, published: str = "") -> str:
    """Return the page's HTML: pure, byte-identical for identical input. `domain` with `subdomain` gives the
    canonical URL; `indexable` lets search engines index the page (previews say `noindex`); `published` (an
    ISO date) says when the page was published at `subdomain` — a fact that stays true in a saved copy."""
    return render(report, subdomain=subdomain, fonts=fonts, theme=theme, domain=domain, indexable=indexable,
                  published=published).html


def render(report: Report, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS, theme: Theme | None = None,
           domain: str = "", indexable: bool = False, published: str = "", since: Outline | None = None,
           note: bool = True, mark: str | None = None) -> Rendered:
    """Return the page (as `render_page` does), rendered once; with `since` (the previous version's outline),
    also what it changes against it, which its "Changed since" note shows when `note` and there is something to
    note. `mark` (hex digits; default: 16 random bytes' worth) is what the parts made after the render stand in
    as; a report that holds it is rendered again, to the same page."""
    theme = theme or load_theme()
    table = citables(report.references)
    place = {"intro": " in the introduction", "notes": " in the notes", "refs": " in the references"}
    report = dataclasses.replace(
        report, sections=_page_sections(report, table),
        intro_html=page_fragment(report.intro_html, table, place["intro"]),
        notes_html=page_fragment(report.notes_html, table, place["notes"]),
        references_intro_html=page_fragment(report.references_intro_html, table, place["refs"]),
        references_after_html=page_fragment(report.references_after_html, table, place["refs"]))
    fragments = [report.intro_html, report.notes_html, report.references_intro_html,
                 report.references_after_html, *(s.summary_html for s in report.sections),
                 *(s.detail_html for s in report.sections)]
    canonical = f"https://{subdomain}.{domain.strip('.').lower()}/" if subdomain and domain else ""
    view = PageView(
        report=report, inline=text_html, csp="", css=page_css(theme.css, report.title), js=theme.js, fonts=fonts,
        subdomain=subdomain or "", published=published, indexable=indexable, description=description(report),
        canonical=canonical, ladder=ladder(report.front.floors), vertical_ladder=vertical_ladder(report.front.floors),
        rule_targets=tuple(rule_targets(report)), reference_groups=tuple(_reference_groups(report)),
        source_links=_source_links(report, table),
        checks_summary=checks_summary(report.checks, _checked_urls(report)) if report.checks else "")
    images = image_sources(fragments)
    if fonts != "embedded" and since is None:  # nothing depends on the rendered page: its values are known
        return Rendered(page_html(dataclasses.replace(
            view, csp=content_security_policy(view.css, theme.js, fonts, images))))
    if mark is None:
        mark = os.urandom(16).hex()  # what secrets.token_hex(16) gives, without importing random
    return _render_marked(view, theme, images, since, note, mark)


def _render_marked(view: PageView, theme: Theme, images: list[str], since: Outline | None, note: bool,
                   mark: str) -> Rendered:
    """Return the page rendered once, what depends on the rendered page standing in as a random mark, replaced
    after the render: the "Changed since" note (made from the page's outline, which the marks are not part of)
    and the style sheet (which holds the note's style only with the note), the font stylesheet (subset to the
    characters the page shows, the note's included) and the CSP (which holds the hashes of the style sheets and
    the font loader)."""
    embedded = view.fonts == "embedded"
    fonts_js = theme.fonts_js if embedded else ""
    marks = _Marks(mark + "n" if since is not None else "", mark + "s", mark + "f" if embedded else "", mark + "c")
    page = page_html(dataclasses.replace(view, note=marks.note, css=marks.css, font_css=marks.font_css,
                                         csp=marks.csp, fonts_js=fonts_js))
    changes, note_markup = _changes(page, since, note)
    css = page_css(theme.css + _note_css(theme), view.report.title) if note_markup else view.css
    font_css = ""
    if embedded:
        # the marks are hex digits and ASCII letters, which the subsets always hold: the characters are the page's
        shown = page.replace(marks.note, note_markup) if note_markup else page
        font_css = font_face_css(theme.directory / "fonts", page_characters(shown))
    csp = content_security_policy(css, theme.js, view.fonts, images, font_css, fonts_js)
    values = {marks.css: css, marks.csp: escape(csp)}
    if since is not None:
        values[marks.note] = note_markup
    if embedded:
        values[marks.font_css] = font_css
    if (font_css or not embedded) and all(page.count(found) == 1 for found in values):
        for found, value in values.items():
            page = page.replace(found, value)
    else:  # a report that holds a mark (it cannot guess one): rendered again with the real values
        page = page_html(dataclasses.replace(view, note=note_markup, css=css, font_css=font_css, csp=csp,
                                             fonts_js=fonts_js))
    return Rendered(page, changes, bool(note_markup))


@frozen
class _Marks:
    """The marks that stand for the parts made after the render ("": a part this page does not have)."""

    note: str
    css: str
    font_css: str
    csp: str


def _changes(page: str, since: Outline | None, note: bool) -> tuple[Changes | None, str]:
    """Return what `page` changes against `since` (None without it) and the markup of the note that shows them
    ("" when there is nothing to note, or no note is asked for)."""
    if since is None:
        return None, ""
    from graphsite.builder import changenote
    from graphsite.builder.compare import compare
    from graphsite.builder.outline import read_outline

    changes = compare(since, read_outline(page, where="the new page"))
    return changes, changenote.note_html(changenote.note(changes)) if note else ""


def _note_css(theme: Theme) -> str:
    """Return the style of the "Changed since" note, for a page that shows one (a page without the note stays
    byte-identical)."""
    return "\n" + theme.changes_css
