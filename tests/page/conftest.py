"""Helpers of the page's browser tests: the default page served from loopback, one headless Chromium, and the
npm tools (axe-core, vnu-jar) that scripts/setup-system installs into tools/npm."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "content" / "graph-engineering.md"
NODE_MODULES = REPO / "tools" / "npm" / "node_modules"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
VNU = NODE_MODULES / "vnu-jar" / "build" / "dist" / "vnu.jar"
SETUP_HINT = "run scripts/setup-system (make test does) to install the page's npm tools into tools/npm"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve `root` on 127.0.0.1 and yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def hosts(requests: list[str]) -> set[str]:
    return {urlsplit(url).hostname or "" for url in requests}


def axe_source() -> str:
    assert AXE.is_file(), f"{AXE} is missing: {SETUP_HINT}"
    return AXE.read_text(encoding="utf-8")


def axe_violations(page) -> list[str]:
    """Run axe-core (WCAG 2.x A/AA and best practices) on the page as shown now; return one line per node."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    results = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations'],
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']}});
        return r.violations.flatMap(v => v.nodes.map(n => v.id + ': ' + n.target.join(' ') + ' — ' +
            (n.failureSummary || '').split('\\n').slice(1, 2).join('')));
    }""")
    return list(results)
