"""`graphsite new`: a starter report that shows every part of the page and builds with --strict and no finding;
it never overwrites."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup
from click.testing import CliRunner

from graphsite.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args), env={"NO_COLOR": "1", "GRAPHSITE_CONFIG": None})


def test_the_starter_builds_strict_without_a_warning(tmp_path):
    path = tmp_path / "notes" / "report.md"
    made = run("new", str(path))
    assert made.exit_code == 0, made.output
    assert made.stdout.strip() == str(path)
    assert f"graphsite serve {path}" in path.read_text()
    built = run("build", str(path), "--out", str(tmp_path / "site"), "--strict", "--fonts", "system", "--json")
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout)
    assert summary["warnings"] == []
    assert summary["citations"] == {"inline": 1, "references": 1, "unique_urls": 1}
    page = BeautifulSoup((tmp_path / "site" / "index.html").read_text(), "html.parser")
    assert page.title is not None and page.title.string == "A decision-ready report"
    for selector in (".badge", ".kicker", ".lede", "h1"):
        assert page.select_one(selector) is not None and page.select_one(selector).get_text(strip=True), selector
    rules = page.select("#rules a")
    assert len(rules) == 3 and {a["href"] for a in rules} == {"#32-the-rules"}
    assert page.find(id="32-the-rules") is not None
    assert len(page.select("#cards article, #cards .card")) >= 3  # two floors and the counter-frame
    assert page.select_one("sup a")["href"] == "https://spec.commonmark.org/0.31.2/"
    assert page.find(id="ref-1") is not None


def test_new_refuses_to_overwrite(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("mine")
    result = run("new", str(path))
    assert result.exit_code == 1
    assert f"{path}: already exists; graphsite new never overwrites" in result.output
    assert path.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]  # no temporary left


def test_new_over_a_dangling_symlink_or_into_a_file_refuses(tmp_path):
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "nowhere.md")
    assert run("new", str(link)).exit_code == 1
    assert not (tmp_path / "nowhere.md").exists()
    (tmp_path / "file").write_text("")
    blocked = run("new", str(tmp_path / "file" / "report.md"))
    assert blocked.exit_code == 1 and "cannot write the starter report" in blocked.output
    assert "Traceback" not in blocked.output


def test_the_starter_sets_every_field_the_page_shows(tmp_path):
    import dataclasses

    from graphsite.builder.model import FrontMatter
    from graphsite.builder.report import read_report
    from graphsite.commands.new import STARTER

    front = read_report(STARTER).front
    unset = [f.name for f in dataclasses.fields(FrontMatter) if not getattr(front, f.name)]
    # prefix names deploy's random subdomains, the page does not show it; accept is for findings the starter lacks
    assert unset == ["prefix", "accept"], unset
    assert "#   accept:" in STARTER.read_text()  # explained, commented out
    assert all(card.label and card.year and card.title and card.definition for card in front.floors)
    assert front.counter_frame is not None and all(vars(front.counter_frame).values())
