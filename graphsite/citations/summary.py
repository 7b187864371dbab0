"""How a link check looks to the person at the keyboard: a progress bar while it runs, a table at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from graphsite.citations.results import STATES, LinkReport

_WIDTH = 28
_COLOURS = {"ok": "32", "redirected": "36", "blocked": "33", "dead": "31", "timeout": "35", "skipped": "2"}


class Progress:
    """`checking links [#####-----] 12/47` redrawn on a terminal; a counter line every tenth otherwise."""

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.enabled = enabled and total > 0 and _verbosity() >= 0
        self.tty = self.stream.isatty()
        self._last_line = 0

    def advance(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled or count == 0:
            return
        if self.tty:
            filled = _WIDTH * self.done // self.total
            bar = "#" * filled + "-" * (_WIDTH - filled)
            self.stream.write(f"\r  checking links [{bar}] {self.done}/{self.total}")
            self.stream.flush()
        else:
            step = max(1, self.total // 10)
            mark = self.done // step
            if mark != self._last_line or self.done == self.total:
                self._last_line = mark
                self.stream.write(f"  checked {self.done}/{self.total} links\n")
                self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def render_summary(report: LinkReport, *, every_link: bool = False, colour: bool | None = None) -> str:
    """Return the end-of-check table: one row per link worth a look (every link with `every_link`), then totals."""
    if colour is None:
        colour = not os.environ.get("NO_COLOR") and sys.stderr.isatty()
    rows = [r for r in report.results if every_link or r.state not in ("ok",)]
    width = max((len(r.state) for r in rows), default=0)
    lines = []
    for item in rows:
        state = item.state.ljust(width)
        if colour:
            state = f"\033[{_COLOURS[item.state]}m{state}\033[0m"
        status = str(item.status) if item.status is not None else "---"
        note = f"  {item.detail}" if item.detail else ""
        cached = " (cached)" if item.cached else ""
        lines.append(f"  {state}  {status:>3}  {item.url}{note}{cached}")
    counts = report.counts()
    totals = ", ".join(f"{counts[s]} {s}" for s in STATES if counts[s])
    from_cache = sum(1 for r in report.results if r.cached)
    lines.append(f"Checked {len(report.results)} links in {report.seconds:.2f} s "
                 f"({report.requests} requests, {from_cache} from cache): {totals or 'nothing to check'}")
    return "\n".join(lines)


def show_links(report: LinkReport, fail_on: Sequence[str] = ("dead",), *, as_json: bool = False) -> None:
    """Print warnings and the table on stderr (the JSON object on stdout with `as_json`); raise
    LinkCheckError (exit 1) when a link ends in a state of `fail_on`."""
    from graphsite import output
    from graphsite.errors import LinkCheckError

    for warning in report.warnings:
        output.warn(warning)
    output.info(render_summary(report, every_link=_verbosity() >= 1))
    if as_json:
        output.emit_json(report.as_dict())
    failing = report.failing(fail_on)
    if failing:
        first = failing[0]
        raise LinkCheckError(f"{len(failing)} link(s) {'/'.join(fail_on)}: first {first.url} ({first.detail})",
                             hint="fix or replace the link in the report, or add its prefix to links.skip")


def _verbosity() -> int:
    from graphsite import output

    return getattr(output, "_verbosity", 0)
