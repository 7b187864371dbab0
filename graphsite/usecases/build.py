"""The build use case: the builder's page, the citation checks on its report, --strict, the written file.

This module sits above both `graphsite.builder` and `graphsite.citations`: the builder never imports the
citation checks, and the citation checks import only the builder's report model (`builder/model.py`).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite.builder import build as builder
from graphsite.builder.build import BuiltPage, write_page
from graphsite.builder.images import IMAGE_MISSING, ImageLimits
from graphsite.builder.model import Finding, SourceCheck, SourceChecks
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

__all__ = ["BuildOutcome", "BuiltPage", "build", "checked_page", "unaccepted", "write_page"]


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
        report = self.page.report
        return {
            "output": str(self.path),
            "bytes": len(self.page.html.encode("utf-8")),
            "sha256": self.page.sha256,
            "title": self.page.title,
            "sections": len(report.sections),
            "citations": citation_counts(report.citations, report.references, report.links).as_dict(),
            "js_bytes": self.page.js_bytes,
            "warnings": [{"code": f.code, "message": f.message, "line": f.line, "number": f.number,
                          **({"accepted": f.accepted} if f.accepted else {})}
                         for f in (*report.warnings, *report.findings)],
        }


def build_settings(config: Config) -> dict[str, Any]:
    """Return the builder's settings from the configuration (page_from_source's keywords), for every use case
    that builds a page: the same limits and site whatever the command."""
    return {"max_bytes": config.build.max_bytes, "domain": config.site.domain, "indexable": config.site.indexable,
            "images": ImageLimits(config.build.max_image_bytes, config.build.max_page_image_bytes)}


def checked_page(source: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
               config: Config | None = None) -> BuiltPage:
    """Return the page built from `source` with the citation findings on its report (accepted ones carry
    their reason); raises SourceError/BuildError, writes nothing."""
    settings = build_settings(config) if config is not None else {}
    page = builder.page_from_source(source, subdomain=subdomain, fonts=fonts, **settings)
    report = page.report
    accept = (*(config.citations.accept if config is not None else ()), *report.front.accept)
    links = (*report.written_links, *((url, 0) for url in report.links))  # a bare URL's line is not known here
    findings: tuple[Finding, ...] = tuple(check_citations(report.citations, report.references, accept, links))
    return dataclasses.replace(page, report=dataclasses.replace(report, findings=findings))


def with_changes(page: BuiltPage, old: Outline, *, note: bool, subdomain: str | None = None,
                 fonts: str = DEFAULT_FONTS, config: Config | None = None) -> tuple[BuiltPage, Changes]:
    """Return the page, rendered again with its "Changed since" note when `note` and it has something to note,
    and what it changes against `old` (the previous version's outline)."""
    from graphsite.builder.changenote import has_note
    from graphsite.builder.compare import compare
    from graphsite.builder.outline import read_outline

    changes = compare(old, read_outline(page.html, where="the new page"))
    if not note or not has_note(changes):
        return page, changes
    settings = build_settings(config) if config is not None else {}
    report = dataclasses.replace(page.report, changes=changes)
    return builder.rendered(report, subdomain=subdomain, fonts=fonts, domain=settings.get("domain", ""),
                            indexable=settings.get("indexable", False)), changes


def unaccepted(page: BuiltPage) -> list[Finding]:
    """Return what fails a --strict build: the unaccepted citation findings, and the build warnings that are
    errors under --strict (a link to a #fragment of the page that does not exist), in line order."""
    strict = [w for w in page.report.warnings if w.code in STRICT_WARNINGS]
    return sorted([*(f for f in page.report.findings if not f.accepted), *strict], key=lambda f: f.line or 0)


def build(source: Path, out_dir: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
          strict: bool = False, config: Config | None = None, check_links: bool = False,
          since: Path | None = None) -> BuildOutcome:
    """Build `source` into `out_dir/index.html`; with `strict`, anything `unaccepted` returns fails the build
    (before any link is checked); with `check_links`, every outbound link is checked and the reference list
    says what came of it (a dead link does not stop the page: the caller decides, from the outcome's links);
    with `since` (a page or report: the previous version), the page notes what changed since it."""
    start = time.perf_counter()
    old = _outline(since, config) if since is not None else None  # an unreadable OLD fails before any work
    page = checked_page(source, subdomain=subdomain, fonts=fonts, config=config)
    changes = None
    if old is not None:
        page, changes = with_changes(page, old, note=True, subdomain=subdomain, fonts=fonts, config=config)
    problems = unaccepted(page)
    if strict and problems:
        first = problems[0]
        where = f"{source}:{first.line}: " if first.line else f"{source}: "
        raise CitationError(f"{where}{first.code}: {first.message} ({len(problems)} unaccepted finding(s), "
                            "nothing written)",
                            hint=_strict_hint(first))
    links = None
    if check_links:
        page, links = _checked(source, page, subdomain=subdomain, fonts=fonts, config=config or _default_config())
    path = write_page(page, out_dir)
    return BuildOutcome(path, page, time.perf_counter() - start, links, changes)


def _outline(path: Path, config: Config | None) -> Outline:
    """Return the outline of the previous version, a page or a report (read as `graphsite diff` reads it)."""
    from graphsite.usecases.diff import outline

    return outline(path, config or _default_config())


def _default_config() -> Config:
    from graphsite.config import Config

    return Config()


def _checked(source: Path, page: BuiltPage, *, subdomain: str | None, fonts: str, config: Config
             ) -> tuple[BuiltPage, LinkReport]:
    """Return the page rendered again with every outbound link's verdict, and the link check's report."""
    from graphsite.citations.live import check_links, results_by_url
    from graphsite.usecases.links import page_links

    links = page_links(source, page.report, config)
    report = check_links(links, config)
    verdicts = tuple((url, SourceCheck(r.state, r.status, r.checked_at, bool(r.challenge)))
                     for url, r in results_by_url(links, report).items())
    checked = dataclasses.replace(page.report, checks=SourceChecks(verdicts, time.time()))
    return builder.rendered(checked, subdomain=subdomain, fonts=fonts, domain=config.site.domain,
                            indexable=config.site.indexable), report


def _strict_hint(first: Finding) -> str:
    """What can end the first --strict failure: a link or image is fixed in the report (nothing accepts it); a
    citation finding is fixed, or accepted with a reason."""
    if first.code in STRICT_WARNINGS:
        return "fix the link or the image in the report: --strict accepts no missing fragment or image"
    return ("fix the citation, or accept the finding with a reason: `accept:` in the report's front matter, or "
            "[[citations.accept]] in graphsite.toml")

