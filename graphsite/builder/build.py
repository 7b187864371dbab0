"""The builder's part of a build: Markdown report → BuiltPage (pure) → site/index.html (atomic write).

The builder never imports the citation checks: `graphsite/usecases/build.py`, the use case above both, runs them on
the report this module returns (see docs/ARCHITECTURE.md for the import rules).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite import digests
from graphsite.atomic import write_atomic
from graphsite.builder.fonts import check_faces
from graphsite.builder.images import DEFAULT_IMAGE_LIMITS, ImageLimits, embed, load_images, local_sources
from graphsite.builder.model import Finding, Report
from graphsite.builder.render import DEFAULT_FONTS, FONTS, load_theme, render
from graphsite.builder.report import report_from_source
from graphsite.builder.source import DEFAULT_MAX_BYTES, Source, read_source
from graphsite.errors import BuildError
from graphsite.labels import check_label
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.builder.outline import Outline


@frozen
class BuiltPage:
    html: str
    title: str
    report: Report
    js_bytes: int
    changes: Changes | None = None  # what the page changes against the version it was rendered since (None: none)

    @property
    def sha256(self) -> str:
        """Return the sha256 of the page's UTF-8 bytes (hex): made when asked (deploy, --json), not by every build."""
        return digests.sha256(self.html.encode("utf-8")).hexdigest()


def _warnings(report: Report, fonts: str) -> tuple[Finding, ...]:
    warnings = report.warnings
    if report.front.rules and not report.anchor("3.2"):
        warnings += (Finding("rules-target-missing",
                             "front matter lists rules but no heading is numbered 3.2 to link them to"),)
    if fonts == "system" and report.images:
        warnings += (Finding("external-images", f"--fonts system, but the page still loads {len(report.images)} "
                             f"image(s) from other sites (first {report.images[0]}): readers' browsers will "
                             "request them"),)
    return warnings


def with_local_images(report: Report, source: Source, limits: ImageLimits) -> Report:
    """Return the report with its local images embedded as data URIs (read from beside the report)."""
    fragments = [report.intro_html, report.notes_html, report.references_intro_html, report.references_after_html,
                 *(p for s in report.sections for p in (s.summary_html, s.detail_html))]
    sources = local_sources(fragments)
    if not sources:
        return report
    uris, missing = load_images(source.path, source.body, source.body_line, sources, limits)
    sections = tuple(dataclasses.replace(s, summary_html=embed(s.summary_html, uris),
                                         detail_html=embed(s.detail_html, uris)) for s in report.sections)
    return dataclasses.replace(report, sections=sections, intro_html=embed(report.intro_html, uris),
                               notes_html=embed(report.notes_html, uris),
                               references_intro_html=embed(report.references_intro_html, uris),
                               references_after_html=embed(report.references_after_html, uris),
                               warnings=(*report.warnings, *missing))


def page_from_source(source: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
                     max_bytes: int = DEFAULT_MAX_BYTES, domain: str = "", indexable: bool = False,
                     images: ImageLimits = DEFAULT_IMAGE_LIMITS) -> BuiltPage:
    """Return the page built from `source` (without the citation findings: see
    graphsite.usecases.build.checked_page); `domain` makes the canonical URL when the subdomain is known,
    `indexable` lets search engines index it, `images` limits the local images embedded.
    Raises SourceError/BuildError, writes nothing."""
    if subdomain is not None:
        subdomain = check_label(subdomain)  # before the report is read: a wrong name costs no build
    report = source_report(source, fonts=fonts, max_bytes=max_bytes, images=images)
    return rendered(report, subdomain=subdomain, fonts=fonts, domain=domain, indexable=indexable)


def source_report(source: Path, *, fonts: str = DEFAULT_FONTS, max_bytes: int = DEFAULT_MAX_BYTES,
                  images: ImageLimits = DEFAULT_IMAGE_LIMITS) -> Report:
    """Return the report read from `source`, its local images embedded and its build warnings made (what the
    page will show, not rendered yet: see `rendered`). Raises SourceError/BuildError."""
    if fonts not in FONTS:
        raise BuildError(f"--fonts {fonts!r}: expected one of {', '.join(FONTS)}")
    text = read_source(Path(source), max_bytes=max_bytes)
    report = with_local_images(report_from_source(text), text, images)
    return dataclasses.replace(report, warnings=_warnings(report, fonts))


def rendered(report: Report, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS, domain: str = "",
             indexable: bool = False, since: Outline | None = None, note: bool = True) -> BuiltPage:
    """Return the page of `report`, rendered once; with `since` (the previous version's outline), also what it
    changes against it, on the page's "Changed since" note when `note` and there is something to note (the
    report's `changes` are then those the note shows); pure."""
    if subdomain is not None:
        subdomain = check_label(subdomain)  # the rule `deploy` and `teardown` apply to the same name
    theme = load_theme()
    page = render(report, subdomain=subdomain, fonts=fonts, theme=theme, domain=domain, indexable=indexable,
                  since=since, note=note)
    if page.noted:
        report = dataclasses.replace(report, changes=page.changes)
    return BuiltPage(html=page.html, title=report.title, report=report, js_bytes=len(theme.js.encode("utf-8")),
                     changes=page.changes)


def check_theme(fonts: str = DEFAULT_FONTS) -> None:
    """Raise BuildError now for what fails a render in a broken installation: a theme file that cannot be read,
    or, when the page embeds its fonts, a face (both read again by the render, the theme from `load_theme`'s
    memo). For a use case with slow work before the render (a link check, the live page's read): its error
    comes first."""
    theme = load_theme()
    if fonts == "embedded":
        check_faces(theme.directory / "fonts")


def write_page(page: BuiltPage, out_dir: Path) -> Path:
    """Write `out_dir/index.html` atomically (a temporary file, then rename) and return its path."""
    target = Path(out_dir) / "index.html"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, page.html.encode("utf-8"))
    except OSError as exc:
        raise BuildError(f"{target}: cannot write the page: {exc.strerror or exc}",
                         hint="choose a writable --out directory") from None
    return target
