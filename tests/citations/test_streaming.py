"""The first requests go out while the builder is still parsing the report: the URLs its text shows are asked
early, and the parse alone decides which links get a verdict (on a real server on 127.0.0.1)."""

from __future__ import annotations

import time
from pathlib import Path

from graphsite.citations.live import check_links
from graphsite.config import Config, LinksConfig
from graphsite.usecases.links import check_report_links, likely_links


def _settings(tmp_path: Path) -> LinksConfig:
    return LinksConfig(timeout=2.0, link_timeout=5.0, retries=0, allow_private=True,
                       cache_dir=str(tmp_path / "cache"))


def test_the_text_shows_its_urls_but_not_those_in_code_or_comments():
    text = ("# T\n\nSee [a](https://a.example/x) and https://b.example/y. Also `https://code.example/z`,\n"
            "<https://c.example/q?x=1&y=2> and [wiki](https://en.wikipedia.org/wiki/Graph_(discrete_mathematics)).\n"
            "<!-- https://comment.example/\n   still a comment -->\n"
            "```sh\ncurl https://fenced.example/\n```\n~~~~\nhttps://tilde.example/\n~~~\nstill fenced\n~~~~\n"
            "<a href=\"https://raw.example/\">raw</a>, **https://bold.example/b**, [e](https://e.example/?a=1&amp;b=2)\n")
    assert likely_links(text) == [
        "https://a.example/x", "https://b.example/y", "https://c.example/q?x=1&y=2",
        "https://en.wikipedia.org/wiki/Graph_(discrete_mathematics)", "https://raw.example/",
        "https://bold.example/b", "https://e.example/?a=1&b=2"]


