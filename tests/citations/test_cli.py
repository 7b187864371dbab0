"""`graphsite links` and `graphsite build --strict` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsite.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty working directory, a cache directory of its own (cache/graphsite/) and a configuration."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    config = tmp_path / "graphsite.toml"
    config.write_text("[links]\ntimeout = 2.0\nretries = 1\n")
    monkeypatch.setenv("GRAPHSITE_LINKS_ALLOW_PRIVATE", "true")  # the pitfall server is on 127.0.0.1
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def write_report(path: Path, server, paths: list[str]) -> Path:
    links = "\n".join(f"- [link {i}]({server.url(p)})" for i, p in enumerate(paths))
    path.write_text(f"# Links\n\n## 1. Some links\n\nA paragraph.\n\n{links}\n", encoding="utf-8")
    return path


def test_links_exits_1_on_a_dead_link_and_prints_json_on_stdout(workdir, pitfall_server):
    source = write_report(workdir / "r.md", pitfall_server, ["/ok", "/moved", "/missing"])
    result = CliRunner().invoke(main, ["links", str(source), "--json", "--concurrency", "4"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert {link["url"].removeprefix(pitfall_server.base): link["state"] for link in data["links"]} == {
        "/ok": "ok", "/moved": "redirected", "/missing": "dead"}
    assert data["counts"]["dead"] == 1
    assert "1 link(s) dead" in result.stderr and "Traceback" not in result.output
    assert (workdir / "cache" / "graphsite" / "links.json").is_file()


def test_links_passes_when_nothing_is_dead_and_the_second_run_is_cached(workdir, pitfall_server):
    source = write_report(workdir / "r.md", pitfall_server, ["/ok", "/browser-only"])
    first = CliRunner().invoke(main, ["links", str(source)])
    assert first.exit_code == 0, first.output
    assert "Checked 2 links" in first.stdout and "Checked" not in first.stderr  # `links r.md > out.txt` has it
    assert "checked 2/2 links" in first.stderr  # progress only
    hits = len(pitfall_server.hits.log)
    second = CliRunner().invoke(main, ["links", str(source), "--json"])
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["cached"] == 2 and len(pitfall_server.hits.log) == hits
    third = CliRunner().invoke(main, ["links", str(source), "--no-cache", "--timeout", "1"])
    assert third.exit_code == 0, third.output
    assert len(pitfall_server.hits.log) > hits


def test_build_check_links_writes_the_page_and_reports_links_in_one_json(workdir, pitfall_server):
    source = write_report(workdir / "r.md", pitfall_server, ["/ok", "/missing"])
    result = CliRunner().invoke(main, ["build", str(source), "--check-links", "--json", "--out", "out"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["output"].endswith("index.html") and (workdir / "out" / "index.html").is_file()
    assert {link["url"].removeprefix(pitfall_server.base): link["state"] for link in data["links"]["links"]} == {
        "/ok": "ok", "/missing": "dead"}
    assert "1 link(s) dead" in result.stderr and "Traceback" not in result.output


def test_build_check_links_passes_when_every_link_answers(workdir, pitfall_server):
    source = write_report(workdir / "r.md", pitfall_server, ["/ok", "/moved"])
    result = CliRunner().invoke(main, ["build", str(source), "--check-links", "--out", "out"])
    assert result.exit_code == 0, result.output
    assert "Checked 2 links" in result.stdout and "Built " in result.stderr


def test_links_fail_on_decides_which_states_exit_1(workdir, pitfall_server):
    source = write_report(workdir / "r.md", pitfall_server, ["/ok", "/forbidden"])
    assert CliRunner().invoke(main, ["links", str(source), "--no-cache"]).exit_code == 0, "blocked is not dead"
    (workdir / "graphsite.toml").write_text('[links]\ntimeout = 2.0\nfail_on = ["dead", "blocked"]\n')
    result = CliRunner().invoke(main, ["links", str(source), "--no-cache"])
    assert result.exit_code == 1 and "1 link(s) dead/blocked" in result.stderr, result.output
    (workdir / "graphsite.toml").write_text('[links]\nfail_on = ["deadd"]\n')
    result = CliRunner().invoke(main, ["links", str(source), "--no-cache"])
    assert result.exit_code == 2 and "links.fail_on: unknown state 'deadd'" in result.output, result.output


def test_links_of_a_missing_file_is_a_one_line_error(workdir):
    result = CliRunner().invoke(main, ["links", str(workdir / "nope.md")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "nope.md" in result.output


def test_strict_build_of_the_default_report_passes_anywhere_with_its_own_acceptances(tmp_path, monkeypatch):
    from graphsite.paths import packaged_report

    monkeypatch.chdir(tmp_path)  # no graphsite.toml, no content/: the packaged report and its front matter
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    result = CliRunner().invoke(main, ["build", "--strict", "--json", "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    citation = [w for w in summary["warnings"] if w["code"].startswith("citation-")]
    assert citation and all(w.get("accepted") for w in citation)
    assert packaged_report().is_file()


def test_strict_build_fails_once_an_acceptance_is_removed(tmp_path):
    text = (ROOT / "content" / "graph-engineering.md").read_text(encoding="utf-8")
    entry = ('  - code: "citation-duplicate-url"\n    number: 6\n    reason: "entry 6 (the Millrace Show HN) carries '
             'entry 4\'s item id: its own id was not captured"\n')
    assert text.count(entry) == 1
    report = tmp_path / "report.md"
    report.write_text(text.replace(entry, ""), encoding="utf-8")
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["build", str(report), "--strict", "--out", str(out)],
                                env={"GRAPHSITE_CONFIG": None})
    assert result.exit_code == 1, result.output
    assert "citation-duplicate-url" in result.output and "Traceback" not in result.output
    assert not (out / "index.html").exists()


def test_an_unwritable_cache_is_a_warning_not_a_traceback(workdir, pitfall_server):
    blocker = workdir / "not-a-directory"
    blocker.write_text("")
    (workdir / "graphsite.toml").write_text(f'[links]\ncache_dir = "{blocker}"\n')
    source = write_report(workdir / "r.md", pitfall_server, ["/ok"])
    result = CliRunner().invoke(main, ["links", str(source)])
    assert result.exit_code == 0, result.output
    assert "cannot write the link cache" in result.stderr and "Traceback" not in result.output


def test_each_link_names_every_place_it_is_written_with_citation_and_column(workdir):
    source = workdir / "r.md"
    source.write_text("# T\n\n## 1. A\n\nClaim [[1](https://a.example/x)] and [[2](https://b.example/y)], again "
                      "[[1](https://a.example/x)]. See [notes](./notes.md).\n\n## References\n\n"
                      "1. [A](https://a.example/x)\n2. B https://b.example/y\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["links", str(source), "--offline", "--json"])
    assert result.exit_code == 0, result.output
    places = {link["url"]: [(p["line"], p["column"], p["citation"], p["reference"]) for p in link["places"]]
              for link in json.loads(result.stdout)["links"]}
    assert places == {"https://a.example/x": [(5, 12, 1, None), (5, 77, 1, None), (9, 8, None, 1)],
                      "https://b.example/y": [(5, 43, 2, None), (10, 6, None, 2)],
                      "./notes.md": [(5, 112, None, None)]}
    table = CliRunner().invoke(main, ["links", str(source), "--offline"]).stdout
    assert "https://a.example/x (line 5:12 [1], line 5:77 [1], line 9:8 reference 1)" in table


def test_build_check_links_names_the_places_of_each_link(workdir, pitfall_server):
    source = workdir / "r.md"
    source.write_text(f"# T\n\n## 1. A\n\nClaim [[1]({pitfall_server.url('/missing')})].\n\n## References\n\n"
                      f"1. [A]({pitfall_server.url('/missing')})\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["build", str(source), "--check-links", "--out", "out"])
    assert result.exit_code == 1, result.output
    assert f"{pitfall_server.url('/missing')} (line 5:12 [1], line 9:8 reference 1)" in result.stdout
