"""`graphsite build` beside Hugo and pandoc on the same Markdown: whole processes, alternating, median of 5.

Run:  .venv/bin/python benchmarks/build_vs_hugo.py [--runs 5] [--before OTHER/.venv/bin/graphsite] [--quick]

Inputs: a 3-line document, the embedded default report, and that report with its body repeated 10 and 50 times.
Peers: Debian's `hugo` (`apt-get install hugo`) building a minimal one-page site whose Goldmark has the Markdown
extensions graphsite parses (tables, strikethrough, autolinks, footnotes, task lists, raw HTML kept), and pandoc
(`pandoc` on PATH, else pypandoc-binary's) making a standalone HTML5 page. `--before` adds a second graphsite
(an unmodified checkout's) to the same run, so before and after are measured side by side.

Every command runs as a fresh process after one warm-up run that is not counted (it fills graphsite's template
and font caches, as any build after the first finds them); then the tools take turns, A B C A B C …, so a drift
in the machine's speed reaches them all alike. Printed: the median wall time, the median CPU time (user + system
of the child, from wait4: what a busy shared machine disturbs least), the largest peak RSS, and graphsite / Hugo
on CPU time, wall time and memory. Never asserted; the targets are printed below the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_vs_pandoc import GRAPHSITE, REPORT, repeated  # noqa: E402

THREE_LINES = "# A short note\n\nOne paragraph with *emphasis* and a [link](https://example.org/).\n"
HUGO_CONFIG = """baseURL = "https://example.org/"
disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404", "page", "section"]
[markup.goldmark.extensions]
table = true
strikethrough = true
linkify = true
footnote = true
taskList = true
definitionList = false
typographer = false
[markup.goldmark.renderer]
unsafe = true
"""
HUGO_LAYOUT = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>'
               "<body>{{ .Content }}</body></html>\n")


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # user + system seconds of the child
    peak: int  # KB


@dataclass(frozen=True)
class Figures:
    wall: float
    cpu: float
    peak_mb: float


def measure(command: list[str]) -> Run:
    """Return one run of `command` as a fresh process; stop the benchmark if it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed: {stderr[:500]}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def alternate(commands: dict[str, list[str]], runs: int) -> dict[str, Figures]:
    """Return each command's figures over `runs` counted runs, the commands taking turns after a warm-up each."""
    for command in commands.values():
        measure(command)
    results: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            results[name].append(measure(command))
    return {name: Figures(statistics.median(r.wall for r in rs), statistics.median(r.cpu for r in rs),
                          max(r.peak for r in rs) / 1024) for name, rs in results.items()}


def hugo_site(source: Path, directory: Path) -> Path:
    """Return a minimal one-page Hugo site whose home page is `source`."""
    site = directory / f"hugo-{source.stem}"
    (site / "content").mkdir(parents=True, exist_ok=True)
    (site / "layouts").mkdir(exist_ok=True)
    (site / "hugo.toml").write_text(HUGO_CONFIG, encoding="utf-8")
    (site / "layouts" / "index.html").write_text(HUGO_LAYOUT, encoding="utf-8")
    shutil.copyfile(source, site / "content" / "_index.md")
    return site


def find_pandoc() -> str | None:
    """Return pandoc on PATH, else pypandoc-binary's, else None."""
    found = shutil.which("pandoc")
    if found:
        return found
    try:
        import pypandoc  # type: ignore[import-not-found]
    except ImportError:
        return None
    path: str = pypandoc.get_pandoc_path()
    return path


