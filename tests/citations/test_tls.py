"""https links on 127.0.0.1, with a throw-away CA (trustme): verified against links.ca_bundle, refused without;
each refusal names its reason (unknown issuer, expired, name mismatch) and is not retried."""

from __future__ import annotations

import datetime
import json
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trustme

from graphsite.citations.live import check_links
from graphsite.config import LinksConfig

from .conftest import SLOW_SECONDS, Hits, PitfallHandler, Server, _Server


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


class _CountingServer(_Server):
    """Counts the connections it accepts, a TLS handshake that fails included."""

    accepted = 0

    def get_request(self):  # type: ignore[no-untyped-def]
        self.accepted += 1
        return super().get_request()


@contextmanager
def _serving(certificate: trustme.LeafCert) -> Iterator[tuple[Server, _CountingServer]]:
    hits = Hits()
    server = _CountingServer(("127.0.0.1", 0), type("Handler", (PitfallHandler,), {"hits": hits}))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"https://127.0.0.1:{server.server_address[1]}", hits), server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def tls_server(authority) -> Iterator[Server]:
    with _serving(authority.issue_cert("127.0.0.1")) as (server, _):
        yield server


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


_YESTERDAY = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)


@pytest.mark.parametrize("case, words", [
    ("unknown-issuer", "unknown issuer"),
    ("expired", "the certificate has expired"),
    ("name-mismatch", "name mismatch"),
])
def test_a_tls_failure_names_its_reason_and_is_not_retried(authority, tmp_path, case, words):
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    certificate = {"unknown-issuer": lambda: trustme.CA().issue_cert("127.0.0.1"),
                   "expired": lambda: authority.issue_cert("127.0.0.1", not_before=_YESTERDAY - datetime.timedelta(
                       days=30), not_after=_YESTERDAY),
                   "name-mismatch": lambda: authority.issue_cert("docs.example.org")}[case]()
    with _serving(certificate) as (server, counting):
        result = check_links([server.url("/ok")], settings(tmp_path, ca_bundle=str(bundle), retries=2),
                             progress=False).results[0]
    assert result.state == "dead", result
    assert words in result.detail and "CERTIFICATE_VERIFY_FAILED" in result.detail, result.detail
    assert counting.accepted == 1  # asked once: a certificate does not change between two attempts


_CERTIFI_PROBE = """
import json, sys
from graphsite.citations import tls
context = tls.start("").result(timeout=60)
imported = "certifi" in sys.modules
import certifi
print(json.dumps({"imported": imported, "found": tls._certifi_bundle(), "where": certifi.where(),
                  "authorities": context.cert_store_stats()["x509_ca"]}))
"""


def test_the_default_trust_is_certifis_bundle_found_without_importing_certifi(tmp_path):
    """certifi's import brings importlib.resources (16-18 ms of every https run): its bundle is found by path."""
    result = subprocess.run([sys.executable, "-c", _CERTIFI_PROBE], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["imported"] is False
    assert answer["found"] == answer["where"]
    assert answer["authorities"] > 50  # the bundle was read: more than a handful of authorities


def test_a_ca_bundle_that_cannot_be_read_is_one_error_naming_it_not_every_https_link_dead(tmp_path, pitfall_server):
    """links.ca_bundle gone since the configuration was read (or never checked: a LinksConfig made in code), or
    not a bundle: no https link can be verified, so the run fails with one error naming the key and the file,
    not with every https link dead, and without waiting for the other links."""
    from graphsite.errors import ConfigError

    (tmp_path / "not-a-bundle.pem").write_text("not a certificate\n", encoding="utf-8")
    links = ["https://127.0.0.1:9/a", "https://127.0.0.2:9/b", pitfall_server.url("/slow")]
    for bundle in (tmp_path / "nowhere.pem", tmp_path / "not-a-bundle.pem"):
        settings = LinksConfig(ca_bundle=str(bundle), allow_private=True, retries=0, timeout=5.0,
                               cache_dir=str(tmp_path / "cache"))
        started = time.monotonic()
        with pytest.raises(ConfigError) as raised:
            check_links(links, settings, progress=False)
        assert time.monotonic() - started < SLOW_SECONDS - 0.5, "the run waited for the other links"
        message = str(raised.value)
        assert message.startswith("links.ca_bundle: ") and str(bundle) in message, message
        assert "127.0.0" not in message, message
