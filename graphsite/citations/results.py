"""What a live link check concludes: one state per URL, and the pure rules that decide it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from typing import Any

from graphsite.codes import LINK_STATES as STATES

# The site refuses robots (or us): not proof that the link is dead.
BLOCKED_STATUSES = frozenset({401, 403, 406, 429, 451, 999})
# Worth asking again: the server is busy or broken for now.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


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

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["redirects"] = list(self.redirects)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinkResult:
        return cls(url=str(data["url"]), state=str(data["state"]), detail=str(data.get("detail", "")),
                   status=data.get("status"), final_url=str(data.get("final_url", "")),
                   redirects=tuple(data.get("redirects", ())), checked_at=float(data.get("checked_at", 0.0)))


@dataclass(frozen=True)
class LinkReport:
    """Every URL's result, in the order given, and the wall time of the check."""

    results: tuple[LinkResult, ...]
    seconds: float = 0.0
    requests: int = 0
    warnings: tuple[str, ...] = field(default=())

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
                "links": [r.as_dict() for r in self.results]}


def state_for_status(status: int) -> str:
    """Return the state a final (non-redirect) HTTP status means once retries are spent."""
    if 200 <= status < 300:
        return "ok"
    if status in BLOCKED_STATUSES:
        return "blocked"
    return "dead"


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Return the seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    import email.utils  # only a dated Retry-After needs it; `load_config` imports this module for STATES

    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.names: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value and (key == "id" or (key == "name" and tag == "a")):
                self.names.add(value)


def anchors(html: str) -> frozenset[str]:
    """Return every fragment target of an HTML document: `id=` attributes and `<a name=…>`."""
    parser = _Anchors()
    parser.feed(html)
    parser.close()
    return frozenset(parser.names)


def has_fragment(targets: frozenset[str], fragment: str) -> bool:
    """Return whether `fragment` lands somewhere: a target, the top, a text fragment, GitHub's prefixed ids."""
    from urllib.parse import unquote

    name = unquote(fragment)
    if name in ("", "top") or name.startswith(":~:"):
        return True
    return name in targets or fragment in targets or f"user-content-{name}" in targets
