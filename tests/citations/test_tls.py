"""https links on 127.0.0.1, with a throw-away CA (trustme): verified against links.ca_bundle, refused without."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from graphsite.citations.live import check_links
from graphsite.config import LinksConfig

from .conftest import Hits, PitfallHandler, Server, _Server


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_server(authority) -> Iterator[Server]:
    hits = Hits()
    server = _Server(("127.0.0.1", 0), type("Handler", (PitfallHandler,), {"hits": hits}))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"https://127.0.0.1:{server.server_address[1]}", hits)
    finally:
        server.shutdown()
        server.server_close()


def settings(tmp_path: Path, **values) -> LinksConfig:
    return LinksConfig(**{"timeout": 2.0, "retries": 0, "allow_private": True, "cache_dir": str(tmp_path), **values})


def test_an_https_page_is_checked_and_read_for_its_fragment_over_tls(tls_server, authority, tmp_path):
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    urls = [tls_server.url("/ok"), tls_server.url("/page#present"), tls_server.url("/page#nowhere"),
            tls_server.url("/moved")]
    report = check_links(urls, settings(tmp_path, ca_bundle=str(bundle)), progress=False)
    assert [r.state for r in report.results] == ["ok", "ok", "dead", "redirected"], report.results


def test_a_certificate_no_trusted_authority_signed_is_a_tls_failure(tls_server, tmp_path):
    result = check_links([tls_server.url("/ok")], settings(tmp_path), progress=False).results[0]
    assert result.state == "dead" and "TLS" in result.detail and "CERTIFICATE_VERIFY_FAILED" in result.detail
    assert tls_server.hits.log == []
