"""The build use case: the builder's page, the citation checks on its report, --strict, the written file.

This module sits above both `graphsite.builder` and `graphsite.citations`: the builder never imports the
citation checks, and the citation checks import only the builder's report model (`builder/model.py`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite.builder import build as builder
from graphsite.builder.build import BuiltPage, write_page
from graphsite.builder.images import IMAGE_MISSING, ImageLimits
from graphsite.builder.model import Finding
from graphsite.builder.render import DEFAULT_FONTS
from graphsite.builder.targets import MISSING_FRAGMENT
from graphsite.citations.integrity import check_citations, citation_counts
from graphsite.errors import CitationError

if TYPE_CHECKING:
    from graphsite.config import Config

# Build warnings that --strict treats as errors, like an unaccepted citation finding.
STRICT_WARNINGS = frozenset({MISSING_FRAGMENT, IMAGE_MISSING})

__all__ = ["BuildOutcome", "BuiltPage", "build", "build_page", "unaccepted", "write_page"]


@dataclass(frozen=True)
class BuildOutcome:
    """What `graphsite build` did: the file written, the page, and how long it took."""

    path: Path
    page: BuiltPage
    seconds: float

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


def build_page(source: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
               config: Config | None = None) -> BuiltPage:
    """Return the page built from `source` with the citation findings on its report (accepted ones carry
    their reason); raises SourceError/BuildError, writes nothing."""
    settings: dict[str, Any] = {}
    if config is not None:
        settings = {"max_bytes": config.build.max_bytes, "domain": config.site.domain,
                    "indexable": config.site.indexable,
                    "images": ImageLimits(config.build.max_image_bytes, config.build.max_page_image_bytes)}
    page = builder.build_page(source, subdomain=subdomain, fonts=fonts, **settings)
    report = page.report
    accept = config.citations.accept if config is not None else ()
    links = (*report.written_links, *((url, 0) for url in report.links))  # a bare URL's line is not known here
    findings: tuple[Finding, ...] = tuple(check_citations(report.citations, report.references, accept, links))
    return dataclasses.replace(page, report=dataclasses.replace(report, findings=findings))


def unaccepted(page: BuiltPage) -> list[Finding]:
    """Return what fails a --strict build: the unaccepted citation findings, and the build warnings that are
    errors under --strict (a link to a #fragment of the page that does not exist), in line order."""
    strict = [w for w in page.report.warnings if w.code in STRICT_WARNINGS]
    return sorted([*(f for f in page.report.findings if not f.accepted), *strict], key=lambda f: f.line or 0)


def build(source: Path, out_dir: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
          strict: bool = False, config: Config | None = None) -> BuildOutcome:
    """Build `source` into `out_dir/index.html`; with `strict`, anything `unaccepted` returns fails the build."""
    start = time.perf_counter()
    page = build_page(source, subdomain=subdomain, fonts=fonts, config=config)
    problems = unaccepted(page)
    if strict and problems:
        first = problems[0]
        where = f"{source}:{first.line}: " if first.line else f"{source}: "
        raise CitationError(f"{where}{first.code}: {first.message} ({len(problems)} unaccepted finding(s), "
                            "nothing written)",
                            hint="fix the citations and links, or accept a citation finding with a reason "
                                 "under [citations] in graphsite.toml")
    path = write_page(page, out_dir)
    return BuildOutcome(path, page, time.perf_counter() - start)
