"""The cases where a link check used to be wrong or held for minutes, each on a real server on 127.0.0.1:
trickling headers and bodies, endless bodies, big pages, <meta> charsets, short bodies, challenges in any
status, a host that comes back, redirects that change host, and a total deadline for the run."""

from __future__ import annotations

import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from graphsite.citations.live import check_links, classify, request_url
from graphsite.config import LinksConfig

from .conftest import Hits, PitfallHandler, serve


def settings(tmp_path: Path, **values) -> LinksConfig:
    base = {"timeout": 0.5, "link_timeout": 2.0, "retries": 0, "max_retry_after": 1.0, "allow_private": True,
            "cache_dir": str(tmp_path / "cache")}
    return LinksConfig(**{**base, **values})


def one(server, path: str, tmp_path: Path, **values):
    report = check_links([server.url(path)], settings(tmp_path, **values), progress=False)
    return report.results[0], report


@pytest.mark.parametrize("path", ["/trickle-body", "/trickle-headers"])
def test_a_trickling_answer_is_a_timeout_within_the_request_deadline(pitfall_server, tmp_path, path):
    start = time.monotonic()
    result, _ = one(pitfall_server, path + "#present", tmp_path)
    took = time.monotonic() - start
    assert result.state == "timeout", result
    assert took < 2.5, took  # 0.5 s per request, however slowly the bytes come (the whole page would take 15 s)
    assert "within 0.5 s" in result.detail
    if path == "/trickle-body":
        assert "HTTP 200" in result.detail and "bytes of the body received" in result.detail
    else:
        assert "no status line or headers received" in result.detail


def test_retries_of_a_trickling_body_stop_at_the_link_deadline(pitfall_server, tmp_path):
    start = time.monotonic()
    result, _ = one(pitfall_server, "/trickle-body#present", tmp_path, timeout=0.4, retries=5, link_timeout=1.0)
    assert result.state == "timeout" and time.monotonic() - start < 3.0  # five retries with backoff: 18 s


