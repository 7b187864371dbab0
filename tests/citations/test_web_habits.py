"""Verdicts on links that browsers open and a strict reading of HTTP gets wrong, each on a real server on
127.0.0.1 answering exactly that case: raw UTF-8 in a Location, long redirect chains, big header blocks, WAF
challenges in any status, HEAD and GET that disagree, soft 404s and deep links sent to the home page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphsite.citations.live import check_links
from graphsite.config import LinksConfig

from .conftest import Server, serve


@pytest.fixture(scope="module")
def web() -> Iterator[Server]:
    with serve() as server:
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


def test_a_head_200_whose_get_is_404_is_dead(web, tmp_path):
    result = verdict_on(web, "/head-200-get-404", tmp_path)
    assert result.state == "dead", result
    assert [hit[0] for hit in web.hits.to("/head-200-get-404")] == ["GET"]  # one request, never HEAD


@pytest.mark.parametrize("path, state, words", [
    pytest.param("/headers/80", "ok", "", id="a-header-block-of-80-kib-is-read"),
    pytest.param("/headers/300", "unverified", "over 256 KiB",
                 id="a-header-block-past-256-kib-is-unverified-and-named"),
    pytest.param("/waf-captcha-405", "blocked", "challenge: AWS WAF", id="an-aws-waf-captcha-answered-405"),
    pytest.param("/cloudflare-200", "blocked", "challenge: Cloudflare", id="cloudflare-just-a-moment-with-200"),
    pytest.param("/aws-waf-202", "blocked", "challenge: AWS WAF", id="an-aws-waf-challenge-answered-202"),
    pytest.param("/anubis", "blocked", "challenge: Anubis", id="an-anubis-page"),
    pytest.param("/akamai", "blocked", "challenge: Akamai", id="an-akamai-challenge"),
    pytest.param("/datadome", "blocked", "challenge: DataDome", id="a-datadome-captcha"),
    pytest.param("/vercel", "blocked", "challenge: Vercel", id="a-vercel-checkpoint"),
    pytest.param("/cloudflare-script-200", "ok", "", id="a-page-with-cloudflare-bot-scripts-is-ok"),
    pytest.param("/imperva-script-404", "dead", "HTTP 404", id="a-404-with-imperva-scripts-is-dead"),
    pytest.param("/soft-404", "warn", "Page not found | Example", id="a-soft-404-is-a-warning-with-its-title"),
    pytest.param("/soft-404-with-id#fix", "ok", "", id="a-page-whose-fragment-is-found-is-ok-whatever-its-title"),
    pytest.param("/docs/old-page", "warn", "home page", id="a-deep-link-redirected-to-the-home-page"),
    pytest.param("/en", "redirected", "", id="a-language-home-given-its-slash-is-no-warning"),
])
def test_the_verdict_on_each_case(web, tmp_path, path, state, words):
    result = verdict_on(web, path, tmp_path)
    assert result.state == state, result
    assert words in result.detail, result


def test_warn_is_a_state_links_fail_on_accepts(tmp_path):
    from graphsite.config import load_config

    (tmp_path / "graphsite.toml").write_text('[links]\nfail_on = ["dead", "warn"]\n')
    assert load_config(tmp_path / "graphsite.toml").links.fail_on == ("dead", "warn")


def test_headers_over_the_limit_are_not_asked_for_again(web, tmp_path):
    result = verdict_on(web, "/headers/301", tmp_path, retries=2)
    assert result.state == "unverified" and "over 256 KiB" in result.detail, result
    assert web.hits.count("/headers/301") == 1  # the same server sends the same headers: one request
