"""What a live link check concludes: one state per URL, and the pure rules that decide it."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphsite.codes import LINK_STATES as STATES
from graphsite.values import frozen

# The site refuses robots (or us): not proof that the link is dead.
BLOCKED_STATUSES = frozenset({401, 403, 406, 429, 451, 999})
# Worth asking again: the server is busy or broken for now.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})



@dataclass(frozen=True)
class Place:
    """Where a link is written: its Markdown line and column (1-based, in the file; column 0 when the URL's text
    was not found there), and the inline citation [N] or the reference entry N it is the URL of."""

    line: int
    column: int = 0
    citation: int | None = None
    reference: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}:{self.column}" if self.column else f"line {self.line}"
        if self.citation is not None:
            return f"{where} [{self.citation}]"
        return f"{where} reference {self.reference}" if self.reference is not None else where

    def as_dict(self) -> dict[str, int | None]:
        return {"line": self.line, "column": self.column, "citation": self.citation, "reference": self.reference}


@dataclass(frozen=True)
class Link:
    """One link of a report: its URL as written, the Markdown lines (1-based, in the file) that hold it, and
    every place it is written, when known."""

    url: str
    lines: tuple[int, ...] = ()
    places: tuple[Place, ...] = ()


@dataclass(frozen=True)
class LinkResult:
    """The verdict on one URL: its state, the last HTTP status, where it ended and a one-line reason."""

    url: str
    state: str
    detail: str = ""
    status: int | None = None
    final_url: str = ""
    redirects: tuple[str, ...] = ()
    checked_at: float = 0.0
    cached: bool = False
    warning: str = ""  # a working link with something to know (a body shorter than its Content-Length)
    lines: tuple[int, ...] = ()  # the Markdown lines (1-based, in the file) that link to this URL
    places: tuple[Place, ...] = ()  # every place the URL is written (line, column, citation or reference)
    challenge: str = ""  # the bot wall whose challenge answered (graphsite/citations/challenges.py)

    @property
    def line(self) -> int | None:
        """Return the first Markdown line that links to this URL, or None when it is not known."""
        return self.lines[0] if self.lines else None

    def as_dict(self) -> dict[str, Any]:
        # By hand: dataclasses.asdict deep-copies every field, a third of a 2,000-link run's CPU.
        return {"url": self.url, "state": self.state, "detail": self.detail, "status": self.status,
                "final_url": self.final_url, "redirects": list(self.redirects), "checked_at": self.checked_at,
                "cached": self.cached, "warning": self.warning, "lines": list(self.lines), "line": self.line,
                "places": [place.as_dict() for place in self.places], "challenge": self.challenge}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinkResult:
        status = data.get("status")
        return cls(url=str(data["url"]), state=str(data["state"]), detail=str(data.get("detail", "")),
                   status=int(status) if status is not None else None, final_url=str(data.get("final_url", "")),
                   redirects=tuple(str(r) for r in data.get("redirects", ())),
                   checked_at=float(data.get("checked_at", 0.0)), warning=str(data.get("warning", "")),
                   challenge=str(data.get("challenge", "")))


@frozen  # one a run (the classes made per link keep dataclass's compiled __init__)
class LinkReport:
    """Every URL's result, in the order given, and the wall time of the check."""

    results: tuple[LinkResult, ...]
    seconds: float = 0.0
    requests: int = 0
    warnings: tuple[str, ...] = field(default=())
    stopped_by: str = ""  # SIGINT, SIGTERM or SIGHUP when the run was stopped: the results are then partial
    # each result by the URL requested (its key): what a link is matched by, since a result's own URL is masked;
    # never printed (the key may hold a secret)
    by_key: Mapping[str, LinkResult] = field(default_factory=dict, repr=False, compare=False)

    @property
    def partial(self) -> bool:
        return bool(self.stopped_by)

    @property
    def stopped_status(self) -> int:
        """Return the exit status of a stopped run: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM,
        129 for SIGHUP); 0 when no signal stopped it."""
        try:
            return 128 + signal.Signals[self.stopped_by].value
        except KeyError:
            return 0

    def counts(self) -> dict[str, int]:
        """Return how many URLs ended in each state (every state present, zeros included)."""
        counts = dict.fromkeys(STATES, 0)
        for item in self.results:
            counts[item.state] += 1
        return counts

    def failing(self, fail_on: Iterable[str] = ("dead",)) -> list[LinkResult]:
        """Return the results whose state makes the check fail."""
        states = set(fail_on)
        return [item for item in self.results if item.state in states]

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 3), "requests": self.requests, "counts": self.counts(),
                "cached": sum(1 for r in self.results if r.cached), "warnings": list(self.warnings),
                "partial": self.partial, "stopped_by": self.stopped_by or None,
                "links": [r.as_dict() for r in self.results]}


def state_for_status(status: int, *, challenge: str = "") -> str:
    """Return the state a final (non-redirect) HTTP status means once retries are spent; a bot wall's
    challenge is `blocked` whatever its status, a 2xx included."""
    if challenge:
        return "blocked"
    if 200 <= status < 300:
        return "ok"
    if status in BLOCKED_STATUSES:
        return "blocked"
    if status == 503:
        return "unavailable"
    return "dead"


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Return the seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # a header is latin-1: "²" is a digit to isdigit(), not to float()
        return float(value)
    import email.utils  # only a dated Retry-After needs it; `load_config` imports this module for STATES

    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def anchors(html: str) -> frozenset[str]:
    """Return every fragment target of an HTML document: `id=` attributes and `<a name=…>`."""
    from graphsite.citations.pages import anchors as scan

    return scan(html)


def has_fragment(targets: frozenset[str], fragment: str) -> bool:
    """Return whether `fragment` lands somewhere: a target, the top, a text fragment, GitHub's prefixed ids."""
    from graphsite.citations.pages import wanted_names

    names = wanted_names(fragment)
    return not names or not names.isdisjoint(targets)
