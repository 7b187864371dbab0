"""Report → one self-contained HTML page: the theme's Jinja2 template, its CSS and JS inlined, a CSP that
allows exactly what the page uses (its own style and script by hash, Google Fonts unless `system`)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
from markupsafe import Markup

from graphsite.builder.ladder import ladder
from graphsite.builder.markdown import text_html
from graphsite.builder.model import Report
from graphsite.builder.sanitize import is_safe_url, url_scheme
from graphsite.paths import theme_dir

FONTS = ("google", "system")
GOOGLE_FONTS_CSS = ("https://fonts.googleapis.com/css2?family=Inter:wght@400;600;700"
                    "&family=JetBrains+Mono:wght@400;600&family=Source+Serif+4:opsz,wght@8..60,600;8..60,700"
                    "&display=swap")
_IMG_SRC = re.compile(r'<img\b[^>]*?\ssrc="([^"]*)"')


@dataclass(frozen=True)
class Theme:
    environment: jinja2.Environment
    css: str
    js: str


@lru_cache(maxsize=4)
def load_theme(directory: Path | None = None) -> Theme:
    """Return the theme in `directory` (default: graphsite's own), its template compiled once."""
    directory = directory or theme_dir()
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(directory), autoescape=True,
                                     trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                                     undefined=jinja2.StrictUndefined, bytecode_cache=_bytecode_cache())
    css = (directory / "page.css").read_text(encoding="utf-8").strip()
    js = (directory / "page.js").read_text(encoding="utf-8").strip()
    return Theme(environment, css, js)


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, where a failure to read or write only costs a recompile."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Return a cache of compiled templates in the user's own cache directory (keyed by the template's source
    checksum, so an edited theme recompiles), or None where that directory is not safe to load code from.

    A cached template is a pickle of Python code: it is loaded only from a real directory (not a symlink)
    owned by this user with mode 0700, as Jinja's own default cache directory is, so that no other user can
    plant a file there that runs at the next build."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    directory = base / "graphsite" / "jinja"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.lstat()
        if info.st_uid == os.geteuid() and stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) != 0o700:
            directory.chmod(0o700)  # ours, made before this check existed: close it to others
            info = directory.lstat()
    except OSError:
        return None
    if info.st_uid != os.geteuid() or not stat.S_ISDIR(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o700:
        return None
    return _BytecodeCache(str(directory))


def front_html(text: str) -> Markup:
    """Return front-matter text as safe inline HTML (emphasis, code and links; everything else escaped)."""
    return Markup(text_html(text))


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_security_policy(css: str, js: str, fonts: str, image_sources: list[str]) -> str:
    """Return the page's CSP: nothing by default, then exactly its own style, script, fonts and images."""
    style = [_digest(css)] + (["https://fonts.googleapis.com"] if fonts == "google" else [])
    parts = ["default-src 'none'", f"style-src {' '.join(style)}", f"script-src {_digest(js)}"]
    if fonts == "google":
        parts.append("font-src https://fonts.gstatic.com")
    if image_sources:
        parts.append(f"img-src {' '.join(image_sources)}")
    parts += ["base-uri 'none'", "form-action 'none'"]
    return "; ".join(parts)


def image_sources(fragments: list[str]) -> list[str]:
    """Return the CSP sources of every image in the HTML fragments: their origins, or 'self' for relative."""
    sources: dict[str, None] = {}
    for fragment in fragments:
        for src in _IMG_SRC.findall(fragment):
            scheme = url_scheme(src)
            if scheme in {"http", "https"}:
                sources.setdefault("/".join(src.split("/", 3)[:3]), None)
            elif not scheme:
                sources.setdefault("'self'", None)
    return list(sources)


@dataclass(frozen=True)
class Entry:
    """One reference as the footer shows it: an `<a>` to its URL (none when unsafe), its backlinks."""

    number: int
    title: str
    url: str
    href: str
    element_id: str  # `ref-N` for the first entry of each number, "" for a duplicate
    cited_in: tuple[tuple[str, str], ...]


def _reference_groups(report: Report) -> list[tuple[str, list[Entry]]]:
    cited_in = _cited_in(report)
    groups: list[tuple[str, list[Entry]]] = []
    seen: set[int] = set()
    for reference in report.references:
        if not groups or groups[-1][0] != reference.group:
            groups.append((reference.group, []))
        element_id = "" if reference.number in seen else f"ref-{reference.number}"
        seen.add(reference.number)
        href = reference.url if reference.url and is_safe_url(reference.url) else ""
        groups[-1][1].append(Entry(reference.number, reference.title, reference.url, href, element_id,
                                   tuple(cited_in.get(reference.number, ()))))
    return groups


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


def _source_links(report: Report) -> dict[int, str]:
    """Return where each citation number's `[N]` in a Source: line points: its reference entry, else its URL."""
    numbers = {reference.number for reference in report.references}
    links: dict[int, str] = {}
    for citation in report.citations:
        if citation.number in numbers:
            links.setdefault(citation.number, f"#ref-{citation.number}")
        elif is_safe_url(citation.url):
            links.setdefault(citation.number, citation.url)
    return links


def render_page(report: Report, *, subdomain: str | None = None, fonts: str = "google",
                theme: Theme | None = None) -> str:
    """Return the page's HTML: pure, byte-identical for identical input."""
    theme = theme or load_theme()
    fragments = [report.intro_html, report.notes_html, report.references_intro_html,
                 report.references_after_html, *(s.summary_html for s in report.sections),
                 *(s.detail_html for s in report.sections)]
    context: dict[str, Any] = {
        "report": report, "front": report.front, "subdomain": subdomain or "", "fonts": fonts,
        "google_fonts_css": GOOGLE_FONTS_CSS, "css": theme.css, "js": theme.js,
        "csp": content_security_policy(theme.css, theme.js, fonts, image_sources(fragments)),
        "front_html": front_html, "ladder": ladder(report.front.floors), "rules_target": report.anchor("3.2"),
        "reference_groups": _reference_groups(report), "source_links": _source_links(report),
    }
    return theme.environment.get_template("page.html.j2").render(context)

