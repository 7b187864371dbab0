"""The build verb: Markdown report → BuiltPage (pure-ish) → site/index.html (atomic write)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite.builder.model import Finding, Report
from graphsite.builder.render import DEFAULT_FONTS, FONTS, load_theme, render_page
from graphsite.builder.report import read_report
from graphsite.citations.integrity import check_citations, citation_counts
from graphsite.errors import BuildError, CitationError
from graphsite.labels import check_label

if TYPE_CHECKING:
    from graphsite.config import Config


@dataclass(frozen=True)
class BuiltPage:
    html: str
    sha256: str
    title: str
    report: Report
    js_bytes: int


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


def _findings(report: Report, config: Config | None) -> tuple[Finding, ...]:
    """Return the citation integrity findings (accepted ones carry their reason)."""
    accept = config.citations.accept if config is not None else ()
    return tuple(check_citations(report.citations, report.references, accept))


def _warnings(report: Report) -> tuple[Finding, ...]:
    if report.front.rules and not report.anchor("3.2"):
        return (*report.warnings, Finding("rules-target-missing",
                                          "front matter lists rules but no heading is numbered 3.2 to link them to"))
    return report.warnings


def build_page(source: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
               config: Config | None = None) -> BuiltPage:
    """Return the page built from `source`; raises SourceError/BuildError, writes nothing."""
    if subdomain is not None:
        subdomain = check_label(subdomain)  # the rule `deploy` and `teardown` apply to the same name
    if fonts not in FONTS:
        raise BuildError(f"--fonts {fonts!r}: expected one of {', '.join(FONTS)}")
    report = read_report(Path(source))
    report = dataclasses.replace(report, findings=_findings(report, config), warnings=_warnings(report))
    theme = load_theme()
    html = render_page(report, subdomain=subdomain, fonts=fonts, theme=theme,
                       domain=config.site.domain if config is not None else "",
                       indexable=config.site.indexable if config is not None else False)
    return BuiltPage(html=html, sha256=hashlib.sha256(html.encode("utf-8")).hexdigest(), title=report.title,
                     report=report, js_bytes=len(theme.js.encode("utf-8")))


def write_page(page: BuiltPage, out_dir: Path) -> Path:
    """Write `out_dir/index.html` atomically (a temporary file, then rename) and return its path."""
    out_dir = Path(out_dir)
    target, temporary = out_dir / "index.html", out_dir / f".index.html.{os.getpid()}.tmp"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(handle, "wb") as stream:
            stream.write(page.html.encode("utf-8"))
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)  # a failed build leaves nothing behind
        raise BuildError(f"{target}: cannot write the page: {exc.strerror}",
                         hint="choose a writable --out directory") from None
    return target


def unaccepted(page: BuiltPage) -> list[Finding]:
    return [finding for finding in page.report.findings if not finding.accepted]


def build(source: Path, out_dir: Path, *, subdomain: str | None = None, fonts: str = DEFAULT_FONTS,
          strict: bool = False, config: Config | None = None) -> BuildOutcome:
    """Build `source` into `out_dir/index.html`; with `strict`, any unaccepted finding fails the build."""
    start = time.perf_counter()
    page = build_page(source, subdomain=subdomain, fonts=fonts, config=config)
    problems = unaccepted(page)
    if strict and problems:
        first = problems[0]
        where = f"{source}:{first.line}: " if first.line else f"{source}: "
        raise CitationError(f"{where}{first.code}: {first.message} ({len(problems)} unaccepted finding(s), "
                            "nothing written)",
                            hint="fix the citations, or accept a finding with a reason under [citations] "
                                 "in graphsite.toml")
    path = write_page(page, out_dir)
    return BuildOutcome(path, page, time.perf_counter() - start)
