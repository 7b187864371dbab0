"""A real HTTP server on 127.0.0.1 with one path per link-check pitfall, and the hits it received."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PAGE = (b"<!doctype html><html><head><title>page</title></head><body>"
        b"<h2 id='present'>here</h2><a name='legacy'></a><p>text</p></body></html>")
SLOW_SECONDS = 4.0
TRICKLE_GAP = 0.1  # seconds between two bytes of a trickling answer
TRICKLE_FOR = 20.0  # the most a trickling answer goes on (bounded, even if a client never gives up)
LATE_ID_AFTER = 6 * 1024 * 1024  # bytes of filler before the late id: past the old 5 MiB cap
FILLER = b"<div class='filler'><p>Some text of a very long page &amp; more.</p></div>\n"
CHALLENGE = (b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
             b"<div id='challenge-platform'>Checking your browser</div></body></html>")


@dataclass
class Hits:
    """Every request the server saw: (method, path, user agent, time), and the most in flight at once."""

    log: list[tuple[str, str, str, float]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    connections: set[tuple[str, int]] = field(default_factory=set)  # the client ends of every connection
    lock: threading.Lock = field(default_factory=threading.Lock)

    def to(self, path: str) -> list[tuple[str, str, str, float]]:
        with self.lock:
            return [hit for hit in self.log if hit[1] == path]

    def count(self, path: str) -> int:
        return len(self.to(path))


def _raw(text: str) -> str:
    """Return `text` as http.server writes it byte for byte (it encodes header values as latin-1)."""
    return text.encode().decode("latin-1")


CHALLENGES = {
    "/cloudflare-200": (200, {}, b"<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>"),
    "/aws-waf-202": (202, {"x-amzn-waf-action": "challenge"}, b""),
    "/anubis": (200, {}, b"<html><script id='anubis_challenge' type='application/json'>{}</script></html>"),
    "/akamai": (200, {}, b"<html><div id='sec-if-cpt-container'></div></html>"),
    "/datadome": (403, {}, b"<html><script src='https://ct.captcha-delivery.com/c.js'></script></html>"),
    "/vercel": (429, {"x-vercel-mitigated": "challenge"}, b"<title>Vercel Security Checkpoint</title>"),
    # Ordinary pages that hold a bot wall's script: a 200 is the page, a 404 is a missing page.
    "/cloudflare-script-200": (200, {}, b"<title>Graphs</title><script src='/cdn-cgi/challenge-platform/scripts/jsd/"
                                        b"main.js'></script>"),
    "/imperva-script-404": (404, {}, b"<title>Gone</title><script src='/_Incapsula_Resource?SWJIYLWA=1'></script>"),
}


class PitfallHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits: Hits  # set on the subclass per server

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        hits = self.hits
        with hits.lock:
            hits.log.append((self.command, self.path, self.headers.get("User-Agent", ""), time.monotonic()))
            hits.connections.add(self.client_address)
            seen = sum(1 for h in hits.log if h[1] == self.path)
            hits.in_flight += 1
            hits.most_in_flight = max(hits.most_in_flight, hits.in_flight)
        try:
            self._route(head, seen)
        finally:
            with hits.lock:
                hits.in_flight -= 1

    def _route(self, head: bool, seen: int) -> None:
        path = self.path
        if path in ("/ok", "/page") or path.startswith("/host/"):
            if path.startswith("/host/"):
                time.sleep(0.2)
            return self._send(200, PAGE, head)
        if path == "/head-405":
            return self._send(405, b"", head, {"Allow": "GET"}) if head else self._send(200, PAGE, head)
        if path == "/browser-only":
            agent = self.headers.get("User-Agent", "")
            browser = agent.startswith("Mozilla/5.0") and ("Chrome/" in agent or "Firefox/" in agent)
            return self._send(200 if browser else 403, PAGE if browser else b"robots go away", head)
        if path == "/429-twice":
            if seen <= 2:
                return self._send(429, b"slow down", head, {"Retry-After": "1"})
            return self._send(200, PAGE, head)
        if path == "/moved":
            return self._send(301, b"", head, {"Location": "/ok"})
        if path in ("/loop-a", "/loop-b"):
            return self._send(302, b"", head, {"Location": "/loop-b" if path == "/loop-a" else "/loop-a"})
        if path == "/slow":
            time.sleep(SLOW_SECONDS)
            return self._send(200, PAGE, head)
        if path == "/cookie-gate":
            if "gate=1" not in self.headers.get("Cookie", ""):
                return self._send(302, b"", head, {"Location": "/cookie-gate", "Set-Cookie": "gate=1; Path=/"})
            return self._send(200, PAGE, head)
        if path == "/forbidden":
            return self._send(403, b"no", head)
        if path == "/429-for-an-hour":
            return self._send(429, b"come back later", head, {"Retry-After": "3600"})
        if path == "/moved-to-missing":
            return self._send(308, b"", head, {"Location": "/missing"})
        if path == "/error":
            return self._send(500, b"broken", head)
        if path.startswith("/redirect?to="):
            return self._send(302, b"", head, {"Location": path.removeprefix("/redirect?to=")})
        return self._hard_cases(path, head)

    def _hard_cases(self, path: str, head: bool) -> None:
        """The cases where a link checker that only looks at statuses and reads calls a working link dead,
        or is held for minutes."""
        if path == "/trickle-body":
            return self._trickle(b"", head, body=PAGE)
        if path == "/trickle-headers":
            return self._trickle(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Padding: " + b"x" * 400, head)
        if path == "/endless":
            return self._endless(head)
        if path == "/big-late-id":
            return self._big_page(head)
        if path == "/meta-charset":
            page = ("<!doctype html><html><head><meta charset='iso-8859-1'><title>page</title></head><body>"
                    "<h2 id='café'>ici</h2><p>Déjà vu</p></body></html>").encode("latin-1")
            return self._send(200, page, head, content_type="text/html")
        if path == "/short-body":
            return self._send(200, PAGE, head, {"Content-Length": str(len(PAGE) + 5000)}, length=False)
        if path == "/challenge-503":
            return self._send(503, CHALLENGE, head, {"cf-mitigated": "challenge", "Server": "cloudflare"})
        if path == "/challenge-page-503":
            return self._send(503, CHALLENGE, head)
        if path == "/999":
            return self._send(999, b"request denied", head)
        if path == "/gzip-page":
            return self._send(200, gzip.compress(PAGE), head, {"Content-Encoding": "gzip"})
        if path == "/chunked-page":
            return self._chunked([PAGE[:40], PAGE[40:90], PAGE[90:]], head)
        if path == "/chunked-40k":  # a chunked page past the first bytes read, within what is read to keep it
            return self._chunked([PAGE, FILLER * (40 * 1024 // len(FILLER))], head)
        if path == "/bad-chunk":  # the page whole in its first chunk, then a size line that is no size
            return self._chunked([PAGE], head, end=b"zz\r\n\r\n")
        if path == "/odd-length":  # a Content-Length of non-ASCII digits (latin-1 '²'): no length given
            return self._send(200, PAGE, head, {"Content-Length": "1\u00b2"}, length=False)
        if path == "/empty-size-line":  # the page, then an empty size line where "0" belongs
            return self._chunked([PAGE], head, end=b"\r\n\r\n")
        if path == "/429-odd-retry-after":  # a Retry-After of a non-ASCII digit (latin-1 '²'): no wait asked for
            return self._send(429, b"slow down", head, {"Retry-After": "\u00b2"})
        if path == "/maintenance":
            return self._send(503, b"down for maintenance", head, {"Retry-After": "3600"})
        return self._web_habits(path, head)

    def _web_habits(self, path: str, head: bool) -> None:
        """The cases where a strict reading of HTTP gets wrong what a browser gets right
        (tests/citations/test_web_habits.py); a path none of them serves is a 404."""
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
        if path == "/head-200-get-404":  # a HEAD handler that answers 200 for any path
            return self._send(200 if head else 404, b"" if head else b"not found", head)
        if path in CHALLENGES:
            status, headers, body = CHALLENGES[path]
            return self._send(status, body, head, headers)
        if path == "/soft-404":
            return self._send(200, b"<html><head><title>Page not found | Example</title></head></html>", head)
        if path == "/soft-404-with-id":  # a title that looks like it, but the fragment is there: the real page
            return self._send(200, b"<title>404 errors explained - 404</title><h2 id='fix'>fix</h2>", head)
        if path in ("/docs/old-page", "/en"):
            return self._send(301, b"", head, {"Location": "/" if path == "/docs/old-page" else "/en/"})
        if path in ("/", "/en/"):
            return self._send(200, PAGE, head)
        return self._send(404, b"not found", head)

    def _chunked(self, parts: list[bytes], head: bool, end: bytes = b"0\r\nX-Trailer: yes\r\n\r\n") -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if not head:
                for part in parts:
                    self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(part), part))
                self.wfile.write(end)
            self.close_connection = end.startswith(b"zz")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _trickle(self, raw_head: bytes, head: bool, body: bytes = b"") -> None:
        """Send `raw_head` (a status line and headers) or a 200 with `body`, one byte every TRICKLE_GAP."""
        try:
            if not raw_head:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.flush()
                if head:
                    return
            stop = time.monotonic() + TRICKLE_FOR
            for byte in (raw_head or body):
                if time.monotonic() > stop:
                    break
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(TRICKLE_GAP)
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _endless(self, head: bool) -> None:
        """A 200 whose body never ends (bounded at 256 MiB here): a checker must stop reading it."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            if head:
                return
            self.close_connection = True
            chunk = FILLER * 800
            for _ in range(256 * 1024 * 1024 // len(chunk)):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _big_page(self, head: bool) -> None:
        """6 MiB of filler, then the id: a checker that caps the body at 5 MiB calls #late dead."""
        tail = b"<h2 id='late'>the end</h2></body></html>"
        repeats = LATE_ID_AFTER // len(FILLER) + 1
        opening = b"<!doctype html><html><head><title>big</title></head><body>"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(opening) + repeats * len(FILLER) + len(tail)))
            self.end_headers()
            if head:
                return
            self.wfile.write(opening)
            block = FILLER * 1000
            for _ in range(repeats // 1000):
                self.wfile.write(block)
            self.wfile.write(FILLER * (repeats % 1000) + tail)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send(self, status: int, body: bytes, head: bool, headers: dict[str, str] | None = None, *,
              content_type: str = "text/html; charset=utf-8", length: bool = True) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if length:
                self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if not head:
                self.wfile.write(body)
            if not length:
                self.close_connection = True  # the body is shorter than its Content-Length: hang up
        except (BrokenPipeError, ConnectionResetError):
            pass  # the checker gave up on a slow answer: expected


@dataclass
class Server:
    base: str
    hits: Hits

    def url(self, path: str) -> str:
        return self.base + path


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        pass  # a client that gives up on /slow resets its connection: expected, not news


@contextmanager
def serve(base: type[PitfallHandler] = PitfallHandler) -> Iterator[Server]:
    """Run a threaded stdlib HTTP server on 127.0.0.1 (a free port) for the duration of the block, answering
    as `base` does."""
    hits = Hits()
    handler = type("Handler", (base,), {"hits": hits})
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", hits)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def pitfall_server() -> Iterator[Server]:
    """A fresh server (and hit log) for one test."""
    with serve() as server:
        yield server


@pytest.fixture(scope="module")
def shared_pitfall_server() -> Iterator[Server]:
    """One server for a module's tests that read the same run."""
    with serve() as server:
        yield server
