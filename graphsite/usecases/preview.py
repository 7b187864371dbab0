"""`graphsite serve`: the page built in memory and served on 127.0.0.1, rebuilt when the source, the theme or the
configuration changes. A small reload script, injected only here (and allowed by the page's CSP only here),
long-polls the server: a new good build reloads the page; a failed one shows an overlay over the last good page."""

from __future__ import annotations

import html as html_text
import json
import mimetypes
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from graphsite import digests, output
from graphsite.builder.render import csp_source
from graphsite.errors import GraphsiteError

EVENTS = "/__graphsite/events"
WAIT = 20.0  # longest a long-poll is held open, in seconds
POLL = 0.2  # how often the watched files are looked at, in seconds
_CSP = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")')

RELOAD_JS = """(() => {
  const page = %(page)d;
  const show = (error) => {
    let box = document.getElementById("graphsite-serve-error");
    if (!error) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("pre");
      box.id = "graphsite-serve-error";
      box.setAttribute("role", "alert");
      Object.assign(box.style, {position: "fixed", left: "1rem", right: "1rem", bottom: "1rem", zIndex: "2147483647",
        margin: "0", padding: "1rem", maxHeight: "50vh", overflow: "auto", whiteSpace: "pre-wrap",
        background: "#2a0e0e", color: "#ffd7d7", border: "1px solid #ff6b6b", borderRadius: "6px",
        font: "13px/1.45 ui-monospace, monospace"});
      document.body.appendChild(box);
    }
    box.textContent = "graphsite serve: the build failed; the last good page stays shown.\\n\\n" + error;
  };
  const poll = async (version) => {
    for (;;) {
      try {
        const answer = await fetch("%(events)s?version=" + version, {cache: "no-store"});
        const state = await answer.json();
        if (state.page !== page) { location.reload(); return; }
        version = state.version;
        show(state.error);
      } catch (error) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };
  poll(-1);
})();
"""


def inject_reload(html: str, page: int) -> str:
    """Return `html` with the reload script before </body>, its hash and `connect-src 'self'` added to the CSP."""
    script = RELOAD_JS % {"page": page, "events": EVENTS}
    digest = csp_source(script)

    def widen(match: re.Match[str]) -> str:
        parts = [p.strip() for p in html_text.unescape(match[2]).split(";") if p.strip()]
        parts = [f"{p} {digest}" if p.startswith("script-src") else p for p in parts]
        if not any(p.startswith("script-src") for p in parts):
            parts.append(f"script-src {digest}")
        return match[1] + html_text.escape("; ".join([*parts, "connect-src 'self'"])) + match[3]

    html = _CSP.sub(widen, html, count=1)
    head, tail = html.rsplit("</body>", 1) if "</body>" in html else (html, "")
    return f"{head}<script>{script}</script>\n</body>{tail}"


@dataclass
class State:
    """The last good page, the error of the last build (None: it succeeded), and a version per change."""

    html: bytes = b""
    page: int = 0
    version: int = 0
    error: str | None = None

    def snapshot(self) -> dict[str, Any]:
        return {"page": self.page, "version": self.version, "error": self.error}


class Preview:
    """Builds with `build` (a function returning the page's HTML) and holds the state the server answers from."""

    def __init__(self, build: Callable[[], str], watched: Callable[[], list[Path]]) -> None:
        self._build, self._watched = build, watched
        self.state = State()
        self._seen: dict[Path, bytes | None] = {}
        self.changed = threading.Condition()
        self.stopping = threading.Event()

    def rebuild(self) -> None:
        """Build once; on success serve the new page, on failure keep the last good one and record the error."""
        started = time.perf_counter()
        self._seen = self._stamp()  # before reading: an edit made while building triggers the next build
        try:
            html, error = self._build(), None
        except GraphsiteError as exc:
            html, error = None, exc.format_message()
        with self.changed:
            state = self.state
            if html is not None:
                state.page += 1
                state.html = inject_reload(html, state.page).encode("utf-8")
            state.version += 1
            state.error = error
            self.changed.notify_all()
        if error:
            output.warn(f"build failed (the last good page stays served): {error}")
        else:
            verb = "Built" if state.page == 1 else "Rebuilt"
            output.info(f"{verb} in {time.perf_counter() - started:.2f} s")

    def wait(self, version: int, timeout: float = WAIT) -> dict[str, Any]:
        """Return the state once its version differs from `version`, or after `timeout` seconds, or at stop."""
        with self.changed:
            self.changed.wait_for(lambda: self.state.version != version or self.stopping.is_set(), timeout)
            return self.state.snapshot()

    def _stamp(self) -> dict[Path, bytes | None]:
        """Return a digest of each watched file's content (None: missing). Content, not mtime: two same-size
        writes within one mtime tick still differ."""
        stamps: dict[Path, bytes | None] = {}
        for path in self._watched():
            try:
                stamps[path] = digests.blake2b(path.read_bytes(), digest_size=16).digest()
            except OSError:
                stamps[path] = None
        return stamps

    def watch(self, interval: float = POLL) -> None:
        """Rebuild whenever a watched file changed, appeared or disappeared since the last build, until `stop()`."""
        while not self.stopping.wait(interval):
            if self._stamp() != self._seen:
                self.rebuild()

    def stop(self) -> None:
        self.stopping.set()
        with self.changed:
            self.changed.notify_all()


def _handler(preview: Preview, root: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "graphsite-serve"

        def log_message(self, format: str, *args: Any) -> None:
            output.detail(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            try:
                url = urlsplit(self.path)
            except ValueError:  # a target such as `http://[/`: an invalid IPv6 host
                self._send(400, b"the request target is not a URL\n", "text/plain; charset=utf-8")
                return
            if url.path in ("/", "/index.html"):
                self._send(200, preview.state.html, "text/html; charset=utf-8")
            elif url.path == EVENTS:
                version = _version((parse_qs(url.query).get("version") or ["-1"])[0])
                if version is None:
                    self._send(400, b"version: expected a whole number\n", "text/plain; charset=utf-8")
                    return
                self._send(200, json.dumps(preview.wait(version)).encode(), "application/json")
            else:
                self._file(unquote(url.path))

        do_HEAD = do_GET

        def _file(self, path: str) -> None:
            """A file beside the source (a relative image), never outside its directory nor a hidden one."""
            try:
                target = (root / path.lstrip("/")).resolve()
                inside = target.is_relative_to(root) and not any(p.startswith(".")
                                                                 for p in target.relative_to(root).parts)
                body = target.read_bytes() if inside and target.is_file() else None
            except (OSError, ValueError):  # ValueError: a NUL in the path (%00); OSError: one it may not read
                body = None
            if body is None:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            self._send(200, body, mimetypes.guess_type(target.name)[0] or "application/octet-stream")

    return Handler


def _version(text: str) -> int | None:
    """Return the version the page's script asks after (ASCII digits, a leading - allowed), or None for any other
    text: "²" is a digit to str.isdigit(), not to int()."""
    digits = text.removeprefix("-")
    return int(text) if digits.isascii() and digits.isdigit() and len(digits) <= 18 else None


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when the browser went away mid-request (a reload, a closed tab); print any other error's
        traceback, as socketserver does: that one is a bug."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def start(preview: Preview, root: Path, port: int) -> ThreadingHTTPServer:
    """Return the server bound to 127.0.0.1:`port` (0: any free port), serving in a thread of its own."""
    server = _Server(("127.0.0.1", port), _handler(preview, root.resolve()))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="graphsite-serve", daemon=True).start()
    return server
