"""`graphsite build NEW --since OLD --check-links` does each thing once: the page is rendered once, when the
link check's verdicts and the changes are known; the "Changed since" note is made once; links.ca_bundle is read
once, though the configuration checks it and the link check uses it. (--fonts system: subsetting the fonts to a
new page's characters takes seconds; tests/builder/test_change_note.py counts the embedded fonts' subsetting.)

Counted on the real calls: each function is wrapped in a spy that calls it through."""

from __future__ import annotations

import ssl
import time
from pathlib import Path

import pytest
import trustme
from bs4 import BeautifulSoup
from click.testing import CliRunner

from graphsite.builder import changenote, render
from graphsite.cli import main
from tests.conftest import Calls

from .test_tls import _serving

TODAY = time.strftime("%Y-%m-%d", time.gmtime())


def _report(server_url: str, *, method: str) -> str:
    return (f"# Checked\n\n## 1. Claims\n\nA claim [[1]({server_url}/ok)].\n\n## 2. Method\n\n{method}\n\n"
            f"## References\n\n1. A working page. {server_url}/ok\n")


def test_build_since_with_check_links_renders_notes_and_reads_the_ca_bundle_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: Calls) -> None:
    authority = trustme.CA()
    bundle, links = tmp_path / "ca.pem", tmp_path / "links"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    with _serving(authority.issue_cert("127.0.0.1")) as (server, _):
        (tmp_path / "old.md").write_text(_report(server.base, method="Counted by hand."), encoding="utf-8")
        (tmp_path / "new.md").write_text(_report(server.base, method="Counted by a spy."), encoding="utf-8")
        old = CliRunner().invoke(main, ["build", "old.md", "--out", "old", "--fonts", "system"])
        assert old.exit_code == 0, old.output
        (tmp_path / "graphsite.toml").write_text(f'[links]\ntimeout = 5.0\nretries = 0\nallow_private = true\n'
                                                 f'ca_bundle = "{bundle}"\ncache_dir = "{links}"\n',
                                                 encoding="utf-8")

        calls.spy(render, "page_html")
        calls.spy(changenote, "noted_sections")
        calls.spy(ssl.SSLContext, "load_verify_locations",
                  key=lambda context, cafile=None, *rest, **named: f"load {cafile or named.get('cafile')}")
        result = CliRunner().invoke(main, ["build", "new.md", "--out", "new", "--since", "old/index.html",
                                           "--check-links", "--fonts", "system"])
    assert result.exit_code == 0, result.output
    assert calls == {"page_html": 1, "noted_sections": 1, f"load {bundle}": 1}, calls

    soup = BeautifulSoup((tmp_path / "new" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert [a.get_text() for a in soup.select("#changes a")] == ["§2 Method"]  # the note, and…
    assert soup.select_one(".ref-state").get_text() == f"checked {TODAY}"  # …the verdict, on the one page
    assert ".changes {" in soup.find_all("style")[-1].get_text()