def version(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()[0].strip()


def commands_for(source: Path, directory: Path, tools: dict[str, str]) -> dict[str, list[str]]:
    """Return the command of every tool building `source` into its own folder under `directory`."""
    out = directory / "out"
    commands = {name: [path, "-q", "build", str(source), "--out", str(out / name)]
                for name, path in tools.items() if name.startswith("graphsite")}
    if "hugo" in tools:
        commands["hugo"] = [tools["hugo"], "--quiet", "--source", str(hugo_site(source, directory)),
                            "--destination", str(out / "hugo")]
    if "pandoc" in tools:
        commands["pandoc"] = [tools["pandoc"], "--standalone", "-f", "markdown", "-t", "html5", "--metadata",
                              "pagetitle=bench", str(source), "-o", str(out / "pandoc.html")]
    return commands


def table(rows: list[tuple[str, int, dict[str, Figures]]], names: list[str]) -> str:
    """Return the printed table: one line per input and tool, with graphsite / Hugo for each graphsite."""
    header = (f"| {'input':<14} | {'KB':>5} | {'tool':<18} | {'wall s':>7} | {'CPU s':>7} | {'peak MB':>7} "
              f"| {'CPU / Hugo':>10} | {'wall / Hugo':>11} | {'MB / Hugo':>9} |")
    lines = [header, "|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|"]
    for label, size, figures in rows:
        hugo = figures.get("hugo")
        for name in names:
            if name not in figures:
                continue
            f = figures[name]
            ratio = (f"{f.cpu / hugo.cpu:>9.2f}x | {f.wall / hugo.wall:>10.2f}x | {f.peak_mb / hugo.peak_mb:>8.2f}x"
                     if hugo and name != "hugo" else f"{'':>10} | {'':>11} | {'':>9}")
            lines.append(f"| {label:<14} | {size:>5} | {name:<18} | {f.wall:>7.3f} | {f.cpu:>7.3f} | "
                         f"{f.peak_mb:>7.1f} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--graphsite", default=str(GRAPHSITE), help="the graphsite executable measured")
    parser.add_argument("--before", help="a second graphsite executable (e.g. main's) measured in the same turns")
    parser.add_argument("--quick", action="store_true", help="leave pandoc out at 50x (about 15 s a run)")
    parser.add_argument("--sizes", default="3-line,1,10,50", help="inputs: 3-line and repeat factors, comma-separated")
    args = parser.parse_args()
    tools = {"graphsite": args.graphsite}
    if args.before:
        tools["graphsite (before)"] = args.before
    hugo = shutil.which("hugo")
    if hugo is None:
        raise SystemExit("hugo is missing: apt-get install hugo (Debian's package)")
    tools["hugo"] = hugo
    pandoc = find_pandoc()
    if pandoc:
        tools["pandoc"] = pandoc
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, path in tools.items():
        print(f"{name}: {version([path, '--version']) if name != 'hugo' else version([path, 'version'])} ({path})")
    print(f"runs: {args.runs} counted after 1 warm-up, alternating; median wall and CPU time, max peak RSS\n")
    names = list(tools)
    rows: list[tuple[str, int, dict[str, Figures]]] = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        start = version_row(tools, args.runs)
        rows.append(start)
        for size in args.sizes.split(","):
            if size == "3-line":
                source = directory / "three-lines.md"
                source.write_text(THREE_LINES, encoding="utf-8")
                label = "3-line doc"
            else:
                factor = int(size)
                source = REPORT if factor == 1 else repeated(REPORT, factor, directory)
                label = f"report {factor}x"
            chosen = {name: path for name, path in tools.items()
                      if not (args.quick and name == "pandoc" and label == "report 50x")}
            figures = alternate(commands_for(source, directory, chosen), args.runs)
            rows.append((label, source.stat().st_size // 1024, figures))
            print(f"  measured {label}", file=sys.stderr)
    print(table(rows, names))
    print("\n" + "\n".join(targets(rows)))


def version_row(tools: dict[str, str], runs: int) -> tuple[str, int, dict[str, Figures]]:
    """Return the figures of each tool printing its version: the start-up of the executable alone."""
    flags: dict[str, Callable[[str], list[str]]] = {"hugo": lambda path: [path, "version"]}
    commands = {name: flags.get(name, lambda path: [path, "--version"])(path) for name, path in tools.items()}
    return ("--version", 0, alternate(commands, runs))


def targets(rows: list[tuple[str, int, dict[str, Figures]]]) -> list[str]:
    """Return the issue's targets, each with the measured figure (CPU time ratios; absolute times are wall)."""
    by = {label: figures for label, _, figures in rows}
    lines = ["targets (graphsite):"]

    def ratio(label: str) -> str:
        f = by.get(label, {})
        if "graphsite" not in f or "hugo" not in f:
            return "not measured"
        return f"{f['graphsite'].cpu / f['hugo'].cpu:.2f}x CPU, {f['graphsite'].wall / f['hugo'].wall:.2f}x wall"

    lines.append(f"  default report <= 1.5x Hugo: {ratio('report 1x')}")
    lines.append(f"  10x <= 3x Hugo: {ratio('report 10x')}")
    for label, limit in (("3-line doc", 0.080), ("--version", 0.060)):
        f = by.get(label, {}).get("graphsite")
        shown = f"{f.wall * 1000:.0f} ms wall, {f.cpu * 1000:.0f} ms CPU" if f else "not measured"
        lines.append(f"  {label} <= {limit * 1000:.0f} ms: {shown}")
    at50 = by.get("report 50x", {})
    if "graphsite" in at50 and "hugo" in at50:
        lines.append(f"  50x memory <= Hugo's: {at50['graphsite'].peak_mb:.0f} MB vs {at50['hugo'].peak_mb:.0f} MB")
    if "graphsite (before)" in at50 and "graphsite" in at50:
        before = at50["graphsite (before)"]
        lines.append(f"  50x no slower than before: {at50['graphsite'].cpu:.2f} s vs {before.cpu:.2f} s CPU")
    one, fifty = by.get("report 1x", {}).get("graphsite"), at50.get("graphsite")
    if one and fifty:
        lines.append(f"  linear 1x -> 50x: {fifty.cpu / one.cpu:.1f}x the CPU time for 50x the input")
    return lines


if __name__ == "__main__":
    main()
