"""The order links are requested in, and where each is found in the report: one host's links spread over the
run (a real server on several loopback addresses sees them in turn), and every link with its lines when the
report is large."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from graphsite.builder.report import report_from_source
from graphsite.builder.source import read_source
from graphsite.citations.live import check_links
from graphsite.citations.network import interleave
from graphsite.config import LinksConfig
from graphsite.usecases.links import report_links


def test_interleave_takes_one_link_per_host_in_turn_and_keeps_each_hosts_order():
    urls = ["https://a.example/1", "https://a.example/2", "https://a.example/3", "https://b.example/1",
            "http://a.example/1", "https://a.example:8443/x", "https://b.example/2#f"]
    assert interleave(urls) == [
        "https://a.example/1", "https://b.example/1", "http://a.example/1", "https://a.example:8443/x",
        "https://a.example/2", "https://b.example/2#f", "https://a.example/3"]
    assert sorted(interleave(urls)) == sorted(urls)
    one_host = ["https://a.example/2", "https://a.example/1"]
    assert interleave(one_host) == one_host


@pytest.fixture
def three_hosts() -> Iterator[tuple[list[str], list[tuple[str, str]]]]:
    """Three servers on 127.0.0.2-4; yields their base URLs and the (host, path) of every request, in order."""
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            with lock:
                seen.append((self.server.server_address[0], self.path))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    servers = [ThreadingHTTPServer((f"127.0.0.{n}", 0), Handler) for n in (2, 3, 4)]
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
               for s in servers]
    for thread in threads:
        thread.start()
    try:
        yield [f"http://{s.server_address[0]}:{s.server_address[1]}" for s in servers], seen
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_a_hosts_links_are_requested_in_turn_with_the_other_hosts(three_hosts, tmp_path):
    bases, seen = three_hosts
    urls = [f"{base}/{n}" for base in bases for n in range(3)]  # as a report lists them: host by host
    settings = LinksConfig(concurrency=1, allow_private=True, cache_dir=str(tmp_path), retries=0)
    report = check_links(urls, settings, use_cache=False, progress=False)
    assert [r.state for r in report.results] == ["ok"] * 9
    assert [r.url for r in report.results] == urls  # the results keep the report's order
    assert seen == [(f"127.0.0.{host}", f"/{n}") for n in range(3) for host in (2, 3, 4)]


def test_every_bare_url_is_found_on_each_line_that_holds_it_in_a_long_report(tmp_path):
    lines = ["# Long", "", "## 1. Links", ""]
    for n in range(1500):
        lines.append(f"- see https://host{n % 50}.example/page/{n} and [a link](https://linked.example/{n})")
    lines += ["", "Again https://host7.example/page/7 here.", "", "## References", "",
              "1. [Ref](https://ref.example/r) — also https://bücher.example/b", ""]
    path = tmp_path / "long.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    source = read_source(path)
    found = {link.url: link.lines for link in report_links(source, report_from_source(source))}
    assert found["https://host7.example/page/7"] == (12, 1506)
    assert found["https://linked.example/1499"] == (1504,)
    assert found["https://ref.example/r"] == (1510,)
    assert found["https://xn--bcher-kva.example/b"] == (1510,)  # the page's punycode form, found by its Unicode
    assert len(found) == 3000 + 2


def test_a_bare_url_ended_by_punctuation_or_emphasis_is_found_on_its_line(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("# T\n\n## 1. One\n\n"
                    "Have you read https://q.example/a?\n"        # 5
                    "~~https://s.example/a~~ and _see https://u.example/a_\n"  # 6
                    "**see https://b.example/a.**\n"              # 7
                    '"Quoted https://d.example/a."\n'             # 8
                    "Broken https://e.example/a.<br>\n"           # 9
                    "Not these: https://q.example/a.html https://q.example/ab (https://s.example/a/b)\n",  # 10
                    encoding="utf-8")
    source = read_source(path)
    found = {link.url: link.lines for link in report_links(source, report_from_source(source))}
    assert found["https://q.example/a"] == (5,)
    assert found["https://s.example/a"] == (6,) and found["https://u.example/a"] == (6,)
    assert found["https://b.example/a"] == (7,) and found["https://d.example/a"] == (8,)
    assert found["https://e.example/a"] == (9,)


def test_links_are_reported_as_the_author_wrote_them_not_as_the_page_shows_them(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("# T\n\n## 1. One\n\nSee §1 and [[1](https://cited.example/a)].\n"
                    "[bad](javascript:alert(1)) <a href='https://raw.example/'>raw</a>\n", encoding="utf-8")
    source = read_source(path)
    found = {link.url: link.lines for link in report_links(source, report_from_source(source))}
    assert found == {"https://cited.example/a": (5,), "javascript:alert(1)": (6,), "https://raw.example/": (6,)}


def test_a_report_without_a_file_still_lists_its_written_links(tmp_path):
    path = tmp_path / "gone.md"
    path.write_text("# T\n\n[x](https://x.example/)\n", encoding="utf-8")
    source = read_source(path)
    report = report_from_source(source)
    Path(path).unlink()
    assert [(link.url, link.lines) for link in report_links(source, report)] == [("https://x.example/", (3,))]


def test_in_page_links_are_judged_against_the_headings_of_the_builders_parse(tmp_path):
    from graphsite.config import Config
    from graphsite.usecases.links import check_report_links

    path = tmp_path / "r.md"
    path.write_text("# T\n\n## 1. First part\n\nSee [the part](#1-first-part), [raw](#raw-id), [gone](#nowhere), "
                    "[code](#in-code), [fence](#in-fence), [section](#sec-2), [note](#fn1), [top](#top), "
                    "[case](#1-First-Part), [no note](#fn9).[^a]\n\n[^a]: The one note.\n\n"
                    "<p id='raw-id'>raw</p>\n\nNot an element: `<p id='in-code'>`.\n\n"
                    "```html\n<p id='in-fence'>\n```\n", encoding="utf-8")
    config = Config().replace("links", cache_dir=str(tmp_path / "cache"))
    states = {r.url: r.state for r in check_report_links(path, config, progress=False).results}
    # The ids of raw HTML are the builder's (a Markdown code span or fence holds no element), and the
    # renderer's own are the builder's: the notes it made (one here: no #fn9), the template's; a fragment
    # resolves as the build resolves it (case aside), by the builder's one resolver.
    assert states == {"#1-first-part": "ok", "#raw-id": "ok", "#nowhere": "local", "#in-code": "local",
                      "#in-fence": "local", "#sec-2": "ok", "#fn1": "ok", "#top": "ok", "#1-First-Part": "ok",
                      "#fn9": "local"}


def test_links_reads_the_report_within_build_max_bytes_and_counts_front_matter_lines(tmp_path):
    from graphsite.config import Config
    from graphsite.errors import SourceError
    from graphsite.usecases.links import check_report_links

    path = tmp_path / "r.md"
    path.write_text("---\ntitle: T\nlede: a lede\n---\n# T\n\n[x](https://x.example/)\nBare: https://bare.example/b\n",
                    encoding="utf-8")
    source = read_source(path)
    found = {link.url: link.lines for link in report_links(source, report_from_source(source))}
    assert found == {"https://x.example/": (7,), "https://bare.example/b": (8,)}  # file lines, front matter's too
    config = Config().replace("links", cache_dir=str(tmp_path / "cache")).replace("build", max_bytes=40)
    with pytest.raises(SourceError, match="more than the limit of 40"):
        check_report_links(path, config, progress=False)


def test_a_relative_link_no_file_can_have_is_a_missing_file_not_a_traceback(tmp_path):
    from graphsite.config import Config
    from graphsite.usecases.links import check_report_links

    path = tmp_path / "r.md"
    path.write_text(f"# T\n\n[nul](a%00b) and [long](./{'x' * 300}.md)\n", encoding="utf-8")
    config = Config().replace("links", cache_dir=str(tmp_path / "cache"))
    results = check_report_links(path, config, progress=False).results
    assert [(r.state, r.detail.split(" beside")[0]) for r in results] == [("local", "no file a\x00b"),
                                                                          ("local", f"no file ./{'x' * 300}.md")]


_LOCAL_VERDICTS = """
import json, sys
from pathlib import Path
from graphsite.config import Config
from graphsite.usecases.links import check_report_links
path = Path(sys.argv[1])
config = Config().replace("links", cache_dir=str(path.parent / "cache"))
print(json.dumps([r.detail for r in check_report_links(path, config, progress=False).results]))
"""


def test_a_relative_link_that_cannot_be_looked_up_says_permission_denied_not_no_file():
    """Before, EACCES was "no file": a link into a directory the user may not read was reported missing. A real
    lookup as a user without the permission (root reads everything, so root runs it as nobody)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:  # a folder nobody may enter: /tmp, not pytest's 0700
        root = Path(folder)
        root.chmod(0o777)
        (root / "locked").mkdir(mode=0o700)
        (root / "locked" / "a.md").write_text("x")
        report = root / "r.md"
        report.write_text("# T\n\n[inside](locked/a.md)\n", encoding="utf-8")
        report.chmod(0o644)
        (root / "locked").chmod(0o000)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        run = subprocess.run([*nobody, sys.executable, "-c", _LOCAL_VERDICTS, str(report)], capture_output=True,
                             text=True, timeout=60, check=False, env={**os.environ, "HOME": folder})
        (root / "locked").chmod(0o700)
    assert run.returncode == 0, run.stderr
    [detail] = json.loads(run.stdout)
    assert detail.startswith(f"cannot tell whether locked/a.md is beside the report: Permission denied "
                             f"({root / 'locked' / 'a.md'})"), detail
