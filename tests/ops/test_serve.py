"""`graphsite serve` as a user runs it: the real CLI in a process of its own, its page in headless Chromium.
An edit reaches the open page without a manual reload; a broken edit shows the error overlay over the last good
page, and the fix takes it away; the page breaks no CSP rule."""

from __future__ import annotations

import http.client
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

COLLECT_CSP = """window.__csp = window.__csp || [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective));"""


def report(body: str) -> str:
    return f'---\ntitle: "Serve test"\nlede: "A preview."\n---\n\n# Serve test\n\n## 1. First\n\n{body}\n'


class Served:
    def __init__(self, process: subprocess.Popen, url: str, source: Path) -> None:
        self.process, self.url, self.source = process, url, source

    def stderr(self) -> str:
        os.set_blocking(self.process.stderr.fileno(), False)  # type: ignore[union-attr]
        return (self.process.stderr.read() or b"").decode()  # type: ignore[union-attr]


def _until(page, text: str, deadline: float = 10.0) -> float:
    """Wait until the open page's <main> shows `text` (polled from outside: the page's CSP forbids eval); return
    the seconds it took."""
    started = time.monotonic()
    while text not in page.inner_text("main"):
        assert time.monotonic() - started < deadline, f"{text!r} never reached the open page"
        time.sleep(0.05)
    return time.monotonic() - started


def _first_line(process: subprocess.Popen, deadline: float = 30.0) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], deadline)
    assert ready, "graphsite serve printed no URL"
    return process.stdout.readline().decode().strip()


@pytest.fixture
def served(tmp_path):
    source = tmp_path / "report.md"
    source.write_text(report("The first version."))
    (tmp_path / "figure.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    (tmp_path / ".secret").write_text("hidden")
    command = [sys.executable, "-m", "graphsite", "serve", str(source), "--port", "0", "--fonts", "system"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                               env={**os.environ, "NO_COLOR": "1", "GRAPHSITE_CONFIG": ""})
    try:
        yield Served(process, _first_line(process), source)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_edits_reach_the_open_page_and_errors_show_over_the_last_good_one(served, browser):
    page = browser.new_page()
    page.add_init_script(COLLECT_CSP)
    page.goto(served.url)
    assert "The first version." in page.inner_text("main")

    served.source.write_text(report("The second version."))
    print(f"edit → open page: {_until(page, 'The second version.'):.2f} s")

    served.source.write_text('---\ntitle: "unclosed\n---\n\n# Broken\n')
    overlay = page.wait_for_selector("#graphsite-serve-error", timeout=10_000)
    assert overlay is not None
    assert str(served.source) in overlay.inner_text()
    assert "The second version." in page.inner_text("main")  # the last good page stays

    served.source.write_text(report("The third version."))
    _until(page, "The third version.")
    assert page.query_selector("#graphsite-serve-error") is None
    assert page.evaluate("window.__csp") == []
    page.close()
    stderr = served.stderr()
    assert f"build failed (the last good page stays served): {served.source}" in stderr


def test_a_broken_page_at_load_shows_the_overlay(served, browser):
    served.source.write_text("---\nbadge: [\n---\n# x\n")
    deadline = time.monotonic() + 10
    while b'"error": null' in _get(served.url, "/__graphsite/events?version=-1")[1]:  # the watcher looks every 0.2 s
        assert time.monotonic() < deadline, "the broken edit was never built"
        time.sleep(0.1)
    page = browser.new_page()
    page.goto(served.url)  # a fresh load, after the failed build: the overlay comes with it
    overlay = page.wait_for_selector("#graphsite-serve-error", timeout=10_000)
    assert overlay is not None and str(served.source) in overlay.inner_text()
    assert "The first version." in page.inner_text("main")
    page.close()


def test_a_configuration_change_rebuilds_and_its_error_shows(served, browser):
    config = served.source.parent / "graphsite.toml"  # the serve process runs there, GRAPHSITE_CONFIG unset
    page = browser.new_page()
    page.goto(served.url)
    config.write_text("[links\n")
    overlay = page.wait_for_selector("#graphsite-serve-error", timeout=10_000)
    assert overlay is not None and f"{config}: invalid TOML" in overlay.inner_text()
    config.write_text("[links]\ntimeout = 5.0\n")
    page.wait_for_selector("#graphsite-serve-error", state="detached", timeout=10_000)
    assert "The first version." in page.inner_text("main")
    page.close()


def _get(url: str, path: str) -> tuple[int, bytes]:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", path)  # sent as written: no client-side normalisation of `..`
    answer = connection.getresponse()
    return answer.status, answer.read()


def test_files_beside_the_source_only(served):
    assert _get(served.url, "/figure.svg")[0] == 200
    assert _get(served.url, "/.secret")[0] == 404
    assert _get(served.url, "/../../../../etc/passwd")[0] == 404
    assert _get(served.url, "/%2e%2e/%2e%2e/etc/hostname")[0] == 404
    status, body = _get(served.url, "/__graphsite/events?version=-1")
    assert status == 200 and b'"page": 1' in body


def test_a_request_the_server_cannot_use_is_answered_never_a_traceback(served):
    """`?version=²` passed str.isdigit, then int() raised ValueError; `/%00` made Path.resolve raise ValueError
    (an embedded null byte): each a traceback from the server's thread and a connection closed unanswered."""
    refused = (400, b"version: expected a whole number\n")
    for version in ("%C2%B2", "--1", "1" * 5000, "x"):
        assert _get(served.url, f"/__graphsite/events?version={version}") == refused, version
    for path in ("/%00", "/figure.svg%00", "/%00/x"):
        assert _get(served.url, path) == (404, b"not found\n"), path
    assert _get(served.url, "/figure.svg")[0] == 200  # the server still serves
    assert "Traceback" not in served.stderr()


def _raw(url: str, request: bytes, *, reset: bool = False) -> bytes:
    """Send `request` as written; return the answer, or b"" after resetting the connection (RST) when `reset`."""
    import socket
    import struct

    host, port = url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        if reset:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return b""
        return connection.recv(65536)


def test_a_request_target_that_is_not_a_url_is_a_400(served):
    answer = _raw(served.url, b"GET http://[/ HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert _get(served.url, "/figure.svg")[0] == 200
    assert "Traceback" not in served.stderr()


def test_a_browser_that_resets_the_connection_prints_nothing(served):
    for _ in range(3):
        _raw(served.url, b"GET /figure.svg HTTP/1.1\r\nHo", reset=True)  # mid-request
    assert _get(served.url, "/figure.svg")[0] == 200  # answered after the resets were handled
    time.sleep(0.5)
    assert "Traceback" not in served.stderr() and "ConnectionReset" not in served.stderr()


def test_a_real_error_in_the_server_still_prints_its_traceback(tmp_path, capsys):
    from graphsite.usecases.preview import Preview, start

    server = start(Preview(lambda: "<html></html>", lambda: []), tmp_path, 0)
    try:
        for error in (ConnectionResetError(104, "reset"), BrokenPipeError(32, "pipe"), KeyError("a bug")):
            try:
                raise error
            except (OSError, KeyError):
                server.handle_error(None, ("127.0.0.1", 1))
            printed = capsys.readouterr().err
            assert ("Traceback" in printed) is isinstance(error, KeyError), printed
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_in_use_is_a_one_line_error(served):
    from click.testing import CliRunner

    from graphsite.cli import main

    port = served.url.rstrip("/").rsplit(":", 1)[1]
    result = CliRunner().invoke(main, ["serve", str(served.source), "--port", port, "--fonts", "system"])
    assert result.exit_code == 1, result.output
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output
