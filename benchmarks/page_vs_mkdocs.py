"""The page graphsite builds beside MkDocs Material's and pandoc's builds of the same Markdown, as Lighthouse
sees them.

Run:  scripts/setup-system && .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/page_vs_mkdocs.py
      [--runs 3] [--modes embedded,system]

For each of graphsite's font modes (embedded, the default; system; optionally google), for MkDocs Material with
its defaults and for `pandoc --standalone --embed-resources` (pypandoc-binary), Lighthouse runs `--runs` times
(default 3) per preset and the table shows the median of each figure. Each site is served from 127.0.0.1 by one
small gzip-capable server (all get the same transport and the same robots.txt) and measured by Lighthouse (npm,
tools/npm; CHROME_PATH=/usr/bin/chromium) with its mobile and desktop presets: the four category scores, FCP,
LCP, TBT and CLS, bytes transferred and requests. The page's
own bytes (raw and gzip) are printed per font mode. graphsite is built with `site.indexable = true`: a
preview's `noindex` is on purpose and would cost the SEO score for no reason of the page's making.

Only loopback is reachable here: a mode that asks a third party (graphsite --fonts google, Material's Google
Fonts) has those requests fail; the table counts them as requests made. Screenshots of graphsite's default page
(desktop, phone, print) go to the folder printed at the end. Nothing is asserted; the targets (>= 98 in all four
categories, mobile and desktop, ahead of Material) are read off the table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from graphsite.builder.pdf import DEFAULT_CHROMIUM

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "content" / "graph-engineering.md"
LIGHTHOUSE = REPO / "tools" / "npm" / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = DEFAULT_CHROMIUM  # Debian's, never a downloaded browser
OUT = REPO / "benchmarks" / "out" / "page"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
COMPRESSIBLE = (".html", ".css", ".js", ".svg", ".json", ".xml", ".txt")
MODES = ("embedded", "system", "google")
DEFAULT_MODES = "embedded,system"
SCORED = (*CATEGORIES, "fcp", "lcp", "tbt", "cls", "bytes", "requests")


class _Handler(SimpleHTTPRequestHandler):
    """Static files with gzip for text (as Caddy's `encode gzip` does) and one robots.txt that allows all."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.split("?")[0] == "/robots.txt":
            return self._send(b"User-agent: *\nAllow: /\n", "text/plain")
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file() or not path.name.endswith(COMPRESSIBLE):
            return super().do_GET()
        return self._send(path.read_bytes(), self.guess_type(str(path)))

    def _send(self, data: bytes, content_type: str):
        compressed = "gzip" in self.headers.get("Accept-Encoding", "")
        body = gzip.compress(data, 6) if compressed else data
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        if compressed:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        self.wfile.write(body)


def serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Handler(*a, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


def build_graphsite(root: Path) -> dict[str, Path]:
    """Build the default report in every font mode (indexable), return mode -> index.html."""
    config = root / "graphsite.toml"
    config.write_text("[site]\nindexable = true\n", encoding="utf-8")
    pages = {}
    for mode in MODES:
        out = root / f"graphsite-{mode}"
        subprocess.run([str(Path(sys.executable).parent / "graphsite"), "build", str(REPORT), "--out", str(out),
                        "--fonts", mode, "--config", str(config)], check=True, stderr=subprocess.DEVNULL)
        pages[mode] = out / "index.html"
    return pages


def build_mkdocs(root: Path) -> Path:
    """Build the same Markdown with MkDocs Material's defaults; return the site directory."""
    project = root / "mkdocs-project"
    (project / "docs").mkdir(parents=True)
    shutil.copy(REPORT, project / "docs" / "index.md")
    (project / "mkdocs.yml").write_text(
        'site_name: "Graph Engineering"\nsite_url: "http://127.0.0.1/"\ntheme:\n  name: material\n', encoding="utf-8")
    site = root / "mkdocs-site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(project / "mkdocs.yml"),
                    "-d", str(site)], check=True)
    return site


def lighthouse(url: str, preset: str, out: Path) -> dict:
    """Run Lighthouse once; return scores (0-100), FCP/LCP (ms), transferred bytes and requests."""
    command = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
               "--chrome-flags=--headless=new --no-sandbox", f"--only-categories={','.join(CATEGORIES)}"]
    if preset == "desktop":
        command.append("--preset=desktop")
    subprocess.run(command, check=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=300)
    data = json.loads(out.read_text(encoding="utf-8"))
    audits = data["audits"]
    return {
        **{name: round(100 * (data["categories"][name]["score"] or 0)) for name in CATEGORIES},
        "fcp": audits["first-contentful-paint"]["numericValue"],
        "lcp": audits["largest-contentful-paint"]["numericValue"],
        "tbt": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
        "requests": sum(item["url"].startswith(("http:", "https:"))  # data: URLs (embedded fonts) are no request
                        for item in audits["network-requests"]["details"]["items"]),
        "below": [f"{ref['id']} {audits[ref['id']]['score']}" for name in CATEGORIES
                  for ref in data["categories"][name]["auditRefs"]
                  if ref["weight"] and audits[ref["id"]]["score"] is not None and audits[ref["id"]]["score"] < 1],
    }


