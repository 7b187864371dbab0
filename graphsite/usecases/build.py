"""The build use case: the builder's page, the citation checks on its report, --strict, the written file.

This module sits above both `graphsite.builder` and `graphsite.citations`: the builder never imports the
citation checks, and the citation checks import only the builder's report model (`builder/model.py`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite.builder import build as builder
from graphsite.builder.build import BuiltPage, write_page
from graphsite.builder.images import IMAGE_MISSING, ImageLimits
from graphsite.builder.model import Finding, Report, SourceCheck, SourceChecks
from graphsite.builder.render import DEFAULT_FONTS
from graphsite.builder.targets import MISSING_FRAGMENT
from graphsite.citations.integrity import check_citations, citation_counts
from graphsite.errors import CitationError
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.builder.outline import Outline
    from graphsite.citations.results import LinkReport
    from graphsite.config import Config

# Build warnings that --strict treats as errors, like an unaccepted citation finding.
STRICT_WARNINGS = frozenset({MISSING_FRAGMENT, IMAGE_MISSING})

__all__ = ["BuildOutcome", "BuiltPage", "build", "checked_page", "checked_report", "rendered_page", "unaccepted",
           "write_page"]


@frozen
class BuildOutcome:
    """What `graphsite build` did: the file written, the page, how long it took, and the link check's report
    (build --check-links; its verdicts are on the page)."""

    path: Path
    page: BuiltPage
    seconds: float
    links: LinkReport | None = None
    changes: Changes | None = None  # what the page changes against build --since OLD (None: not asked)

    def summary(self) -> dict[str, Any]:
        """Return the --json object."""
        return {"output": str(self.path), **self.counts, "sha256": self.page.sha256, "title": self.page.title,
                "js_bytes": self.page.js_bytes, "warnings": self.warnings}

    @functools.cached_property  # made once for the summary line and --json's object alike, and only when asked
    def counts(self) -> dict[str, Any]:
        """The summary line's numbers: the page's bytes, its sections and its citations' counts."""
        report = self.page.report
        return {"bytes": len(self.page.html.encode("utf-8")), "sections": len(report.sections),
                "citations": citation_counts(report.citations, report.references, report.links).as_dict()}

    @functools.cached_property
    def warnings(self) -> list[dict[str, Any]]:
        """The build's warnings and the citation findings, as the --json object lists them."""
        report = self.page.report
        return [{"code": f.code, "message": f.message, "line": f.line, "number": f.number,
                 **({"accepted": f.accepted} if f.accepted else {})} for f in (*report.warnings, *report.findings)]


def build_settings(config: Config) -> dict[str, Any]:
    """Return the builder's settings from the configuration (page_from_source's keywords), for every use case
    that builds a page: the same limits and site whatever the command."""
    return {**_limits(config), **_site(config)}


def _limits(config: Config | None) -> dict[str, Any]:
    """Return the limits of what a report may bring (source_report's keywords; none: the builder's defaults)."""
    if config is None:
        return {}
    return {"max_bytes": config.build.max_bytes,
            "images": ImageLimits(config.build.max_image_bytes, config.build.max_page_image_bytes)}


def _site(config: Config | None) -> dict[str, Any]:
    """Return the site the page is rendered for (rendered's keywords; none: the builder's defaults)."""
    return {} if config is None else {"domain": config.site.domain, "indexable": config.site.indexable}


def checked_report(source: Path, *, fonts: str = DEFAULT_FONTS, config: Config | None = None) -> Report:
    """Return the report read from `source` with the citation findings on it (accepted ones carry their reason),
    not rendered yet (`rendered_page`); raises SourceError/BuildError."""
    report = builder.source_report(source, fonts=fonts, **_limits(config))
    accept = (*(config.citations.accept if config is not None else ()), *report.front.accept)
    links = (*report.written_links, *((url, 0) for url in report.links))  # a bare URL's line is not known here
    findings: tuple[Finding, ...] = tuple(check_citations(report.citations, report.references, accept, links))
    return dataclasses.replace(report, findings=findings)


