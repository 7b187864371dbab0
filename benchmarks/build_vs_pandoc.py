"""`graphsite build` beside `pandoc --standalone --embed-resources`: whole-process wall time and peak memory.

Run:  .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/build_vs_pandoc.py [--runs 7]

Both tools get the same Markdown: the embedded default report (1x) and the same report with its body
repeated ten times (10x). Each run is a fresh process (what a user waits for); the wall time is the median
of the runs, the peak memory is the child's maximum resident set (os.wait4's rusage, as getrusage of
children reports it). Printed as a table with ratios; never asserted (targets: graphsite at most 0.25 s
on the default report and at most 0.3x pandoc's wall time at 10x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "content" / "graph-engineering.md"
GRAPHSITE = Path(sys.executable).parent / "graphsite"


def measure(command: list[str]) -> tuple[float, int]:
    """Return the wall time (s) and peak RSS (KB) of one run of `command` as a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {process.stderr.read().decode(errors='replace')[:500]}")
    return elapsed, usage.ru_maxrss


def series(command: list[str], runs: int) -> tuple[float, int]:
    results = [measure(command) for _ in range(runs)]
    return statistics.median(t for t, _ in results), max(m for _, m in results)


def repeated(source: Path, times: int, directory: Path) -> Path:
    """Return a copy of `source` whose body (after the front matter) is repeated `times` times."""
    text = source.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    path = directory / f"report-{times}x.md"
    path.write_text(f"---\n{front}---\n" + "\n\n".join([body] * times), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    try:
        import pypandoc
    except ImportError:
        raise SystemExit("pypandoc-binary is missing: .venv/bin/pip install -e '.[bench]'") from None
    pandoc = pypandoc.get_pandoc_path()
    print(f"graphsite: {GRAPHSITE}\npandoc {pypandoc.get_pandoc_version()}: {pandoc}\nruns: {args.runs}, "
          "median wall time, max peak RSS\n")
    header = f"{'input':>6} {'KB':>6} | {'graphsite s':>11} {'pandoc s':>9} {'ratio':>6} | " \
             f"{'graphsite MB':>12} {'pandoc MB':>9} {'ratio':>6}"
    print(header + "\n" + "-" * len(header))
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        for times in (1, 10):
            source = REPORT if times == 1 else repeated(REPORT, times, directory)
            ours = series([str(GRAPHSITE), "-q", "build", str(source), "--out", str(directory / "gs")], args.runs)
            theirs = series([pandoc, "--standalone", "--embed-resources", "-f", "markdown", "-t", "html5",
                             "--metadata", "pagetitle=bench", str(source), "-o", str(directory / "pandoc.html")],
                            args.runs)
            print(f"{times:>5}x {source.stat().st_size // 1024:>6} | {ours[0]:>11.3f} {theirs[0]:>9.3f} "
                  f"{ours[0] / theirs[0]:>5.2f}x | {ours[1] / 1024:>12.1f} {theirs[1] / 1024:>9.1f} "
                  f"{ours[1] / theirs[1]:>5.2f}x")
    print("\ntargets: graphsite <= 0.25 s at 1x; graphsite <= 0.3x pandoc's wall time at 10x")


if __name__ == "__main__":
    main()
