"""The page's "Changed since <date>" note: what it lists (sections new, rewritten, removed, with new sources; the
references), every title and the date escaped, a long list cut short, no note and no byte changed when nothing
is to be noted, the outline (what `diff` reads) untouched, the note kept by a version that changes nothing; and
`graphsite build --since OLD` on real files."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsite.builder import changenote, render
from graphsite.builder.build import BuiltPage, page_from_source, rendered
from graphsite.builder.changenote import LISTED, note, note_html
from graphsite.builder.compare import compare
from graphsite.builder.outline import Outline, ReferenceOutline, SectionOutline, read_outline
from graphsite.builder.render import load_theme
from graphsite.errors import BuildError
from graphsite.paths import theme_dir
from tests.builder.conftest import SUBDOMAIN
from tests.builder.test_compare import BASE
from tests.conftest import Calls

EVIL = '<script>alert("x")</script> & \'quotes\''


def _note(changes) -> str:
    return note_html(note(changes))


def _outline(*sections: SectionOutline, date: str = "2026-07-01", refs: int = 1) -> Outline:
    return Outline((("title", "T"), ("date", date)) if date else (("title", "T"),), sections,
                   tuple(ReferenceOutline(n, f"Ref {n}", f"https://r{n}.example/") for n in range(1, refs + 1)))


def _section(number: int, title: str = "", text: str = "some words here", sources: tuple[int, ...] = ()):
    return SectionOutline(f"s{number}", f"§{number}", title or f"Section {number}", text, sources)


def test_every_title_and_the_date_are_escaped_and_nothing_the_report_wrote_becomes_markup():
    old = _outline(_section(1), _section(2, EVIL), date="<b>July</b>")
    new = _outline(_section(1, text="other words entirely now"), _section(3, EVIL, "a text all of its own"))
    html = _note(compare(old, new))
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None and soup.find("b") is None
    assert soup.h2.get_text() == "Changed since <b>July</b>"
    assert [li.get_text(" ", strip=True) for li in soup.find_all("li")] == [
        "§1 Section 1 rewritten", f"§3 {EVIL} new", f"§2 {EVIL} removed"]
    assert [a["href"] for a in soup.find_all("a")] == ["#s1", "#s3"]  # a removed section has no anchor left
    assert soup.section["aria-labelledby"] == soup.h2["id"] == "changes-title"


@settings(max_examples=60, deadline=None)
@given(title=st.text(min_size=1, max_size=40).map(lambda t: " ".join(t.split())).filter(bool),
       date=st.text(max_size=20).map(lambda t: " ".join(t.split())))  # as the outline reads them: spaces collapsed
def test_any_title_and_date_come_back_as_the_same_text_and_never_as_markup(title: str, date: str):
    old = _outline(_section(1), date=date)
    new = _outline(_section(1), _section(2, title, "words that only the new section has"))
    soup = BeautifulSoup(_note(compare(old, new)), "html.parser")
    assert [tag.name for tag in soup.find_all(True)] == ["section", "h2", *(["time"] if date else []), "ul", "li",
                                                         "a", "span"]
    assert soup.li.a.get_text() == f"§2 {title}" and (not date or soup.time.get_text() == date)


def test_nothing_changed_or_only_the_front_matter_gives_no_note_and_the_same_page(tmp_path: Path):
    assert note_html(None) == ""
    same = _outline(_section(1))
    assert _note(compare(same, same)) == ""
    assert _note(compare(same, _outline(_section(1), date="2026-08-01"))) == ""  # the header shows it
    source = tmp_path / "report.md"
    source.write_text(BASE, encoding="utf-8")
    page = page_from_source(source)
    for old in (read_outline(page.html), read_outline(page.html.replace("2026-01-01", "2025-12-31"))):
        noted = rendered(page.report, since=old)
        assert noted.html == page.html  # no byte changed: no note, no style for it
        assert noted.report.changes is None and noted.changes is not None
        assert noted.changes.changed == (old != read_outline(page.html))


def test_many_sections_are_cut_short_and_citations_and_references_are_noted():
    old = _outline(*(_section(n, sources=(1,)) for n in range(1, 4)), refs=1)
    added = [_section(n) for n in range(4, 4 + LISTED + 3)]
    new = _outline(_section(1, sources=(2,)), _section(2, sources=(1,)), _section(3, sources=(1,)), *added, refs=2)
    soup = BeautifulSoup(_note(compare(old, new)), "html.parser")
    items = [li.get_text(" ", strip=True) for li in soup.find_all("li")]
    assert items[0] == "§1 Section 1 sources changed" and items[1:LISTED] == [
        f"§{n} Section {n} new" for n in range(4, 4 + LISTED - 1)]  # in the page's order
    assert items[LISTED:] == ["and 4 more sections", "The references changed"]
    assert soup.find("a", string="The references")["href"] == "#references"
    # read back from a page, the note is kept as it is by a version that changes nothing against that page
    page = f'<meta name="generator" content="graphsite"><main>{_note(compare(old, new))}</main><div id="report">'
    kept = dataclasses.replace(new, note=read_outline(page).note)
    assert _note(compare(kept, new)) == _note(compare(old, new))
    assert _note(compare(kept, dataclasses.replace(new, sections=new.sections[1:]))).count("<li>") == 1


def test_build_since_notes_the_changed_sections_on_real_files(run_cli: Callable[..., Result],
                                                             write_md: Callable[..., Path], tmp_path: Path):
    old = write_md(BASE, "old.md")
    result = run_cli("build", str(old), "--out", str(tmp_path / "old"))
    assert result.exit_code == 0, result.output
    new = write_md(BASE.replace("## 2. Method", "## 2. Method <em>&</em> madness")
                   .replace("What could go wrong", "What could still go wrong"), "new.md")
    for since in (old, tmp_path / "old" / "index.html"):  # a report, or the page `build` wrote
        result = run_cli("build", str(new), "--out", str(tmp_path / "new"), "--since", str(since), "--json")
        assert result.exit_code == 0, result.output
        assert "Changes since the previous version: 2 sections rewritten; the page notes them" in result.stderr
        assert json.loads(result.stdout)["changes"]["sections"] == {"added": 0, "removed": 0, "rewritten": 2}
        html = (tmp_path / "new" / "index.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        note = soup.find("section", id="changes")
        assert note.h2.get_text() == "Changed since 2026-01-01" and note.parent.name == "main"
        assert [(a["href"], a.get_text()) for a in note.find_all("a")] == [
            ("#2-method--madness", "§2 Method & madness"), ("#3-risks", "§3 Risks")]
        assert soup.find(id="2-method--madness") and ".changes {" in soup.find_all("style")[-1].get_text()
        assert read_outline(html) == read_outline(html.replace(str(note), ""))  # diff reads past the note

    noted = (tmp_path / "new" / "index.html").read_bytes()  # the same report against its noted page: kept
    result = run_cli("build", str(new), "--out", str(tmp_path / "again"), "--since", str(tmp_path / "new/index.html"))
    assert result.exit_code == 0, result.output
    assert "none (the same sections" in result.stderr and "keeps the note the previous one had" in result.stderr
    assert (tmp_path / "again" / "index.html").read_bytes() == noted

    result = run_cli("build", str(old), "--out", str(tmp_path / "same"), "--since", str(old))
    assert result.exit_code == 0, result.output
    assert "Changes since the previous version: none" in result.stderr
    assert (tmp_path / "same" / "index.html").read_bytes() == (tmp_path / "old" / "index.html").read_bytes()

    result = run_cli("build", str(new), "--out", str(tmp_path / "x"), "--since", str(tmp_path / "gone.md"))
    assert result.exit_code == 1 and "gone.md" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fault", ["missing", "a directory", "not UTF-8"])
def test_a_note_style_that_cannot_be_read_is_a_build_error_naming_it(tmp_path: Path, fault: str):
    """theme/changes.css is read with the theme's other files: a broken installation is one line naming the file,
    never a traceback from the render of a page with a note."""
    theme = tmp_path / "theme"
    shutil.copytree(theme_dir(), theme, ignore=shutil.ignore_patterns("fonts"))
    broken = theme / "changes.css"
    broken.unlink()
    if fault == "a directory":
        broken.mkdir()
    elif fault == "not UTF-8":
        broken.write_bytes(b"\xff\xfe.changes {}")
    source = tmp_path / "report.md"
    source.write_text(BASE, encoding="utf-8")
    page = page_from_source(source)
    old = read_outline(page_from_source(source).html.replace("What could go wrong", "Nothing at all"))
    with pytest.raises(BuildError) as caught:
        render.render(page.report, fonts="system", theme=load_theme(theme), since=old)
    assert caught.value.detail.startswith(f"{broken}: ") and "reinstall graphsite" in (caught.value.hint or "")


def test_a_noted_page_is_rendered_once_its_fonts_subset_once_and_its_csp_holds_what_it_inlines(
        default_page: BuiltPage, calls: Calls):
    """The note, its style, the font stylesheet (subset to the characters the page shows, the note's included)
    and the CSP are put in after the one render; the note is made once."""
    now = read_outline(default_page.html)
    old = dataclasses.replace(now, sections=(*now.sections[:2], *now.sections[3:]))
    for name in ("page_html", "font_face_css"):
        calls.spy(render, name)
    calls.spy(changenote, "noted_sections")
    page = rendered(default_page.report, subdomain=SUBDOMAIN, since=old)
    assert calls == {"page_html": 1, "font_face_css": 1, "noted_sections": 1}, calls
    soup = BeautifulSoup(page.html, "html.parser")
    assert [a.get_text() for a in soup.select("#changes a")] == [now.sections[2].label]
    assert page.report.changes == page.changes and page.changes is not None
    policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    hashes = ["'sha256-" + base64.b64encode(hashlib.sha256(element.string.encode()).digest()).decode() + "'"
              for element in soup.find_all(("style", "script"))]
    assert all(digest in policy for digest in hashes) and ".changes {" in soup.find_all("style")[-1].string
