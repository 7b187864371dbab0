"""Any Markdown builds; citations and references are read exactly, with their lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from graphsite.builder.model import InlineCitation, Reference
from graphsite.usecases.build import checked_page

HERE = Path(__file__).resolve().parent
PLAIN = HERE / "fixtures" / "plain.md"
CITATIONS = HERE / "fixtures" / "citations.md"
CORPUS = HERE.parents[1] / "tests" / "corpus"


def _soup(path: Path, **options) -> BeautifulSoup:
    return BeautifulSoup(checked_page(path, **options).html, "html.parser")


def test_plain_markdown_builds_without_cards_or_references():
    soup = _soup(PLAIN)
    assert soup.title.string == "Plain Markdown Title"
    assert soup.h1.get_text() == "Plain Markdown Title"
    assert soup.find(id="cards") is None and soup.find(id="rules") is None and soup.find(id="ladder") is None
    assert soup.find(id="references") is None
    sections = soup.find(id="report").find_all("section", recursive=False)
    assert [s.h2.find(class_="idx").get_text() for s in sections] == ["§1", "§2", "§3"]
    assert [s.h2["id"] for s in sections] == ["setup", "setup-1", "usage"]
    assert sections[0].find(class_="summary").get_text(strip=True) == "First paragraph of setup."
    assert "Deep text." in sections[0].details.get_text()
    cells = sections[2].find_all(["th", "td"])
    assert [c.get("class") for c in cells] == [["al-left"], ["al-right"]] * 2


def test_a_heading_number_is_written_as_one(write_md):
    source = write_md("# T\n\n## 1. Intro\n\n## 2026 roadmap\n\n## 3.2 Rules\n\n## 4.1. More\n\n"
                      "## 1.5x faster\n\nSee §3.2, §4.1 and §2026.\n")
    soup = BeautifulSoup(checked_page(source).html, "html.parser")
    headings = [(h.find(class_="idx").get_text(), h.get_text(" ", strip=True).split(" ", 1)[1].rstrip(" #"))
                for h in soup.select("#report section > h2")]
    assert headings == [("§1", "Intro"), ("§", "2026 roadmap"), ("§3.2", "Rules"), ("§4.1", "More"),
                        ("§", "1.5x faster")]
    assert [a.get_text() for a in soup.find_all("a", class_="xref")] == ["§3.2", "§4.1"]


def test_footnotes_render_as_notes():
    soup = _soup(PLAIN)
    notes = soup.find(id="notes").find_all("li")
    assert len(notes) == 2
    refs = soup.find(id="report").find_all("sup", class_="footnote-ref")
    assert len(refs) == 2
    for ref, note in zip(refs, notes, strict=False):
        assert ref.a["href"] == f"#{note['id']}"
        assert soup.find(id=ref.a["id"]) is ref.a
        assert note.find("a", class_="footnote-backref")["href"] == f"#{ref.a['id']}"
    assert notes[1].find("a", href="https://notes.example/") is not None


def test_citations_with_numbers_urls_and_lines():
    report = checked_page(CITATIONS).report
    assert report.citations == (
        InlineCitation(1, "https://one.example/", 8, "1-claims"),
        InlineCitation(3, "https://three.example/", 9, "1-claims"),
        InlineCitation(11, "https://eleven.example/", 9, "1-claims"),
        InlineCitation(1, "https://one.example/", 14, "2-more-claims"),
        InlineCitation(3, "https://other.example/", 14, "2-more-claims"),
        InlineCitation(2, "https://two.example/", 16, "2-more-claims"),
        InlineCitation(11, "https://eleven.example/", 16, "2-more-claims"),
    )
    assert [s.sources for s in report.sections] == [(1, 3, 11), (1, 3, 2, 11)]


def test_references_with_numbers_urls_titles_groups_and_lines():
    report = checked_page(CITATIONS).report
    assert report.references == (
        Reference(1, "https://one.example/", "First source", 24, "Primary"),
        Reference(2, "https://two.example/", "Second source (cited with a note)", 25, "Primary"),
        Reference(3, "https://three.example/", "Third source", 29, "Secondary"),
        Reference(11, "https://news.ycombinator.com/item?id=...", "Eleventh source, a placeholder", 30,
                  "Secondary"),
    )


@pytest.mark.parametrize("title, is_list", [
    ("References", True), ("7. Sources", True), ("Reference list (60+ citations)", True), ("Bibliography", True),
    ("2. Data sources", False), ("Primary sources (with what each one claims)", False),
])
def test_the_reference_list_is_a_section_titled_as_one(write_md, title, is_list):
    source = write_md(f"# T\n\n## 1. Claim\n\nText [[1](https://a.example/)].\n\n## {title}\n\n"
                      "1. First, https://a.example/\n2. Second\n\n## Closing\n\nEnd.\n")
    report = checked_page(source).report
    titles = [s.title for s in report.sections]
    if is_list:
        assert report.references_title == title and [r.number for r in report.references] == [1, 2]
        assert titles == ["Claim", "Closing"]
    else:
        assert report.references == () and report.references_title == ""
        assert len(titles) == 3 and title.split(". ")[-1] == titles[1]


def test_citation_rendering_and_cross_references():
    soup = _soup(CITATIONS)
    first = soup.find(id="report").find("section")
    assert [(s.a.get_text(), s.a["href"]) for s in first.find_all("sup", class_="cite")] == [
        ("[1]", "https://one.example/"), ("[3]", "https://three.example/"), ("[11]", "#ref-11")]
    assert "[[" not in first.get_text() and "]]" not in first.get_text()
    assert first.find("a", href="https://two.example/").get_text() == "2", "a bare [2](url) stays a link"
    second = soup.find(id="report").find_all("section")[1]
    assert [(a.get_text(), a["href"]) for a in second.find_all("a", class_="xref")] == [("§1", "#1-claims")]
    assert second.find("code").get_text() == "§2 in code"
    backlinks = soup.find(id="ref-3").select(".cited-in a")
    assert [a["href"] for a in backlinks] == ["#1-claims", "#2-more-claims"]
    assert [a["href"] for a in soup.find(id="ref-2").select(".cited-in a")] == ["#2-more-claims"]
    assert soup.find(id="ref-1").select(".cited-in a")[0]["href"] == "#1-claims"
    # A group with a note, or with a mistyped bracket, keeps the author's brackets around its superscripts.
    text = " ".join(second.get_text().split())
    assert 'With a note [[2], "a note"] and a typo [[11]).' in text


def test_json_and_stderr_summary(run_cli, tmp_path):
    out = tmp_path / "site"
    result = run_cli("build", str(CITATIONS), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    written = (out / "index.html").read_bytes()
    import hashlib

    assert data["output"] == str(out / "index.html")
    assert data["bytes"] == len(written) and data["sha256"] == hashlib.sha256(written).hexdigest()
    assert data["sections"] == 2
    assert data["citations"] == {"inline": 7, "references": 4, "unique_urls": 7}
    assert 0 < data["js_bytes"] <= 5120
    assert all(set(w) >= {"code", "message", "line", "number"} for w in data["warnings"])
    findings = checked_page(CITATIONS).report.findings
    citation_warnings = [w for w in data["warnings"] if w["code"].startswith("citation-")]
    assert [(w["code"], w["number"], w["line"]) for w in citation_warnings] == \
        [(f.code, f.number, f.line) for f in findings] and all(w["number"] for w in citation_warnings)
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Built {out / 'index.html'} (") and " KB) in " in last and " s" in last


def test_identical_bytes_across_processes(tmp_path):
    hashes = set()
    for seed in ("1", "2"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "graphsite", "build", str(CITATIONS), "--out", str(out),
                        "--subdomain", "graph-eng-0a1b2c"], check=True, env=env, capture_output=True)
        hashes.add((out / "index.html").read_bytes())
    assert len(hashes) == 1


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.md")))
def test_corpus_documents_build(run_cli, tmp_path, name, corpus_with_images):
    result = run_cli("build", str(corpus_with_images / name), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    soup = BeautifulSoup((tmp_path / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert soup.title.string and soup.find("main") is not None
    ids = [tag["id"] for tag in soup.find_all(id=True)]
    assert len(ids) == len(set(ids))
    assert _parse_errors((tmp_path / "index.html").read_text(encoding="utf-8")) == []


def _parse_errors(html: str) -> list:
    """Return the errors the WHATWG HTML parsing algorithm (html5lib) reports for `html`."""
    import html5lib

    parser = html5lib.HTMLParser(strict=False)
    parser.parse(html)
    return parser.errors


@pytest.mark.parametrize("path", [HERE.parents[1] / "content" / "graph-engineering.md", PLAIN, CITATIONS,
                                  HERE / "fixtures" / "hostile.md"], ids=lambda p: p.name)
def test_pages_parse_without_html5_errors(path):
    assert _parse_errors(checked_page(path, subdomain="graph-eng-0a1b2c").html) == []


def test_control_characters_become_visible_pictures(write_md):
    page = checked_page(write_md("# T\n\n```\nbell\x07 nul\x00 del\x7f\n```\n"))
    code = BeautifulSoup(page.html, "html.parser").find("pre").get_text()
    assert code == "bell\u2407 nul\u2400 del\u2421\n"


CLEAN = """# Clean

