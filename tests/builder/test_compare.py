"""`graphsite diff` on pairs of reports: sections added, removed, rewritten and retitled; citations and references
changed; front matter changed; no change at all; pages that are not graphsite's. Both sides are built by the real
builder and read back from the real HTML."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import Result

from graphsite.builder.build import page_from_source
from graphsite.builder.compare import Changes, compare
from graphsite.builder.outline import Outline, OutlineError, read_outline
from graphsite.paths import schema_path

BASE = """---
title: Base report
kicker: Draft
date: 2026-01-01
authors: [Ada]
---
# Base report

Opening words of the introduction.

## 1. Claims

The first claim stands here [[1](https://one.example/)] with enough words to count them well.

## 2. Method

How we measured it, in a handful of plain words [[2](https://two.example/)].

## 3. Risks

What could go wrong, and what we did about it.

## References

1. First source. https://one.example/
2. Second source. https://two.example/
"""


def outline(markdown: str, tmp_path: Path, name: str = "report.md") -> Outline:
    path = tmp_path / name
    path.write_text(markdown, encoding="utf-8")
    return read_outline(page_from_source(path, fonts="system").html)


def changes(new: str, tmp_path: Path, old: str = BASE) -> Changes:
    return compare(outline(old, tmp_path, "old.md"), outline(new, tmp_path, "new.md"))


def test_the_outline_reads_what_the_page_shows(tmp_path: Path) -> None:
    read = outline(BASE, tmp_path)
    assert [(s.id, s.index, s.title) for s in read.sections] == [
        ("intro", "", "Introduction"), ("1-claims", "§1", "Claims"), ("2-method", "§2", "Method"),
        ("3-risks", "§3", "Risks")]
    assert read.sections[1].sources == (1,) and read.sections[3].sources == ()
    assert read.sections[1].words == 13  # "The first claim stands here [1] with enough words to count them well."
    assert [(r.number, r.title, r.url) for r in read.references] == [
        (1, "First source", "https://one.example/"), (2, "Second source", "https://two.example/")]
    front = dict(read.front)
    assert (front["title"], front["kicker"], front["date"], front["authors"]) == (
        "Base report", "Draft", "2026-01-01", "Ada")


def test_a_reference_number_int_cannot_read_is_not_a_reference_and_no_traceback(tmp_path: Path) -> None:
    """A page read back (the live one, for deploy's changes line) whose reference number is a digit to
    str.isdigit but not to int ("²"): before, int() raised ValueError, a traceback where "unknown" is due."""
    path = tmp_path / "report.md"
    path.write_text(BASE, encoding="utf-8")
    html = page_from_source(path, fonts="system").html
    assert html.count('value="2"') == 1
    read = read_outline(html.replace('value="2"', 'value="\u00b2"'))
    assert [r.number for r in read.references] == [1]


def test_the_same_report_changes_nothing(tmp_path: Path) -> None:
    found = changes(BASE, tmp_path)
    assert not found.changed and found.lines() == []


def test_a_section_added_and_one_removed(tmp_path: Path) -> None:
    new = BASE.replace("## 3. Risks\n\nWhat could go wrong, and what we did about it.",
                       "## 3. Costs\n\nFour words of costs.")
    found = changes(new, tmp_path)
    assert [(c.change, c.section.id) for c in found.sections] == [("removed", "3-risks"), ("added", "3-costs")]
    assert found.as_json()["sections"][1]["words"] == {"old": 0, "new": 4, "added": 4, "removed": 0}
    assert found.lines() == ["- §3 Risks: removed (10 words)", "+ §3 Costs: added (4 words)"]


def test_a_rewritten_section_counts_the_words_that_came_and_went(tmp_path: Path) -> None:
    new = BASE.replace("How we measured it, in a handful of plain words",
                       "How we measured it, in a handful of plain and careful words, twice over")
    found = changes(new, tmp_path)
    (change,) = found.sections
    assert (change.change, change.section.id, change.old_words) == ("rewritten", "2-method", 11)
    assert (change.words_added, change.words_removed, change.section.words) == (5, 1, 15)
    assert found.lines() == ["~ §2 Method: rewritten, +5 -1 words (11 → 15)"]


def test_a_retitled_section_is_one_section_rewritten(tmp_path: Path) -> None:
    found = changes(BASE.replace("## 2. Method", "## 2. Methods"), tmp_path)
    (change,) = found.sections
    assert (change.change, change.section.id, change.old_title) == ("rewritten", "2-methods", "Method")
    assert change.as_json()["old_title"] == "Method"


def test_citations_and_references_added_and_removed(tmp_path: Path) -> None:
    new = (BASE.replace("[[2](https://two.example/)]", "[[3](https://three.example/)]")
           .replace("2. Second source. https://two.example/", "3. Third source. https://three.example/"))
    found = changes(new, tmp_path)
    (cited,) = found.citations
    assert (cited.section.id, cited.added, cited.removed) == ("2-method", (3,), (2,))
    assert [r.number for r in found.references_added] == [3]
    assert [r.number for r in found.references_removed] == [2]
    assert "~ §2 Method: now cites [3], no longer cites [2]" in found.lines()
    assert "+ reference [3] 'Third source' (https://three.example/)" in found.lines()
    refs = found.as_json()["references"]
    assert refs["removed"] == [{"number": 2, "title": "Second source", "url": "https://two.example/"}]


def test_a_reference_retitled_under_its_number(tmp_path: Path) -> None:
    found = changes(BASE.replace("First source", "First source, revised"), tmp_path)
    assert [(old.title, new.title) for old, new in found.references_changed] == [
        ("First source", "First source, revised")]


def test_front_matter_fields_changed(tmp_path: Path) -> None:
    new = BASE.replace("kicker: Draft\n", "").replace("2026-01-01", "2026-02-01").replace(
        "title: Base report", "title: Base report\nlede: A lede now.")
    found = changes(new, tmp_path)
    assert [(c.field, c.old, c.new) for c in found.front] == [  # the meta description follows the lede
        ("description", "Opening words of the introduction.", "A lede now."), ("kicker", "Draft", ""),
        ("lede", "", "A lede now."), ("date", "2026-01-01", "2026-02-01")]
    assert "~ front matter date: '2026-01-01' → '2026-02-01'" in found.lines()


def test_a_page_graphsite_did_not_build_has_no_outline() -> None:
    with pytest.raises(OutlineError, match="not a page graphsite built"):
        read_outline("<!doctype html><html><head><title>x</title></head><body><p>hi</p></body></html>")
    with pytest.raises(OutlineError, match="#report"):
        read_outline('<html><head><meta name="generator" content="graphsite"></head><body></body></html>')


def test_the_command_human_and_json(run_cli: Callable[..., Result], write_md: Callable[..., Path]) -> None:
    old = write_md(BASE, "old.md")
    new = write_md(BASE.replace("## 2. Method", "## 2. Methods"), "new.md")
    result = run_cli("diff", str(old), str(new))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["~ §2 Methods: rewritten, +0 -0 words (11 → 11), retitled from 'Method'"]
    result = run_cli("diff", str(old), str(new), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    jsonschema.Draft202012Validator(json.loads(schema_path("diff.schema.json").read_text())).validate(data)
    assert data["changed"] is True and data["sections"][0]["old_title"] == "Method"
    assert (data["old_source"], data["new_source"]) == (str(old), str(new))


def test_a_built_page_against_its_markdown(run_cli: Callable[..., Result], write_md: Callable[..., Path],
                                           tmp_path: Path) -> None:
    source = write_md(BASE)
    built = tmp_path / "old.html"
    built.write_text(page_from_source(source, subdomain="pr-1-x").html, encoding="utf-8")
    result = run_cli("diff", str(built), str(source))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("No changes from")


def test_unreadable_inputs_are_errors(run_cli: Callable[..., Result], write_md: Callable[..., Path],
                                      tmp_path: Path) -> None:
    other = tmp_path / "other.html"
    other.write_text("<html><body>not ours</body></html>", encoding="utf-8")
    result = run_cli("diff", str(other), str(write_md(BASE)))
    assert result.exit_code == 1 and "not a page graphsite built" in result.stderr, result.output
    result = run_cli("diff", str(write_md(BASE)))
    assert result.exit_code == 2 and "give the NEW report" in result.stderr, result.output
    result = run_cli("diff", "missing.md", str(write_md(BASE)))
    assert result.exit_code == 2 and "no such file 'missing.md'" in result.stderr, result.output


def test_an_author_s_html_inside_a_section_stays_in_that_section(tmp_path: Path) -> None:
    """Ids and classes the page's own structure uses, written in the report's raw HTML, move no text."""
    sneaky = BASE.replace("What could go wrong, and what we did about it.",
                          '<div id="top"><p class="kicker">sneaky</p></div>\n\n'
                          '<section class="sec" id="notes"><h2>fake</h2></section>\n\nAfter.')
    read = outline(sneaky, tmp_path)
    assert dict(read.front)["kicker"] == "Draft"
    assert [s.id for s in read.sections] == ["intro", "1-claims", "2-method", "3-risks"]
    assert "sneaky" in read.sections[-1].text.split()


def test_diff_builds_with_the_configured_limits(run_cli: Callable[..., Result], write_md: Callable[..., Path],
                                                tmp_path: Path) -> None:
    """diff builds each report as `build` would, with the configuration's limits: an image over
    build.max_image_bytes stops diff as it stops build (diff used the default limit whatever was set)."""
    from tests.builder.conftest import tiny_png

    (tmp_path / "logo.png").write_bytes(tiny_png(64) + bytes(200))  # trailing bytes: still a PNG, 269 bytes
    config = tmp_path / "graphsite.toml"
    config.write_text("[build]\nmax_image_bytes = 100\n")
    old = write_md(BASE, "old.md")
    new = write_md(BASE + "\n![logo](logo.png)\n", "new.md")
    assert (tmp_path / "logo.png").stat().st_size > 100
    result = run_cli("diff", str(old), str(new), "--config", str(config))
    assert result.exit_code == 1 and "more than the limit of 100" in result.stderr, result.stderr