def rendered_page(report: Report, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
                  config: Config | None = None, since: Outline | None = None, note: bool = True) -> BuiltPage:
    """Return the page of `report`, rendered once for the configuration's site; with `since` (the previous
    version's outline), the page knows what it changes against it, and notes it when `note` (builder.rendered)."""
    return builder.rendered(report, subdomain=subdomain, fonts=fonts, since=since, note=note, **_site(config))


def checked_page(source: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
                 config: Config | None = None) -> BuiltPage:
    """Return the page built from `source` with the citation findings on its report (accepted ones carry
    their reason); raises SourceError/BuildError, writes nothing."""
    return rendered_page(checked_report(source, fonts=fonts, config=config), subdomain=subdomain, fonts=fonts,
                         config=config)


def unaccepted(report: Report) -> list[Finding]:
    """Return what fails a --strict build: the unaccepted citation findings, and the build warnings that are
    errors under --strict (a link to a #fragment of the page that does not exist), in line order."""
    strict = [w for w in report.warnings if w.code in STRICT_WARNINGS]
    return sorted([*(f for f in report.findings if not f.accepted), *strict], key=lambda f: f.line or 0)


def build(source: Path, out_dir: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
          strict: bool = False, config: Config | None = None, check_links: bool = False,
          since: Path | None = None) -> BuildOutcome:
    """Build `source` into `out_dir/index.html`; with `strict`, anything `unaccepted` returns fails the build
    (before any link is checked); with `check_links`, every outbound link is checked and the reference list
    says what came of it (a dead link does not stop the page: the caller decides, from the outcome's links);
    with `since` (a page or report: the previous version), the page notes what changed since it.
    The page is rendered once, when all it shows is known: the findings, the links' verdicts, the changes."""
    start = time.perf_counter()
    old = _outline(since, config) if since is not None else None  # an unreadable OLD fails before any work
    report = checked_report(source, fonts=fonts, config=config)
    problems = unaccepted(report)
    if strict and problems:
        first = problems[0]
        where = f"{source}:{first.line}: " if first.line else f"{source}: "
        raise CitationError(f"{where}{first.code}: {first.message} ({len(problems)} unaccepted finding(s), "
                            "nothing written)",
                            hint=_strict_hint(first))
    links = None
    if check_links:
        builder.check_theme(fonts)  # a broken installation fails before the links are checked, not after
        report, links = _checked(source, report, config or _default_config())
    page = rendered_page(report, subdomain=subdomain, fonts=fonts, config=config, since=old)
    path = write_page(page, out_dir)
    return BuildOutcome(path, page, time.perf_counter() - start, links, page.changes)


def _outline(path: Path, config: Config | None) -> Outline:
    """Return the outline of the previous version, a page or a report (read as `graphsite diff` reads it)."""
    from graphsite.usecases.diff import outline

    return outline(path, config or _default_config())


def _default_config() -> Config:
    from graphsite.config import Config

    return Config()


def _checked(source: Path, report: Report, config: Config) -> tuple[Report, LinkReport]:
    """Return the report with every outbound link's verdict (which its reference list shows), and the link
    check's report."""
    from graphsite.citations.live import check_links, results_by_url
    from graphsite.usecases.links import page_links

    links = page_links(source, report, config)
    checked = check_links(links, config)
    verdicts = tuple((url, SourceCheck(r.state, r.status, r.checked_at, bool(r.challenge)))
                     for url, r in results_by_url(links, checked).items())
    return dataclasses.replace(report, checks=SourceChecks(verdicts, time.time())), checked


def _strict_hint(first: Finding) -> str:
    """What can end the first --strict failure: a link or image is fixed in the report (nothing accepts it); a
    citation finding is fixed, or accepted with a reason."""
    if first.code in STRICT_WARNINGS:
        return "fix the link or the image in the report: --strict accepts no missing fragment or image"
    return ("fix the citation, or accept the finding with a reason: `accept:` in the report's front matter, or "
            "[[citations.accept]] in graphsite.toml")

