"""verify's probes: the TLS context of a CA bundle, made once per bundle as it is on disk; why a request went
unanswered, from real servers on 127.0.0.1 (verify retries only what can change with time)."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from datetime import UTC, datetime, timedelta

import pytest
import trustme

from graphsite.errors import ConfigError
from graphsite.publisher.probe import fetch, tls_context
from tests.publisher.https import serve_https


def test_a_bundle_is_loaded_once_and_again_when_it_is_rewritten(tmp_path):
    path = tmp_path / "ca.pem"
    first, second = trustme.CA(), trustme.CA()
    first.cert_pem.write_to_path(str(path))
    context = tls_context(str(path))
    assert tls_context(str(path)) is context  # about 20 ms saved on every probe of a verify
    second.cert_pem.write_to_path(str(path))  # the lab rewrites its CA at one path
    again = tls_context(str(path))
    assert again is not context
    assert again.get_ca_certs(binary_form=True) != context.get_ca_certs(binary_form=True)


def test_a_bundle_that_cannot_load_names_the_setting(tmp_path):
    (tmp_path / "empty.pem").write_text("no certificate here\n")
    for path in (tmp_path / "empty.pem", tmp_path / "missing.pem"):
        with pytest.raises(ConfigError, match=f"dns.ca_bundle: cannot load {path}"):
            tls_context(str(path), setting="dns.ca_bundle")


# --- why a request went unanswered, from real failures --------------------------------------------------------

class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _https(certificate: trustme.LeafCert | None):
    """Yield host:port of an HTTPS server on 127.0.0.1 showing `certificate` (None: one that closes every
    connection at once, as an edge does while it restarts)."""
    if certificate is None:
        listener = socket.create_server(("127.0.0.1", 0))

        def close_all():
            with contextlib.suppress(OSError):
                while True:
                    listener.accept()[0].close()

        threading.Thread(target=close_all, daemon=True).start()
        try:
            yield f"127.0.0.1:{listener.getsockname()[1]}"
        finally:
            listener.close()
        return
    with serve_https(_Page, certificate) as address:
        yield address


def _closed_port() -> str:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{unused.getsockname()[1]}"


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    authority = trustme.CA()
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return authority, str(bundle)


def test_an_answer_has_no_failure(ca):
    authority, bundle = ca
    with _https(authority.issue_cert("page.test")) as address:
        answer = fetch("https", "page.test", address, ca_bundle=bundle)
    assert (answer.status, answer.failure, answer.error) == (200, "", "")


def test_a_certificate_of_no_trusted_issuer_is_no_certificate_for_the_name_yet(ca):
    _, bundle = ca
    with _https(trustme.CA().issue_cert("page.test")) as address:  # an edge's default certificate
        answer = fetch("https", "page.test", address, ca_bundle=bundle)
    assert answer.failure == "no-certificate" and "certificate verify failed" in answer.error


@pytest.mark.parametrize("issue", [
    lambda authority: authority.issue_cert("other.test"),  # the wrong name
    lambda authority: authority.issue_cert("page.test", not_before=datetime.now(UTC) - timedelta(days=30),
                                           not_after=datetime.now(UTC) - timedelta(days=1)),  # expired
])
def test_a_trusted_certificate_that_does_not_match_is_a_tls_failure(ca, issue):
    authority, bundle = ca
    with _https(issue(authority)) as address:
        answer = fetch("https", "page.test", address, ca_bundle=bundle)
    assert answer.failure == "tls", answer.error


def test_nothing_listening_or_a_connection_closed_mid_handshake_is_unreachable(ca):
    _, bundle = ca
    assert fetch("https", "page.test", _closed_port(), ca_bundle=bundle).failure == "unreachable"
    with _https(None) as address:
        answer = fetch("https", "page.test", address, ca_bundle=bundle)
    assert answer.failure == "unreachable", answer.error


def test_a_request_that_cannot_be_made_is_invalid():
    assert fetch("http", "page.test", "127.0.0.1:abc").failure == "invalid"
