"""The link cache: `.graphsite/links.json`, so that a rebuild re-checks only what is stale.

A corrupt or unreadable cache is a warning and is ignored; writes are atomic (a temporary file, then rename).
Timeouts and skipped URLs are never cached: they say nothing about the link.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from graphsite.citations.results import LinkResult

VERSION = 1
FILENAME = "links.json"
CACHEABLE = frozenset({"ok", "redirected", "blocked", "dead"})
CLOCK_SKEW = 60.0  # seconds a result may seem to come from the future and still count


@dataclass
class LinkCache:
    """Results by URL, loaded from and saved to one JSON file."""

    path: Path
    max_age: float
    entries: dict[str, LinkResult] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, directory: str | Path, max_age: float) -> LinkCache:
        """Return the cache in `directory`; a missing file is empty, a broken one a warning."""
        cache = cls(Path(directory) / FILENAME, max_age)
        try:
            data = json.loads(cache.path.read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
            cache.entries = {url: LinkResult.from_dict(item) for url, item in data["results"].items()}
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as exc:
            cache.warnings.append(f"{cache.path}: cannot read the link cache ({exc}); checking every link")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            cache.warnings.append(f"{cache.path}: ignoring a corrupt link cache ({exc}); it will be rewritten")
            cache.entries = {}
        return cache

    def fresh(self, url: str, now: float | None = None) -> LinkResult | None:
        """Return the cached result of `url` if it is younger than max_age, else None. A time in the future
        (a clock set back, a hand-edited file) or no time at all is stale, never fresh for ever."""
        entry = self.entries.get(url)
        now = time.time() if now is None else now
        if entry is None or entry.state not in CACHEABLE:
            return None
        if not -CLOCK_SKEW <= now - entry.checked_at <= self.max_age:  # also False for NaN
            return None
        return replace(entry, cached=True)

    def update(self, results: list[LinkResult]) -> None:
        for item in results:
            if item.state in CACHEABLE and not item.cached:
                self.entries[item.url] = item

    def save(self) -> None:
        """Write the cache atomically; a failure becomes a warning, never an exception."""
        payload = {"version": VERSION,
                   "results": {url: {**r.as_dict(), "cached": False} for url, r in sorted(self.entries.items())}}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".links.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    json.dump(payload, stream, indent=1, sort_keys=True)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            self.warnings.append(f"{self.path}: cannot write the link cache ({exc.strerror or exc})")
