"""`graphsite diff NAME REPORT` reads the live page over real HTTPS (a server on 127.0.0.1 with a trustme
certificate, reached as verify reaches the public URL): what it serves is compared, and anything but a graphsite
page answered with HTTP 200 is an error, never "no changes"."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from click.testing import CliRunner

from graphsite.builder.build import page_from_source
from graphsite.cli import main
from graphsite.config import load_config
from graphsite.errors import VerifyError
from graphsite.publisher.served import served_page
from tests.publisher.https import serve_https

DOMAIN, NAME = "pages.test", "pr-1-report"
REPORT = """---
title: Served
---
# Served

## 1. Only section

Words the live page shows.
"""


class _Answer(http.server.BaseHTTPRequestHandler):
    status, body, password = 200, b"", ""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        import base64

        wanted = "Basic " + base64.b64encode(f"reader:{self.password}".encode()).decode()
        refused = self.password and self.headers.get("Authorization") != wanted
        self.send_response(401 if refused else self.status)
        body = b"" if refused else self.body
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> tuple[trustme.CA, str]:
    authority = trustme.CA()
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return authority, str(bundle)


@contextlib.contextmanager
def serving(ca: tuple[trustme.CA, str], body: bytes, status: int = 200, password: str = "") -> Iterator[str]:
    handler = type("Handler", (_Answer,), {"status": status, "body": body, "password": password})
    with serve_https(handler, ca[0].issue_cert(f"*.{DOMAIN}")) as address:
        yield address


def configured(tmp_path: Path, address: str, bundle: str) -> Path:
    path = tmp_path / "graphsite.toml"
    path.write_text(f'[site]\ndomain = "{DOMAIN}"\n[verify]\nresolve_https = "{address}"\nca_bundle = "{bundle}"\n')
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    source = tmp_path_factory.mktemp("page") / "report.md"
    source.write_text(REPORT, encoding="utf-8")
    return page_from_source(source, subdomain=NAME).html.encode("utf-8")


def test_the_live_page_against_a_new_report(ca: tuple[trustme.CA, str], page: bytes, tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text(REPORT.replace("live page shows.", "live page shows, and more."), encoding="utf-8")
    with serving(ca, page) as address:
        config = configured(tmp_path, address, ca[1])
        result = CliRunner().invoke(main, ["diff", NAME, str(report), "--json", "--config", str(config)],
                                    env={"GRAPHSITE_PASSWORD": None}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["changed"], data["sections"][0]["words"]["added"]) == (True, 3)
    assert data["old_source"] == NAME


def test_a_private_page_is_read_with_its_password(ca: tuple[trustme.CA, str], page: bytes, tmp_path: Path) -> None:
    with serving(ca, page, password="s3cret") as address:
        config = load_config(configured(tmp_path, address, ca[1]))
        with pytest.raises(VerifyError, match="private and no password"):
            served_page(config, f"{NAME}.{DOMAIN}")
        assert served_page(config, f"{NAME}.{DOMAIN}", ("reader", "s3cret")).encode() == page


@pytest.mark.parametrize(("status", "body", "error"), [
    (404, b"not here", "HTTP 404, not the page"),
    (200, b"\xff\xfe not text", "not UTF-8"),
    (200, b"<html><body>a parked domain</body></html>", "not a page graphsite built"),
])
def test_what_is_not_the_page_is_an_error(ca: tuple[trustme.CA, str], tmp_path: Path, status: int, body: bytes,
                                          error: str) -> None:
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    with serving(ca, body, status) as address:
        config = configured(tmp_path, address, ca[1])
        result = CliRunner().invoke(main, ["diff", NAME, str(report), "--config", str(config)],
                                    env={"GRAPHSITE_PASSWORD": None}, catch_exceptions=False)
    assert result.exit_code == 1 and error in result.stderr, result.output
    assert result.stdout == ""


def test_nothing_answering_is_an_error(ca: tuple[trustme.CA, str], tmp_path: Path) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{unused.getsockname()[1]}"
    with pytest.raises(VerifyError, match="cannot read the live page"):
        served_page(load_config(configured(tmp_path, address, ca[1])), f"{NAME}.{DOMAIN}")