def build_pandoc(root: Path) -> Path:
    """Build the same Markdown with `pandoc --standalone --embed-resources`; return the site directory."""
    try:
        import pypandoc
    except ImportError:
        raise SystemExit("pypandoc-binary is missing: .venv/bin/pip install -e '.[bench]'") from None
    site = root / "pandoc-site"
    site.mkdir()
    subprocess.run([pypandoc.get_pandoc_path(), "--standalone", "--embed-resources", "-f", "markdown", "-t", "html5",
                    "--metadata", "title=Graph Engineering", "-o", str(site / "index.html"), str(REPORT)],
                   check=True, stderr=subprocess.DEVNULL)
    return site


def median_of(runs: list[dict]) -> dict:
    """Return the median of each figure over Lighthouse runs, and the audits below 1 in any run."""
    middle = {name: statistics.median(run[name] for run in runs) for name in SCORED}
    middle["below"] = sorted({item for run in runs for item in run["below"]})
    middle["rounds"] = [run["performance"] for run in runs]
    return middle


def screenshots(url: str, folder: Path) -> None:
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        for name, width, height, media in (("desktop", 1440, 900, "screen"), ("phone", 390, 844, "screen"),
                                           ("print", 794, 1123, "print")):
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.emulate_media(media=media)
            tab.goto(url)
            tab.evaluate("document.fonts.ready")
            tab.screenshot(path=str(folder / f"{name}.png"))  # the first screen (print: the first A4 page)
            tab.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default=DEFAULT_MODES, help=f"graphsite font modes to measure ({', '.join(MODES)})")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page and preset (median shown)")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure MkDocs Material and pandoc (the ratios need Material)")
    args = parser.parse_args()
    if not LIGHTHOUSE.exists():
        raise SystemExit(f"{LIGHTHOUSE} is missing: run scripts/setup-system")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="graphsite-page-bench-") as temporary:
        root = Path(temporary)
        pages = build_graphsite(root)
        targets = {f"graphsite {mode}": pages[mode].parent for mode in args.modes.split(",")}
        if args.peers:
            targets["mkdocs material"] = build_mkdocs(root)
            targets["pandoc"] = build_pandoc(root)
        print("page bytes (index.html): raw / gzip -6", file=sys.stderr)
        for mode, page in pages.items():
            data = page.read_bytes()
            print(f"  graphsite {mode:9} {len(data) / 1024:7.1f} KB / {len(gzip.compress(data, 6)) / 1024:6.1f} KB")
        material = (targets["mkdocs material"] / "index.html").read_bytes() if args.peers else b""
        print(f"  mkdocs material    {len(material) / 1024:7.1f} KB / {len(gzip.compress(material, 6)) / 1024:6.1f} KB"
              " (its CSS, JS and fonts are further requests)")
        results: dict[tuple[str, str], dict] = {}
        for name, folder in targets.items():
            server, url = serve(folder)
            try:
                for preset in ("mobile", "desktop"):
                    print(f"lighthouse {preset}: {name}", file=sys.stderr)
                    result = median_of([lighthouse(url, preset, OUT / f"{name.replace(' ', '-')}-{preset}-{run}.json")
                                        for run in range(args.runs)])
                    results[(name, preset)] = result
                    print(f"  scored audits below 1: {', '.join(result['below']) or 'none'}", file=sys.stderr)
                if name == "graphsite embedded":
                    screenshots(url, OUT / "screenshots")
            finally:
                server.shutdown()
                server.server_close()
    header = (f"{'':22} {'perf':>4} {'a11y':>4} {'b-p':>4} {'seo':>4} {'FCP ms':>7} {'LCP ms':>7} {'TBT ms':>6} "
              f"{'CLS':>5} {'KB':>6} {'req':>4}  perf rounds")
    for preset in ("mobile", "desktop"):
        print(f"\nLighthouse {preset}, median of {args.runs}\n{header}")
        for name in targets:
            r = results[(name, preset)]
            print(f"{name:22} {r['performance']:4.0f} {r['accessibility']:4.0f} {r['best-practices']:4.0f} "
                  f"{r['seo']:4.0f} {r['fcp']:7.0f} {r['lcp']:7.0f} {r['tbt']:6.0f} {r['cls']:5.3f} "
                  f"{r['bytes'] / 1024:6.0f} {r['requests']:4.0f}  {'/'.join(map(str, r['rounds']))}")
        peer = results.get(("mkdocs material", preset))
        for name in targets if peer else ():
            if name.startswith("graphsite"):
                r = results[(name, preset)]
                print(f"  {name} / material: LCP {r['lcp'] / peer['lcp']:.2f}x, "
                      f"bytes {r['bytes'] / peer['bytes']:.2f}x, requests {r['requests']}/{peer['requests']}")
    print(f"\nLighthouse reports and screenshots (desktop, phone, print): {OUT}")


if __name__ == "__main__":
    main()
