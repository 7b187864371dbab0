"""The page is rendered once, with random marks standing in for the parts made after the render (the "Changed
since" note, the style sheet, the font stylesheet, the CSP): a report that holds a mark is rendered again, so a
report never changes what a mark's replacement puts where. The mark is the render's argument (as `plan` takes
its clock), so the test can put it in the report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from graphsite.builder.build import source_report
from graphsite.builder.outline import read_outline
from graphsite.builder.render import FONTS, render

MARK = "5eed" * 8  # 32 hex digits, as os.urandom(16).hex() gives
# each mark the render makes from MARK: the note's, the style sheet's, the font stylesheet's, the CSP's
MARKS = [f"{MARK}{part}" for part in "nsfc"]


def _report(marks: list[str]) -> str:
    n, s, f, c = marks
    return f"""---
title: Title {s} {c}
kicker: Kicker {f}
description: Said {n} and {c}
lede: A lede {s}
---
# Title

Opening words {n} {s} {f} {c}, then <span title="{c}" class="x-{s}">raw HTML</span>.

## 1. Claims {n}

A claim [[1](https://one.example/{s}?q={c}#{f})] and a link to [the site](https://two.example/{n}).

## 2. Method {c}

How it was measured, {f}.

## References

1. First source {s}. https://one.example/{s}?q={c}#{f}
"""


@pytest.mark.parametrize("since", [False, True], ids=["once", "since"])
@pytest.mark.parametrize("fonts", FONTS)
def test_a_report_holding_the_marks_renders_the_page_a_report_without_them_would(tmp_path: Path, fonts: str,
                                                                                since: bool) -> None:
    source = tmp_path / "report.md"
    source.write_text(_report(MARKS), encoding="utf-8")
    report = source_report(source, fonts=fonts)
    old = None
    if since:  # the previous version lacked §2: the page notes it, and the note holds the marks too
        now = read_outline(render(report, fonts="system").html)
        old = dataclasses.replace(now, sections=now.sections[:1])
    marked = render(report, fonts=fonts, since=old, mark=MARK)
    normal = render(report, fonts=fonts, since=old)  # its own random mark, which the report does not hold
    assert marked.html == normal.html
    assert all(mark in normal.html for mark in MARKS)  # the report's text, where it put it
    assert marked.noted is normal.noted is since
    if since:
        assert MARKS[3] in normal.html.split('id="changes"', 1)[1].split("</section>", 1)[0]  # in the note


@pytest.mark.parametrize("part", "nsfc")
def test_a_report_holding_one_mark_is_rendered_again(tmp_path: Path, part: str) -> None:
    """Any one mark in the report is enough: with the note and the embedded fonts, every part has its mark."""
    source = tmp_path / "report.md"
    source.write_text(_report([f"{MARK}{part}" if p == part else "plain" for p in "nsfc"]), encoding="utf-8")
    report = source_report(source)
    now = read_outline(render(report, fonts="system").html)
    old = dataclasses.replace(now, sections=now.sections[:1])
    assert render(report, since=old, mark=MARK).html == render(report, since=old).html
