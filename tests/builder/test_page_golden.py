"""The whole page, byte for byte: every part the theme's markup can show (tests/builder/fixtures/every-part.md:
hostile characters in every front-matter field, cards, counter-frame, rules, ladder, subtitle, byline, outline,
notes, grouped references with a duplicate, a placeholder, a private host and none, link-check verdicts) and a
plain document, against pages the Jinja2 template made before `builder/page.py` replaced it; and the page with
its "Changed since" note and the verdicts, rendered once, against the page the two renders before made.

The theme's CSS and scripts are stand-ins here, so a change of style sheet or script does not touch these files.
Regenerate after an intended change of the markup with `GRAPHSITE_UPDATE_GOLDEN=1 pytest
tests/builder/test_page_golden.py` and review the diff of tests/builder/golden/page-*.html.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from graphsite.builder.model import Report, SourceCheck, SourceChecks
from graphsite.builder.outline import Outline, read_outline
from graphsite.builder.render import Theme, render, render_page
from graphsite.builder.report import report_from_source
from graphsite.builder.source import read_source
from graphsite.paths import theme_dir

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
THEME = Theme(css="/* the theme's css */", js="/* the theme's js */", directory=theme_dir(),
              fonts_js="/* the font loader */")
STATES = ("ok", "redirected", "warn", "blocked", "dead", "private", "timeout")


def _report(name: str) -> Report:
    return report_from_source(read_source(HERE / "fixtures" / name))


def _checked(report: Report) -> Report:
    """Return `report` with a verdict of every state on its references' URLs, two days apart."""
    urls = list(dict.fromkeys(r.url for r in report.references if r.url))
    verdicts = tuple((url, SourceCheck(STATES[i % len(STATES)], 404 if i % 3 == 0 else None,
                                       1764547200.0 + 86400 * (i % 2), i % 4 == 0)) for i, url in enumerate(urls))
    return dataclasses.replace(report, checks=SourceChecks(verdicts, 1764547200.0))


CASES: dict[str, tuple[str, bool, dict[str, Any]]] = {
    "every-part-published": ("every-part.md", True, {"fonts": "google", "subdomain": "graph-eng-1a2b3c",
                                                     "domain": "Example.ORG.", "indexable": True,
                                                     "published": "2026-12-01"}),
    "every-part-local": ("every-part.md", False, {"fonts": "system"}),
    "plain": ("plain.md", False, {"fonts": "system", "subdomain": "plain-1"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_page_is_byte_identical_to_its_golden_file(case: str) -> None:
    name, checked, options = CASES[case]
    report = _report(name)
    page = render_page(_checked(report) if checked else report, theme=THEME, **options)
    golden = GOLDEN / f"page-{case}.html"
    expected = golden.read_text(encoding="utf-8") if golden.exists() else ""
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN"):  # written for the next run; this one still compares the old
        golden.write_text(page, encoding="utf-8")
    assert page == expected, f"the page differs from {golden.name}"


def _since(report: Report) -> Outline:
    """Return the outline of an earlier version of `report`'s page: its second section shorter, its third not
    there yet, its first reference neither, dated 2026-07-01."""
    now = read_outline(render_page(report, theme=THEME, fonts="system"))
    sections = (now.sections[0], dataclasses.replace(now.sections[1], text="Shorter."), *now.sections[3:])
    return Outline((*((k, v) for k, v in now.front if k != "date"), ("date", "2026-07-01")), sections,
                   now.references[1:])


def test_the_noted_page_rendered_once_is_byte_identical_to_its_golden_file() -> None:
    """The note and its style, the verdicts and the CSP are those the page had when it was rendered twice (once
    for the outline the changes are read from, once with the note): golden file made by that code."""
    report = _report("every-part.md")
    page = render(_checked(report), theme=THEME, fonts="system", subdomain="graph-eng-1a2b3c", domain="example.org",
                  since=_since(report))
    assert page.noted and page.changes is not None and page.changes.changed
    golden = GOLDEN / "page-noted.html"
    expected = golden.read_text(encoding="utf-8")
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN"):
        golden.write_text(page.html, encoding="utf-8")
    assert page.html == expected, f"the page differs from {golden.name}"
