"""Live checks against a real HTTP server on 127.0.0.1: one path per pitfall, each ending in its state."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from graphsite.citations.live import check_links
from graphsite.config import LinksConfig

# The one run every pitfall test reads: path (with fragment) -> expected state.
EXPECTED = {
    "/ok": "ok",
    "/head-405": "ok",
    "/browser-only": "ok",
    "/429-twice": "ok",
    "/moved": "redirected",
    "/moved-to-missing": "dead",
    "/cookie-gate": "ok",
    "/forbidden": "blocked",
    "/429-for-an-hour": "blocked",
    "/loop-a": "dead",
    "/slow": "timeout",
    "/error": "dead",
    "/missing": "dead",
    "/page#present": "ok",
    "/page#legacy": "ok",
    "/page#nowhere": "dead",
}


def settings(tmp_path: Path, **values) -> LinksConfig:
    base = {"timeout": 1.0, "retries": 2, "max_retry_after": 5.0, "cache_dir": str(tmp_path / ".graphsite"),
            "allow_private": True}
    return LinksConfig(**{**base, **values})


@pytest.fixture(scope="module")
def pitfall_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("links")


@pytest.fixture(scope="module")
def pitfall_run(shared_pitfall_server, pitfall_cache):
    """One check of every pitfall path (the server's hit log is this run's, plus the cache test's)."""
    server = shared_pitfall_server
    report = check_links([server.url(path) for path in EXPECTED], settings(pitfall_cache), progress=False)
    return server, {r.url.removeprefix(server.base): r for r in report.results}, report


def test_every_pitfall_ends_in_its_state(pitfall_run):
    _, results, report = pitfall_run
    assert {path: results[path].state for path in EXPECTED} == EXPECTED
    assert report.counts()["dead"] == 5 and report.counts()["blocked"] == 2
    assert report.failing() == [r for r in report.results if r.state == "dead"]


def test_a_server_that_refuses_head_is_asked_with_get_only(pitfall_run):
    server, results, _ = pitfall_run
    assert [hit[0] for hit in server.hits.to("/head-405")] == ["GET"]
    assert results["/head-405"].status == 200


def test_the_browser_only_site_sees_a_browser_user_agent(pitfall_run):
    server, _, _ = pitfall_run
    agents = {hit[2] for hit in server.hits.to("/browser-only")}
    assert agents and all(a.startswith("Mozilla/5.0") for a in agents)


def test_429_waits_for_retry_after_then_succeeds(pitfall_run):
    server, results, _ = pitfall_run
    hits = server.hits.to("/429-twice")
    assert len(hits) == 3
    gaps = [later[3] - earlier[3] for earlier, later in zip(hits, hits[1:], strict=False)]
    assert all(gap >= 0.95 for gap in gaps), gaps  # politeness: Retry-After: 1 was honoured each time
    assert results["/429-twice"].status == 200


def test_a_retry_after_of_a_non_ascii_digit_is_a_throttled_link_never_a_dead_one(pitfall_server, tmp_path):
    """Retry-After: ² (the byte 0xB2: headers are latin-1) passed str.isdigit, then float() raised ValueError, which
    the checker reads as a URL that cannot be parsed: the link was `dead: invalid URL`."""
    report = check_links([pitfall_server.url("/429-odd-retry-after")], settings(tmp_path, retries=1), progress=False)
    result = report.results[0]
    assert (result.state, result.status) == ("blocked", 429), result.detail
    assert pitfall_server.hits.count("/429-odd-retry-after") == 2  # retried once, after the backoff: no wait read


def test_redirect_reports_the_final_url(pitfall_run):
    server, results, _ = pitfall_run
    moved = results["/moved"]
    assert moved.final_url == server.url("/ok")
    assert moved.redirects == (server.url("/ok"),)


def test_a_retry_after_beyond_the_cap_is_not_waited_for(pitfall_run):
    server, results, _ = pitfall_run
    assert server.hits.count("/429-for-an-hour") == 1
    assert results["/429-for-an-hour"].status == 429


def test_a_redirect_to_a_missing_page_names_where_it_ended(pitfall_run):
    server, results, _ = pitfall_run
    result = results["/moved-to-missing"]
    assert result.status == 404 and result.redirects == (server.url("/missing"),)
    assert server.url("/missing") in result.detail


def test_redirect_loop_is_detected_not_followed_forever(pitfall_run):
    server, results, _ = pitfall_run
    assert "redirect loop" in results["/loop-a"].detail
    assert server.hits.count("/loop-a") + server.hits.count("/loop-b") <= 4


def test_500_is_retried_a_bounded_number_of_times(pitfall_run):
    server, results, _ = pitfall_run
    assert results["/error"].status == 500
    gets = [hit for hit in server.hits.to("/error") if hit[0] == "GET"]
    assert len(gets) == 3  # one try and links.retries = 2 retries


def test_a_page_linked_with_three_fragments_is_fetched_once(pitfall_run):
    server, results, _ = pitfall_run
    assert [hit[0] for hit in server.hits.to("/page")] == ["GET"]
    assert "#nowhere" in results["/page#nowhere"].detail


def test_a_second_run_serves_only_successes_from_the_cache(pitfall_run, pitfall_cache):
    server, first, _ = pitfall_run
    before = len(server.hits.log)
    # retries=0: the first run proved the retries; this one proves what the cache serves and what it asks again
    again = check_links([server.url(p) for p in EXPECTED], settings(pitfall_cache, retries=0), progress=False)
    assert [r.state for r in again.results] == [first[p].state for p in EXPECTED]
    cached = {r.url.removeprefix(server.base) for r in again.results if r.cached}
    assert cached == {p for p, state in EXPECTED.items() if state in ("ok", "redirected")}
    # Every failure is asked again (a site that is back must be seen back); no success is.
    asked = {hit[1] for hit in server.hits.log[before:]}
    assert {"/forbidden", "/error", "/missing", "/slow", "/loop-a"} <= asked
    assert not asked & {"/ok", "/moved", "/head-405", "/browser-only"}
    assert again.requests == len(server.hits.log[before:])


def test_no_cache_and_an_expired_cache_ask_again(pitfall_server, tmp_path):
    url = pitfall_server.url("/ok")
    check_links([url], settings(tmp_path), progress=False)
    check_links([url], settings(tmp_path), use_cache=False, progress=False)
    check_links([url], settings(tmp_path, max_age=0.0), progress=False)
    assert pitfall_server.hits.count("/ok") == 3


def test_a_corrupt_cache_is_a_warning_and_is_rewritten(pitfall_server, tmp_path):
    cache = tmp_path / ".graphsite" / "links.json"
    cache.parent.mkdir()
    cache.write_text("{not json")
    report = check_links([pitfall_server.url("/ok")], settings(tmp_path), progress=False)
    assert report.results[0].state == "ok"
    assert len(report.warnings) == 1 and "corrupt link cache" in report.warnings[0]
    assert json.loads(cache.read_text())["results"][pitfall_server.url("/ok")]["state"] == "ok"


@pytest.mark.parametrize("checked_at", [1e12, float("nan")])
def test_a_cached_time_in_the_future_or_unreadable_is_stale(pitfall_server, tmp_path, checked_at):
    url = pitfall_server.url("/ok")
    cache = tmp_path / ".graphsite" / "links.json"
    cache.parent.mkdir()
    entry = {"url": url, "state": "dead", "detail": "hand-edited", "checked_at": checked_at}
    cache.write_text(json.dumps({"version": 1, "results": {url: entry}}))
    report = check_links([url], settings(tmp_path), progress=False)
    assert [(r.state, r.cached) for r in report.results] == [("ok", False)]
    assert pitfall_server.hits.count("/ok") == 1


def test_per_host_limit_is_respected(pitfall_server, tmp_path):
    urls = [pitfall_server.url(f"/host/{i}") for i in range(8)]
    report = check_links(urls, settings(tmp_path, per_host=2, concurrency=16), progress=False)
    assert {r.state for r in report.results} == {"ok"}
    assert pitfall_server.hits.most_in_flight == 2


def test_dns_failure_and_refused_connection_are_dead(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    urls = ["http://no-such-host.invalid/x", f"http://127.0.0.1:{closed}/", "http://no-such-host.invalid/y"]
    report = check_links(urls, settings(tmp_path, retries=1), progress=False)
    assert [r.state for r in report.results] == ["dead", "dead", "dead"]
    assert report.results[0].detail.startswith("DNS:") and report.results[2].detail.startswith("DNS:")
    assert report.results[1].detail.startswith("connection failed")


def test_skipped_by_configuration_and_by_scheme(pitfall_server, tmp_path):
    urls = [pitfall_server.url("/missing"), "mailto:someone@example.org"]
    report = check_links(urls, settings(tmp_path, skip=(pitfall_server.url("/missing"),)), progress=False)
    assert [r.state for r in report.results] == ["skipped", "skipped"]
    assert pitfall_server.hits.log == []


@pytest.mark.parametrize("url", ["http://exa mple.com/", "http://[::1/", "https://example.org:99999/", "http://",
                                 "https://bad_host!.com/"])
def test_a_malformed_url_is_dead_without_a_request(url, tmp_path):
    report = check_links([url], settings(tmp_path), progress=False)
    assert report.results[0].state == "dead" and report.results[0].detail.startswith("malformed URL")
    assert report.requests == 0


def test_runs_inside_a_thread_that_already_has_an_event_loop(pitfall_server, tmp_path):
    """A caller with a running loop (a notebook, a sync Playwright session) still gets verdicts."""
    import asyncio

    async def caller():
        return check_links([pitfall_server.url("/ok")], settings(tmp_path), use_cache=False, progress=False)

    report = asyncio.run(caller())
    assert [r.state for r in report.results] == ["ok"]