def test_an_endless_body_is_cut_off_by_the_deadline_with_the_bytes_received(pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/endless#nowhere", tmp_path, timeout=0.5, max_page_mib=4096)
    assert result.state == "timeout" and "bytes of the body received" in result.detail


def test_an_endless_body_past_the_page_cap_is_unverified_not_dead(pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/endless#nowhere", tmp_path, timeout=5, max_page_mib=1)
    assert result.state == "unverified" and "first 1 MiB" in result.detail


def test_an_id_past_the_first_megabytes_is_found_and_reading_stops_there(pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/big-late-id#late", tmp_path, timeout=10)
    assert (result.state, result.status) == ("ok", 200), result


def test_a_fragment_missing_from_a_big_page_read_whole_is_dead(pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/big-late-id#absent", tmp_path, timeout=10)
    assert result.state == "dead" and "#absent" in result.detail


def test_the_meta_charset_decides_how_ids_are_read(pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/meta-charset#caf%C3%A9", tmp_path)
    assert result.state == "ok", result
    missing, _ = one(pitfall_server, "/meta-charset#cafe", tmp_path)
    assert missing.state == "dead"


def test_a_body_shorter_than_its_content_length_that_holds_the_fragment_is_ok_with_a_warning(
        pitfall_server, tmp_path):
    result, _ = one(pitfall_server, "/short-body#present", tmp_path)
    assert result.state == "ok" and "body ended after" in result.warning, result
    missing, _ = one(pitfall_server, "/short-body#nowhere", tmp_path)
    assert missing.state == "unverified" and "before any #nowhere" in missing.detail


@pytest.mark.parametrize("path, state", [("/challenge-503", "blocked"), ("/challenge-page-503", "blocked"),
                                         ("/999", "blocked"), ("/maintenance", "unavailable")])
def test_challenges_in_any_status_are_blocked_and_a_long_retry_after_is_unavailable(
        pitfall_server, tmp_path, path, state):
    result, _ = one(pitfall_server, path, tmp_path, retries=2)
    assert result.state == state, result
    if path == "/challenge-503":  # a challenge is not retried: it will not go away by asking again
        assert [hit[0] for hit in pitfall_server.hits.to(path)] == ["GET"]


def test_a_refused_connection_is_not_served_from_the_cache_once_the_host_is_back(tmp_path):
    hits = Hits()
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (PitfallHandler,), {"hits": hits}),
                                 bind_and_activate=False)
    server.server_bind()  # the port is this test's, but nothing listens: a connection is refused
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ok"
        first = check_links([url], settings(tmp_path), progress=False).results[0]
        assert first.state == "dead" and first.detail.startswith("connection failed"), first
        server.server_activate()  # the host is back, on the same port, which this test held all along
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            again = check_links([url], settings(tmp_path), progress=False).results[0]
        finally:
            server.shutdown()
    finally:
        server.server_close()
    assert (again.state, again.cached) == ("ok", False)
    assert len(hits.log) == 1


def test_offline_serves_what_the_cache_holds_and_asks_nothing(pitfall_server, tmp_path):
    urls = [pitfall_server.url("/ok"), pitfall_server.url("/missing")]
    check_links(urls, settings(tmp_path), progress=False)
    hits = len(pitfall_server.hits.log)
    report = check_links([*urls, pitfall_server.url("/moved")], settings(tmp_path), offline=True, progress=False)
    assert [(r.state, r.cached) for r in report.results] == [("ok", True), ("dead", True), ("unchecked", False)]
    assert len(pitfall_server.hits.log) == hits and report.requests == 0


def test_the_per_host_limit_holds_for_the_host_reached_by_redirects(tmp_path):
    with serve() as origin, serve() as target:
        direct = [target.url(f"/host/{i}") for i in range(4)]
        redirected = [origin.url(f"/redirect?to={target.url(f'/host/r{i}')}") for i in range(4)]
        report = check_links(direct + redirected, settings(tmp_path, per_host=2, concurrency=32, timeout=5,
                                                           link_timeout=10), progress=False)
        assert {r.state for r in report.results} == {"ok", "redirected"}
        assert target.hits.most_in_flight == 2


def test_the_run_deadline_ends_a_slow_run_with_every_link_accounted_for(pitfall_server, tmp_path):
    start = time.monotonic()
    urls = [pitfall_server.url("/ok"), pitfall_server.url("/slow"), pitfall_server.url("/trickle-body#present")]
    report = check_links(urls, settings(tmp_path, timeout=5, link_timeout=10, deadline=0.6), progress=False)
    assert time.monotonic() - start < 3.0  # /slow alone takes 4 s
    states = {r.url.removeprefix(pitfall_server.base): r.state for r in report.results}
    assert states == {"/ok": "ok", "/slow": "timeout", "/trickle-body#present": "timeout"}
    assert "run's deadline of 0.6 s" in report.results[1].detail


def test_a_unicode_host_is_requested_in_ascii_wherever_it_is_written():
    assert request_url("https://Bücher.example/a?q=1") == "https://xn--bcher-kva.example/a?q=1"
    assert classify("https://bücher.example/a", LinksConfig()) is None  # not malformed: checked like any other


@pytest.mark.parametrize("url, state, words", [
    ("mailto:a@b.org", "skipped", "mailto: links are not checked"),
    ("tel:+15550100", "skipped", "tel: links are not checked"),
    ("ftp://ftp.example.org/x", "skipped", "ftp: links are not checked"),
    ("file:///home/me/report.pdf", "private", "file: URL"),
    ("http://10.1.2.3/admin", "private", "non-public address 10.1.2.3"),
    ("http://localhost:8080/", "private", "localhost"),
    ("http://printer.local/", "private", "printer.local"),
    ("./other.md", "local", "relative link"),
])
def test_links_not_requested_are_listed_with_a_reason(url, state, words):
    result = classify(url, LinksConfig())
    assert result is not None and result.state == state and words in result.detail, result


@pytest.mark.parametrize("path", ["/gzip-page", "/chunked-page"])
def test_compressed_and_chunked_pages_are_read_for_their_ids_and_the_connection_is_kept(pitfall_server, tmp_path,
                                                                                       path):
    urls = [pitfall_server.url(f"{path}#present"), pitfall_server.url(f"{path}#nowhere"), pitfall_server.url("/ok"),
            pitfall_server.url("/moved")]
    report = check_links(urls, settings(tmp_path, per_host=1), progress=False)
    assert [r.state for r in report.results] == ["ok", "dead", "ok", "redirected"]
    assert len(pitfall_server.hits.connections) == 1  # one connection, kept alive from request to request


def test_a_chunked_page_without_a_fragment_is_read_to_its_end_and_the_connection_kept(pitfall_server, tmp_path):
    """No Content-Length: the page may be small, so it is read up to DRAIN_BYTES, not only its first bytes."""
    urls = [pitfall_server.url("/chunked-40k"), pitfall_server.url("/ok"), pitfall_server.url("/moved")]
    report = check_links(urls, settings(tmp_path, per_host=1), progress=False)
    assert [r.state for r in report.results] == ["ok", "ok", "redirected"]
    assert len(pitfall_server.hits.connections) == 1


def test_a_redirect_to_a_private_address_is_not_followed_unless_allowed(pitfall_server, tmp_path):
    """The checker is driven directly: the classification before it would keep the loopback origin itself out."""
    import asyncio

    from graphsite.citations.checker import Checker, new_client

    strict = settings(tmp_path, allow_private=False)

    async def verdict(url: str):
        client = new_client(strict)
        try:
            return await Checker(client, strict, {}).check(url)
        finally:
            client.close()

    result = asyncio.run(verdict(pitfall_server.url("/redirect?to=http://10.255.255.1/admin")))
    assert result.state == "private" and "10.255.255.1" in result.detail, result
    assert [hit[1] for hit in pitfall_server.hits.log] == ["/redirect?to=http://10.255.255.1/admin"]


def test_a_link_waiting_for_its_turn_on_a_busy_host_keeps_its_whole_deadline(pitfall_server, tmp_path):
    urls = [pitfall_server.url(f"/host/q{i}") for i in range(5)]  # 0.2 s each, one at a time: 1 s in all
    report = check_links(urls, settings(tmp_path, per_host=1, timeout=0.5, link_timeout=0.5), progress=False)
    assert [r.state for r in report.results] == ["ok"] * 5


def test_a_chunked_body_whose_framing_breaks_keeps_what_came(pitfall_server, tmp_path):
    """A size line that is no size used to end as 'dead: invalid URL'. What came before it is read like a
    body cut off: an anchor in it counts (with a warning), a missing one is unverified, not dead."""
    urls = [pitfall_server.url("/bad-chunk#present"), pitfall_server.url("/bad-chunk#nowhere")]
    found, missing = check_links(urls, settings(tmp_path), progress=False).results
    assert found.state == "ok" and "the body ended early, after" in found.warning, found
    assert missing.state == "unverified" and "before any #nowhere anchor" in missing.detail, missing


def test_an_empty_chunk_size_line_ends_the_body_but_the_connection_is_not_used_again(pitfall_server, tmp_path):
    """Read as the last chunk (as always), but the framing is off: the next request takes a new connection."""
    urls = [pitfall_server.url("/empty-size-line#present"), pitfall_server.url("/ok")]
    report = check_links(urls, settings(tmp_path, per_host=1), progress=False)
    assert [r.state for r in report.results] == ["ok", "ok"], report.results
    assert len(pitfall_server.hits.connections) == 2


def test_a_content_length_of_non_ascii_digits_is_no_length_not_an_invalid_url(pitfall_server, tmp_path):
    """'1²'.isdigit() is True and int('1²') raises ValueError, which the checker reported as 'dead: invalid URL'."""
    result = check_links([pitfall_server.url("/odd-length#present")], settings(tmp_path), progress=False).results[0]
    assert result.state == "ok", result
