"""`graphsite serve` beside `mkdocs serve`: how long an edit takes to reach the open page, live-reloaded.

Run:  .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/serve_reload.py [--edits 7]

Both serve the same Markdown (the embedded default report) on 127.0.0.1 to headless Chromium (Debian's
/usr/bin/chromium). Each edit appends a new marker paragraph to the source; the time is from the write to the
moment the marker is in the open page's text (polled every 20 ms from outside the page). Medians, printed side by
side with the ratio; never asserted (target: graphsite under 1 s).
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from graphsite.builder.pdf import DEFAULT_CHROMIUM

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "content" / "graph-engineering.md"
BIN = Path(sys.executable).parent
CHROMIUM = DEFAULT_CHROMIUM  # Debian's, never a downloaded browser


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(url: str, deadline: float = 30.0) -> None:
    import httpx

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} did not answer within {deadline:.0f} s")


def graphsite_server(work: Path) -> tuple[subprocess.Popen, str, Path]:
    source = work / "report.md"
    source.write_text(REPORT.read_text(encoding="utf-8"), encoding="utf-8")
    process = subprocess.Popen([str(BIN / "graphsite"), "serve", str(source), "--port", "0", "--fonts", "system"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=work)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    if not ready:
        raise SystemExit("graphsite serve printed no URL")
    url = process.stdout.readline().decode().strip()
    return process, url, source


def mkdocs_server(work: Path) -> tuple[subprocess.Popen, str, Path]:
    (work / "docs").mkdir()
    source = work / "docs" / "index.md"
    source.write_text(REPORT.read_text(encoding="utf-8"), encoding="utf-8")
    (work / "mkdocs.yml").write_text("site_name: bench\n", encoding="utf-8")
    port = _free_port()
    process = subprocess.Popen([str(BIN / "mkdocs"), "serve", "--dev-addr", f"127.0.0.1:{port}", "--livereload"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    url = f"http://127.0.0.1:{port}/"
    _wait_for(url)
    return process, url, source


def edits(browser, url: str, source: Path, count: int) -> list[float]:
    """Return the seconds from each write of `source` to its marker showing in the open page."""
    page = browser.new_page()
    page.goto(url)
    times = []
    for number in range(count):
        marker = f"marker-{os.getpid()}-{number}"
        started = time.perf_counter()
        with source.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\n{marker}\n")
        while marker not in page.inner_text("body"):
            if time.perf_counter() - started > 20:
                raise SystemExit(f"{url}: the edit never reached the page")
            time.sleep(0.02)
        times.append(time.perf_counter() - started)
        time.sleep(0.5)  # let each tool settle before the next edit
    page.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        for name, start in (("graphsite serve", graphsite_server), ("mkdocs serve", mkdocs_server)):
            with tempfile.TemporaryDirectory(prefix="serve-bench-") as scratch:
                process, url, source = start(Path(scratch))
                try:
                    results[name] = edits(browser, url, source, args.edits)
                finally:
                    process.send_signal(signal.SIGINT)
                    try:
                        process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        process.kill()
        browser.close()
    ours, peer = (statistics.median(results[n]) for n in ("graphsite serve", "mkdocs serve"))
    print(f"edit → open page, median of {args.edits} edits of {REPORT.name}:")
    for name, times in results.items():
        print(f"  {name:16} {statistics.median(times):6.3f} s  (min {min(times):.3f}, max {max(times):.3f})")
    print(f"  ratio graphsite/mkdocs: {ours / peer:.2f}x")


if __name__ == "__main__":
    main()