## 1. Claim

A claim [[1](https://one.example/)].

## References

1. One. https://one.example/
"""


def test_strict_fails_on_findings_and_writes_nothing(run_cli, tmp_path):
    out = tmp_path / "site"
    result = run_cli("build", str(CITATIONS), "--out", str(out), "--strict")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not (out / "index.html").exists()
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "citation-" in error[0] and "nothing written" in error[0]
    assert "accept the finding with a reason: `accept:` in the report's front matter" in result.stderr


def test_strict_passes_when_clean_or_accepted(run_cli, write_md, tmp_path):
    out = tmp_path / "site"
    result = run_cli("build", str(write_md(CLEAN)), "--out", str(out), "--strict")
    assert result.exit_code == 0, result.output
    findings = checked_page(CITATIONS).report.findings
    config = tmp_path / "graphsite.toml"
    config.write_text("".join(f'[[citations.accept]]\ncode = "{code}"\nreason = "known, tracked"\n\n'
                              for code in sorted({f.code for f in findings})), encoding="utf-8")
    result = run_cli("build", str(CITATIONS), "--out", str(out), "--strict", "--config", str(config), "--json")
    assert result.exit_code == 0, result.output
    assert all(w.get("accepted") == "known, tracked" for w in json.loads(result.stdout)["warnings"]
               if w["code"].startswith("citation-"))


def test_many_warnings_do_not_bury_the_summary(run_cli, tmp_path):
    text = (HERE.parents[1] / "content" / "graph-engineering.md").read_text(encoding="utf-8")
    start = text.index("\naccept:")  # the report's own acceptances, its last front-matter key
    report = tmp_path / "open.md"
    report.write_text(text[:start] + text[text.index("\n---\n", start):], encoding="utf-8")
    result = run_cli("build", str(report), "--out", str(tmp_path / "site"), "--json")
    assert result.exit_code == 0, result.output
    total = len(json.loads(result.stdout)["warnings"])
    lines = result.stderr.strip().splitlines()
    assert total > 20, "without its acceptances the default report's known defects are all open"
    assert len([line for line in lines if line.startswith("warning:")]) == 21
    assert f"and {total - 20} more" in lines[-2] and lines[-1].startswith("Built ")


def test_accepted_findings_never_hide_an_open_one(run_cli, write_md, tmp_path):
    references = "\n".join(f"{n}. Entry {n}. https://r{n}.example/" for n in range(2, 24))
    source = write_md(f"# T\n\n## 1. A\n\nClaim [[1](https://a.example/)].\n\n## References\n\n"
                      f"1. A. https://a.example/\n{references}\n24. Hole. https://p.example/item?id=...\n")
    config = tmp_path / "graphsite.toml"
    config.write_text('[[citations.accept]]\ncode = "citation-unused"\nreason = "background reading"\n')
    result = run_cli("build", str(source), "--out", str(tmp_path / "site"), "--config", str(config), "--json")
    assert result.exit_code == 0, result.output
    codes = [w["code"] for w in json.loads(result.stdout)["warnings"]]
    assert codes.index("citation-placeholder") > 20, "the open finding comes after more than 20 accepted ones"
    shown = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(shown) == 1 and "citation-placeholder" in shown[0], result.stderr


def test_a_reference_without_a_url_is_plain_text(write_md):
    source = write_md("# T\n\n## 1. A\n\nClaim [[1](https://a.example/)].\n\n## References\n\n"
                      "1. Knuth, The Art of Computer Programming.\n")
    entry = BeautifulSoup(checked_page(source).html, "html.parser").find(id="ref-1")
    assert entry.find(class_="ref-title").get_text() == "Knuth, The Art of Computer Programming"
    assert entry.find(class_="ref-url") is None and entry.find(class_="neutralised") is None
    assert [a["href"] for a in entry.find_all("a")] == ["#1-a"], "only the backlink"


def test_a_relative_xdg_cache_home_is_ignored_by_every_cache(tmp_path):
    """XDG: a relative $XDG_CACHE_HOME is invalid. The font subsets (and the compiled templates, when there were
    any) used to follow the working directory then; every cache now falls back to ~/.cache, as the link cache
    did."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": "cache", "HOME": str(tmp_path / "home")}
    subprocess.run([sys.executable, "-m", "graphsite", "-q", "build", str(CITATIONS), "--out", "site"], check=True,
                   env=env, capture_output=True, cwd=tmp_path / "work")
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["site"]
    made = {p.name for p in (tmp_path / "home" / ".cache" / "graphsite").iterdir()}
    assert "fonts" in made


def test_without_source_the_working_directory_copy_wins(run_cli):
    local = Path("content") / "graph-engineering.md"  # run_cli works in an empty folder
    local.parent.mkdir()
    local.write_text("# A local copy\n\n## One\n\nText.\n", encoding="utf-8")
    result = run_cli("build", "--json")
    assert result.exit_code == 0, result.output
    page = BeautifulSoup(Path(json.loads(result.stdout)["output"]).read_text(encoding="utf-8"), "html.parser")
    assert page.title.string == "A local copy"
    local.unlink()
    result = run_cli("build", "--json")
    assert result.exit_code == 0, result.output
    page = BeautifulSoup(Path(json.loads(result.stdout)["output"]).read_text(encoding="utf-8"), "html.parser")
    assert page.title.string.startswith("Graph Engineering"), "else the packaged report"
