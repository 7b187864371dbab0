"""A URL carrying a credential (user:password@, a token, an API key, a signature): a citation finding at every
build (an error under --strict), never requested by the link check, and masked in every message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsite import urls
from graphsite.builder.model import InlineCitation, Reference
from graphsite.citations.integrity import check_citations
from graphsite.citations.live import check_links
from graphsite.cli import main
from graphsite.config import Acceptance, LinksConfig

from .conftest import PAGE, PitfallHandler, serve

SECRET = "hunter2"


@pytest.mark.parametrize("url, shown", [
    ("https://alice:hunter2@example.org/a?b=1", "https://***@example.org/a?b=1"),
    ("https://hunter2@example.org/", "https://***@example.org/"),
    ("https://s3.example/f?X-Amz-Credential=AK&X-Amz-Signature=hunter2",
     "https://s3.example/f?X-Amz-Credential=***&X-Amz-Signature=***"),
    ("https://api.example/v1?api_key=hunter2&q=graphs", "https://api.example/v1?api_key=***&q=graphs"),
    ("https://gitlab.example/raw?private_token=hunter2#L3", "https://gitlab.example/raw?private_token=***#L3"),
    ("https://blob.example/c?sv=2020&sig=hunter2", "https://blob.example/c?sv=2020&sig=***"),
    ("https://app.example/cb#access_token=hunter2&state=x", "https://app.example/cb#access_token=***&state=x"),
    ("https://EXAMPLE.org:99999/?token=hunter2", "https://EXAMPLE.org:99999/?token=***"),  # malformed: masked too
])
def test_a_url_with_a_credential_is_found_and_masked(url, shown):
    assert urls.secret(url)
    assert urls.mask(url) == shown


@pytest.mark.parametrize("url", ["https://example.org/a@b", "https://example.org/?q=a@b",
                                 "https://example.org/?key=1", "https://example.org/?token=",
                                 "https://example.org/#token"])
def test_a_url_without_a_credential_is_left_as_written(url):
    assert urls.secret(url) is None and urls.mask(url) == url


def test_a_credential_in_a_reference_or_an_inline_citation_is_a_finding_that_never_shows_it():
    findings = check_citations(
        [InlineCitation(1, "https://api.example/v1?token=hunter2", 3),
         InlineCitation(2, "https://alice:hunter2@example.org/x", 4)],
        [Reference(1, "https://api.example/v1?token=hunter2", "API", 10),
         Reference(2, "https://example.org/y", "Other", 11)])
    secrets = [f for f in findings if f.code == "citation-secret-in-url"]
    assert sorted((f.number, f.line) for f in secrets) == [(1, 10), (2, 4)]
    assert all(SECRET not in f.message for f in findings), findings  # the mismatch of [2] is masked too
    by_number = {f.number: f.message for f in secrets}  # each finding names its own URL, masked
    assert "reference URL https://api.example/v1?token=*** carries a credential in 'token'" in by_number[1]
    assert "inline URL https://***@example.org/x carries a user name and password" in by_number[2]


def test_a_credential_finding_can_be_accepted_like_any_other():
    accept = [Acceptance(code="secret-in-url", reason="a public demo key", url="https://api.example/*")]
    [finding] = check_citations([], [Reference(1, "https://api.example/v1?api_key=demo", "API", 10)], accept)
    assert finding.accepted == "a public demo key"


class _Redirects(PitfallHandler):
    def _route(self, head: bool, seen: int) -> None:
        if self.path == "/download":  # a pre-signed URL, as object stores redirect to
            return self._send(302, b"", head, {"Location": f"/object?X-Amz-Signature={SECRET}"})
        if self.path.startswith("/object?"):
            return self._send(200, PAGE, head)
        return super()._route(head, seen)


def test_a_url_with_a_credential_is_never_requested_nor_shown(tmp_path):
    settings = LinksConfig(allow_private=True, retries=0, timeout=2.0, cache_dir=str(tmp_path))
    with serve(_Redirects) as server:
        port = server.base.rsplit(":", 1)[1]
        links = [f"http://alice:{SECRET}@127.0.0.1:{port}/ok", server.url(f"/ok?token={SECRET}"),
                 server.url("/download")]
        report = check_links(links, settings, progress=False)
        assert [hit[1] for hit in server.hits.log] == ["/download", f"/object?X-Amz-Signature={SECRET}"]
    assert [r.state for r in report.results] == ["skipped", "skipped", "redirected"], report.results
    assert "citation-secret-in-url" in report.results[0].detail
    assert SECRET not in json.dumps(report.as_dict())  # the server's pre-signed URL is masked as well


def test_strict_build_fails_on_a_credential_and_never_prints_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    (tmp_path / "graphsite.toml").write_text("")
    source = tmp_path / "r.md"
    source.write_text(f"# Report\n\n## 1. Part\n\nA claim [[1](https://alice:{SECRET}@example.org/doc)].\n\n"
                      f"## References\n\n1. [Doc](https://alice:{SECRET}@example.org/doc)\n", encoding="utf-8")
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["build", str(source), "--strict", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "citation-secret-in-url" in result.output and SECRET not in result.output
    assert not (out / "index.html").exists()


def test_the_code_is_known_to_the_configuration(tmp_path):
    from graphsite.config import load_config

    config = tmp_path / "graphsite.toml"
    config.write_text('[[citations.accept]]\ncode = "citation-secret-in-url"\nreason = "a demo key"\n')
    assert load_config(Path(config)).citations.accept[0].code == "citation-secret-in-url"


def test_a_credential_in_a_body_link_is_a_finding_too(tmp_path):
    from graphsite.usecases.build import checked_page

    source = tmp_path / "r.md"
    source.write_text(f"# Report\n\n## 1. Part\n\nTry [the API](https://api.example/v1?api_key={SECRET}) or\n"
                      f"https://files.example/f?token={SECRET} and [a page](https://example.org/).\n",
                      encoding="utf-8")
    findings = [f for f in checked_page(source).report.findings if f.code == "citation-secret-in-url"]
    assert [(f.line, f.number) for f in findings] == [(0, None), (5, None)], findings  # a bare URL: no line
    assert all(SECRET not in f.message and "=***" in f.message for f in findings)


def test_two_links_that_differ_only_in_a_secret_stay_two_rows(tmp_path):
    from graphsite.config import Config
    from graphsite.usecases.links import check_report_links

    source = tmp_path / "r.md"
    source.write_text("# Report\n\n## 1. Part\n\n[one](https://files.example/f?token=first) and\n"
                      "[two](https://files.example/f?token=second).\n", encoding="utf-8")
    config = Config().replace("links", cache_dir=str(tmp_path), retries=0)
    report = check_report_links(source, config, progress=False)
    assert [(r.url, r.lines) for r in report.results] == [("https://files.example/f?token=***", (5,)),
                                                          ("https://files.example/f?token=***", (6,))]


def test_each_link_gets_its_own_verdict_however_the_answer_is_ordered_and_a_missing_one_is_unknown(tmp_path):
    """Before, results_by_url paired links with results by position: a reordered answer attached one link's
    verdict to another, and a short one raised. Two links masked alike stay apart: they are matched by the URL
    requested."""
    import dataclasses

    from graphsite.citations.live import results_by_url

    links = [f"https://api.example/v1?token={SECRET}", "https://api.example/v1?token=other", "http://127.0.0.1/x",
             "./notes.md"]
    settings = LinksConfig(retries=0, timeout=2.0, cache_dir=str(tmp_path))
    report = check_links(links, settings, progress=False)
    states = {url: (r.state, r.detail) for url, r in results_by_url(links, report).items()}
    assert [states[url][0] for url in links] == ["skipped", "skipped", "private", "local"]
    reordered = dataclasses.replace(report, results=tuple(reversed(report.results)))
    assert {url: (r.state, r.detail) for url, r in results_by_url(links, reordered).items()} == states
    first = links[2]
    short = dataclasses.replace(report, results=report.results[2:3],
                                by_key={k: r for k, r in report.by_key.items() if r.state == "private"})
    answered = results_by_url(links, short)
    assert (answered[first].state, [answered[url].state for url in links if url != first]) == (
        "private", ["unchecked"] * 3)
    assert answered[links[3]].detail == "no verdict for this link in the link check's answer"
    assert all(SECRET not in r.url for r in answered.values())


@pytest.mark.parametrize("url, shown", [
    (f"//alice:{SECRET}@files.example/x", "//***@files.example/x"),  # protocol-relative: https for the reader
    (f" \\\\alice:{SECRET}@files.example/x", " \\\\***@files.example/x"),  # a browser reads \\ as //
    (f"notes.md?token={SECRET}&v=2", "notes.md?token=***&v=2"),  # relative: no authority, a query all the same
    (f"/docs/a;sig={SECRET}#top", "/docs/a;sig=***#top"),
    (f"#access_token={SECRET}", "#access_token=***"),
])
def test_a_credential_in_a_protocol_relative_or_relative_link_is_found_and_masked(url, shown):
    """Before, mask() and secret() looked for a credential only after `scheme://`."""
    assert urls.secret(url) and urls.mask(url) == shown


def test_links_never_prints_the_credential_of_a_protocol_relative_or_relative_link(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "graphsite.toml").write_text("")
    (tmp_path / "notes.md").write_text("notes")
    source = tmp_path / "p.md"
    source.write_text(f"# Report\n\n## 1. Part\n\n[a](//alice:{SECRET}@files.example/x),\n"
                      f"[b](notes.md?token={SECRET}), [c](missing.md;sig={SECRET}) and "
                      f"[d](#access_token={SECRET}).\n", encoding="utf-8")
    for flags in (["--json"], []):
        result = CliRunner().invoke(main, ["links", str(source), "--offline", *flags])
        assert result.exit_code == 0, result.output
        assert SECRET not in result.stdout and SECRET not in result.stderr, result.output
    data = json.loads(CliRunner().invoke(main, ["links", str(source), "--offline", "--json"]).stdout)
    assert {link["url"]: link["state"] for link in data["links"]} == {
        "//***@files.example/x": "skipped", "notes.md?token=***": "local", "missing.md;sig=***": "local",
        "#access_token=***": "local"}


def test_a_credential_in_a_protocol_relative_link_is_a_build_finding(tmp_path):
    from graphsite.usecases.build import checked_page

    source = tmp_path / "r.md"
    source.write_text(f"# Report\n\n## 1. Part\n\nA claim [[1](//alice:{SECRET}@files.example/doc)] and "
                      f"[a file](//bob:{SECRET}@files.example/f).\n\n"
                      f"## References\n\n1. [Doc](//alice:{SECRET}@files.example/doc)\n", encoding="utf-8")
    findings = [f for f in checked_page(source).report.findings if f.code == "citation-secret-in-url"]
    assert sorted(((f.number or 0), f.line) for f in findings) == [(0, 5), (1, 9)], findings
    assert all(SECRET not in f.message and "//***@files.example/" in f.message for f in findings), findings
