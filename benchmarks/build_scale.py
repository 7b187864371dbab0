"""How `graphsite build` scales: wall time and peak memory at 1x, 10x and 50x the default report, and at 1,000 /
4,000 / 16,000 citations (all clean, then every one mismatched), each beside pandoc on the same file.

Run:  .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/build_scale.py [--runs 3] [--quick]

Every run is a fresh process; the time is the median of the runs (wall time, and CPU time — user + system of
the child, which a busy shared machine disturbs far less), the memory the largest peak RSS. Printed, never
asserted; the ratios against the targets are computed on CPU time. Targets (issue 9): time
grows linearly (4x the citations take at most 5x the time), the mismatched report within 2x of the clean one,
and graphsite at most 0.3x pandoc's time at 10x.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_vs_pandoc import GRAPHSITE, REPORT, repeated  # noqa: E402


def measure(command: list[str]) -> tuple[float, float, int]:
    """Return the wall time (s), CPU time (user + system, s) and peak RSS (KB) of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command[0]} failed: {process.stderr.read().decode(errors='replace')[:500]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def series(command: list[str], runs: int) -> tuple[float, float, int]:
    """Return the median wall time, the median CPU time and the largest peak RSS of `runs` runs."""
    results = [measure(command) for _ in range(runs)]
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            max(r[2] for r in results))


def citations_report(count: int, directory: Path, *, mismatched: bool) -> Path:
    """Return a report with `count` numbered citations, twenty per section, and a reference list; with
    `mismatched`, every reference URL differs from its citation by a trailing slash."""
    parts = ["# A report with many citations\n"]
    for start in range(0, count, 20):
        parts.append(f"\n## {start // 20 + 1}. Section {start // 20 + 1}\n\n")
        parts += [f"Claim {n} holds, as the source shows [[{n}](https://example.org/doc/{n})].\n"
                  for n in range(start + 1, min(count, start + 20) + 1)]
    parts.append("\n## References\n\n")
    slash = "/" if mismatched else ""
    parts += [f"{n}. Source {n}. https://example.org/doc/{n}{slash}\n" for n in range(1, count + 1)]
    path = directory / f"citations-{count}-{'mismatched' if mismatched else 'clean'}.md"
    path.write_text("".join(parts), encoding="utf-8")
    return path


def graphsite_command(source: Path, directory: Path) -> list[str]:
    return [str(GRAPHSITE), "-q", "build", str(source), "--out", str(directory / "gs")]


def pandoc_command(pandoc: str, source: Path, directory: Path) -> list[str]:
    return [pandoc, "--standalone", "--embed-resources", "-f", "markdown", "-t", "html5", "--metadata",
            "pagetitle=bench", str(source), "-o", str(directory / "pandoc.html")]


def row(label: str, source: Path, ours: tuple[float, float, int], theirs: tuple[float, float, int] | None) -> str:
    size = source.stat().st_size // 1024
    mine = f"{label:>22} {size:>6} | {ours[0]:>7.3f} {ours[1]:>7.3f}"
    if theirs is None:
        return f"{mine} {'-':>7} {'-':>7} {'-':>6} | {ours[2] / 1024:>8.1f} {'-':>8} {'-':>6}"
    return (f"{mine} {theirs[0]:>7.3f} {theirs[1]:>7.3f} {ours[1] / theirs[1]:>5.2f}x | "
            f"{ours[2] / 1024:>8.1f} {theirs[2] / 1024:>8.1f} {ours[2] / theirs[2]:>5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip pandoc at 50x and at 16,000 citations")
    args = parser.parse_args()
    try:
        import pypandoc
    except ImportError:
        raise SystemExit("pypandoc-binary is missing: .venv/bin/pip install -e '.[bench]'") from None
    pandoc = pypandoc.get_pandoc_path()
    print(f"graphsite: {GRAPHSITE}\npandoc {pypandoc.get_pandoc_version()}: {pandoc}\nruns: {args.runs}, "
          "median wall and CPU time, max peak RSS; ratio = graphsite / pandoc (CPU time, memory)\n")
    header = (f"{'input':>22} {'KB':>6} | {'gs wall':>7} {'gs cpu':>7} {'pd wall':>7} {'pd cpu':>7} {'ratio':>6} | "
              f"{'gs MB':>8} {'pd MB':>8} {'ratio':>6}")
    print(header + "\n" + "-" * len(header))
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        for factor in (1, 10, 50):
            source = REPORT if factor == 1 else repeated(REPORT, factor, directory)
            ours = series(graphsite_command(source, directory), args.runs)
            theirs = None if args.quick and factor == 50 else series(pandoc_command(pandoc, source, directory),
                                                                     args.runs)
            times[f"{factor}x"] = ours[1]
            if theirs is not None:
                times[f"{factor}x pandoc"] = theirs[1]
            print(row(f"default report {factor}x", source, ours, theirs))
        for count in (1000, 4000, 16000):
            for mismatched in (False, True):
                source = citations_report(count, directory, mismatched=mismatched)
                label = f"{count} cites {'mismatched' if mismatched else 'clean'}"
                ours = series(graphsite_command(source, directory), args.runs)
                skip = args.quick and count == 16000
                theirs = None if skip else series(pandoc_command(pandoc, source, directory), args.runs)
                times[label] = ours[1]
                print(row(label, source, ours, theirs))
    print("\nratios against the targets (CPU time):")
    for small, large in ((1000, 4000), (4000, 16000)):
        for kind in ("clean", "mismatched"):
            growth = times[f"{large} cites {kind}"] / times[f"{small} cites {kind}"]
            print(f"  {kind:>10}: {large} / {small} citations take {growth:.2f}x the time (target <= 5x)")
    for count in (1000, 4000, 16000):
        ratio = times[f"{count} cites mismatched"] / times[f"{count} cites clean"]
        print(f"  {count} citations: mismatched / clean = {ratio:.2f}x (target <= 2x)")
    if "10x pandoc" in times:
        print(f"  10x the default report: graphsite / pandoc = {times['10x'] / times['10x pandoc']:.2f}x "
              "(target <= 0.3x)")


if __name__ == "__main__":
    main()
