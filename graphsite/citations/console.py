"""How a link check looks to the person at the keyboard: a progress bar while it runs, a table at the end
(`commands/present.py` prints it and decides the exit status)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from graphsite.citations.results import LinkReport, LinkResult
from graphsite.codes import LINK_STATES as STATES

_WIDTH = 28
_COLOURS = {"ok": "32", "redirected": "36", "warn": "33", "blocked": "33", "unavailable": "33", "dead": "31",
            "timeout": "35", "unverified": "35", "local": "33", "private": "2", "skipped": "2", "unchecked": "2"}
WAITING_EVERY = 5.0  # seconds between two "waiting on" lines off a terminal


class Progress:
    """`checking links [#####-----] 12/47` redrawn on a terminal; a counter line every tenth otherwise. When no
    verdict comes for a while, `waiting` names the URLs in flight (on the bar, or a line every few seconds)."""

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.enabled = enabled and total > 0 and _verbosity() >= 0
        self.tty = self.stream.isatty()
        self.clock = clock
        self._last_line = 0
        self._last_verdict, self._last_waiting = clock(), float("-inf")
        self._waiting_shown = False

    def idle(self) -> float:
        """Return the seconds since the last verdict (or the start)."""
        return self.clock() - self._last_verdict

    def waiting(self, in_flight: list[tuple[str, float]]) -> None:
        """Name the requests in flight, longest first: (URL, seconds it has run)."""
        if not self.enabled or not in_flight:
            return
        url, seconds = in_flight[0]
        more = f" and {len(in_flight) - 1} more" if len(in_flight) > 1 else ""
        if self.tty:
            self._draw(f"  waiting on {_shorten(url, 60)} ({seconds:.0f} s){more}")
            self._waiting_shown = True
        elif self.clock() - self._last_waiting >= WAITING_EVERY:
            self._last_waiting = self.clock()
            names = ", ".join(f"{u} ({s:.0f} s)" for u, s in in_flight[:3])
            rest = f" and {len(in_flight) - 3} more" if len(in_flight) > 3 else ""
            self.stream.write(f"  waiting on {len(in_flight)} link(s): {names}{rest}\n")
            self.stream.flush()

    def _draw(self, suffix: str = "") -> None:
        filled = _WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (_WIDTH - filled)
        self.stream.write(f"\r\033[K  checking links [{bar}] {self.done}/{self.total}{suffix}"
                          if self._waiting_shown or suffix else f"\r  checking links [{bar}] {self.done}/{self.total}")
        self.stream.flush()

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._last_verdict = self.clock()
        if not self.enabled or count == 0:
            return
        if self.tty:
            self._draw()
            self._waiting_shown = False
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
    """Return the end-of-check table: one row per link worth a look (every link with `every_link`), then totals;
    coloured when `colour` (None: when stdout is a terminal and NO_COLOR is not set)."""
    if colour is None:
        from graphsite.output import colour_on

        colour = colour_on(sys.stdout)
    rows = [r for r in report.results if every_link or r.state != "ok" or r.warning]
    width = max((len(r.state) for r in rows), default=0)
    lines = []
    for item in rows:
        state = item.state.ljust(width)
        if colour:
            state = f"\033[{_COLOURS[item.state]}m{state}\033[0m"
        status = str(item.status) if item.status is not None else "---"
        note = f"  {item.detail}" if item.detail else ""
        warning = f"  warning: {item.warning}" if item.warning else ""
        cached = " (cached)" if item.cached else ""
        lines.append(f"  {state}  {status:>3}  {item.url}{where(item)}{note}{warning}{cached}")
    counts = report.counts()
    totals = ", ".join(f"{counts[s]} {s}" for s in STATES if counts[s])
    from_cache = sum(1 for r in report.results if r.cached)
    stopped = f"Stopped by {report.stopped_by} (partial): " if report.partial else ""
    lines.append(f"{stopped}Checked {len(report.results)} links in {report.seconds:.2f} s "
                 f"({report.requests} requests, {from_cache} from cache): {totals or 'nothing to check'}")
    return "\n".join(lines)


def where(item: LinkResult) -> str:
    if item.places:
        shown = ", ".join(map(str, item.places[:5])) + (", …" if len(item.places) > 5 else "")
        return f" ({shown})"
    if not item.lines:
        return ""
    shown = ", ".join(map(str, item.lines[:5])) + (", …" if len(item.lines) > 5 else "")
    return f" (line{'s' if len(item.lines) > 1 else ''} {shown})"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _verbosity() -> int:
    from graphsite import output

    return getattr(output, "_verbosity", 0)