def test_requests_start_before_the_links_are_found_and_only_found_links_get_a_verdict(pitfall_server, tmp_path):
    server = pitfall_server
    seen_before_found: list[bool] = []

    def find() -> list[str]:
        """The parse: slower than the early requests, which reach the server before it returns."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(hit[1] == "/ok" for hit in server.hits.log):
            time.sleep(0.01)
        seen_before_found.append(any(hit[1] == "/ok" for hit in server.hits.log))
        return [server.url(path) for path in ("/ok", "/page#present", "/page#legacy", "/page#nowhere")]

    # /missing is a URL the text showed that the parse does not find (say, in an indented code block);
    # #legacy and #nowhere are fragments the early scan missed: the page is asked again for them.
    early = [server.url("/ok"), server.url("/missing"), server.url("/page#present")]
    report = check_links(find, _settings(tmp_path), early=early, progress=False)
    assert seen_before_found == [True]
    assert [(r.url, r.state) for r in report.results] == [
        (server.url("/ok"), "ok"), (server.url("/page#present"), "ok"), (server.url("/page#legacy"), "ok"),
        (server.url("/page#nowhere"), "dead")]
    assert report.results[3].detail == "the page has no #nowhere anchor"


def test_a_report_is_checked_as_the_parse_finds_it_and_code_is_never_asked(pitfall_server, tmp_path):
    server = pitfall_server
    path = tmp_path / "r.md"
    path.write_text(f"# T\n\n## 1. One\n\n[a]({server.url('/ok')}) and `{server.url('/code-span')}`\n\n"
                    f"    {server.url('/indented')}\n\n```text\n{server.url('/fenced')}\n```\n\n"
                    f"<!-- {server.url('/comment')} -->\n\n[b]({server.url('/page#nowhere')})\n", encoding="utf-8")
    config = Config().replace("links", allow_private=True, retries=0, cache_dir=str(tmp_path / "cache"))
    report = check_report_links(path, config, progress=False)
    assert [(r.url, r.state, r.lines) for r in report.results] == [
        (server.url("/ok"), "ok", (5,)), (server.url("/page#nowhere"), "dead", (15,))]
    asked = {hit[1] for hit in server.hits.log}
    assert asked.isdisjoint({"/code-span", "/fenced", "/comment"})


def test_the_time_the_parse_holds_the_run_is_not_counted_against_a_request(pitfall_server, tmp_path):
    """/host/… answers after 0.2 s; the parse holds the event loop for 0.8 s, past the 0.5 s timeout: the answer
    that came meanwhile is read, not taken for a timeout."""
    url = pitfall_server.url("/host/a")

    def find() -> list[str]:
        time.sleep(0.8)
        return [url]

    settings = LinksConfig(timeout=0.5, link_timeout=0.5, retries=0, allow_private=True,
                           cache_dir=str(tmp_path / "cache"))
    [result] = check_links(find, settings, early=[url], progress=False).results
    assert result.state == "ok", result


def test_a_report_the_builder_refuses_after_the_first_requests_is_still_a_usage_error(pitfall_server, tmp_path,
                                                                                      monkeypatch):
    """The builder reads the report once the first requests are out: its refusal (here the front matter) is still
    the one-line error of exit 2, raised from inside the run."""
    from click.testing import CliRunner

    from graphsite.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "r.md").write_text(f"---\ntitle: [unclosed\n---\n\n# R\n\n[a]({pitfall_server.url('/ok')})\n",
                                   encoding="utf-8")
    result = CliRunner().invoke(main, ["links", "r.md", "--allow-private"])
    assert result.exit_code == 2, result.output
    assert "r.md" in result.output and "Traceback" not in result.output


def test_a_dropped_url_that_fetches_a_page_a_found_link_waits_for_is_not_cancelled(pitfall_server, tmp_path):
    """/host/p answers after 0.2 s. The scan found two fragments of it, the parse only the second: the first,
    which fetches the page for both, is dropped but not cancelled, or the second would wait for nothing."""
    dropped, kept = pitfall_server.url("/host/p#legacy"), pitfall_server.url("/host/p#present")
    report = check_links(lambda: [kept], _settings(tmp_path), early=[dropped, kept], progress=False)
    assert [(r.url, r.state) for r in report.results] == [(kept, "ok")]


def test_the_early_urls_past_the_first_slots_are_judged_after_the_first_requests_and_still_judged(pitfall_server,
                                                                                                  tmp_path):
    """Two slots: the first four URLs of the text are judged before the first requests, the rest once they are
    out. Those are judged all the same: a credential is never sent, a URL the parse drops is never asked."""
    server = pitfall_server
    head = [server.url(path) for path in ("/ok", "/host/a", "/page#present", "/forbidden")]
    secret, dropped = server.url("/ok?api_key=hunter2"), server.url("/missing")
    settings = LinksConfig(timeout=2.0, link_timeout=5.0, retries=0, allow_private=True, concurrency=2,
                           cache_dir=str(tmp_path / "cache"))
    report = check_links(lambda: [*head, secret], settings, early=[*head, dropped, secret], progress=False)
    assert [(r.url, r.state) for r in report.results] == [
        (head[0], "ok"), (head[1], "ok"), (head[2], "ok"), (head[3], "blocked"),
        (server.url("/ok?api_key=***"), "skipped")]
    asked = [hit[1] for hit in server.hits.log]
    assert "/missing" not in asked and not any("api_key" in path for path in asked), asked


def test_a_page_whose_fragments_fall_either_side_of_the_first_slots_is_fetched_once(pitfall_server, tmp_path):
    """Two slots: the first four URLs are judged before the first requests, #legacy after them. The page is read
    for both fragments from the start, not asked again when #legacy is judged."""
    server = pitfall_server
    urls = [server.url(path) for path in ("/page#present", "/host/1", "/host/2", "/host/3", "/host/4",
                                          "/page#legacy")]
    settings = LinksConfig(timeout=2.0, link_timeout=5.0, retries=0, allow_private=True, concurrency=2,
                           cache_dir=str(tmp_path / "cache"))
    report = check_links(lambda: urls, settings, early=urls, progress=False)
    assert [r.state for r in report.results] == ["ok"] * 6, report.results
    assert server.hits.count("/page") == 1, server.hits.log


def test_when_the_first_slots_need_no_request_the_next_urls_are_asked_before_the_parse(pitfall_server, tmp_path):
    """One slot, and the first two URLs of the text are in links.skip: judging goes on until a URL needs a
    request, which goes out before the parse, as it would without links.skip."""
    server = pitfall_server
    urls = [server.url(path) for path in ("/skip/1", "/skip/2", "/ok", "/page")]
    asked_before_found: list[bool] = []

    def find() -> list[str]:
        deadline = time.monotonic() + 10  # leaves as soon as it is asked: a passing run waits no longer
        while time.monotonic() < deadline and not server.hits.count("/ok"):
            time.sleep(0.01)
        asked_before_found.append(server.hits.count("/ok") == 1)
        return urls

    settings = LinksConfig(timeout=2.0, link_timeout=5.0, retries=0, allow_private=True, concurrency=1,
                           skip=(server.url("/skip/"),), cache_dir=str(tmp_path / "cache"))
    report = check_links(find, settings, early=urls, progress=False)
    assert [r.state for r in report.results] == ["skipped", "skipped", "ok", "ok"], report.results
    assert asked_before_found == [True]
