"""The link cache: `links.json` in the user's cache directory, so that a rerun re-checks only what it must.

Honest by construction: only successes (ok, redirected) are served, and only while younger than
links.max_age; a failure is kept (for --offline) but always checked again, so a site that is back is seen back.
Timeouts and verdicts reached without a request are never stored: they say nothing about the link. Runs at the
same time do not lose each other's verdicts: a save takes a lock, reads the file again, merges (the newer
verdict on a URL wins) and replaces the file atomically. A corrupt or unreadable cache is a warning, never an
error.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphsite.atomic import write_atomic
from graphsite.citations.results import LinkResult

VERSION = 1
FILENAME = "links.json"
SERVED = frozenset({"ok", "redirected"})  # verdicts a run may take from the cache instead of asking
STORED = frozenset({"ok", "redirected", "blocked", "unavailable", "dead"})  # what --offline can still show
CLOCK_SKEW = 60.0  # seconds a result may seem to come from the future and still count
LOCK_WAIT = 10.0  # seconds a save waits for another run's save before giving up with a warning
# A random value every save writes at the head of the file: what tells one save from another. The file's inode, size
# and modification time do not (ext4 hands successive atomic saves the same two inodes, often of one size, and a
# coarse clock gives them one time), and a save that took another run's file for the one it read would write its
# stale view back: that run's verdicts lost, an older ok over a newer dead.
GENERATION_BYTES = 16
_GENERATION_AT = b'{"version":%d,"generation":"' % VERSION
KEEP_FOR = 30 * 86400.0  # seconds an entry stays in the file (at least links.max_age): the file does not grow for ever


class LinkCache:
    """Verdicts by URL, loaded from and saved to one JSON file. Entries stay the file's dicts until one is
    served: a cache of thousands of URLs costs a JSON parse, not thousands of objects. A plain class: made once a
    run, and as a dataclass its class cost 2.5 M instructions to make (its methods compiled), every run."""

    def __init__(self, path: Path, max_age: float) -> None:
        self.path, self.max_age = path, max_age
        self.entries: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        # the generation of the file `entries` were read from (None: not read, not whole, or a file without one): a
        # save that finds the file still holds it merges into them, instead of parsing the file again (a month of
        # URLs is a megabyte: 15-20 ms of CPU)
        self.read_from: str | None = None

    @classmethod
    def load(cls, directory: str | Path, max_age: float, *, read: bool = True) -> LinkCache:
        """Return the cache in `directory` (empty without `read`); a missing file is empty, a broken one a
        warning."""
        cache = cls(Path(directory) / FILENAME, max_age)
        if read:
            cache.entries, cache.read_from, problem, _ = _read(cache.path)
            if problem:
                cache.warnings.append(problem)
        return cache

    def fresh(self, url: str, now: float | None = None, *, offline: bool = False) -> LinkResult | None:
        """Return the cached success on `url` if it is younger than max_age (any stored verdict, however old,
        when `offline`), else None. A time in the future (a clock set back, a hand-edited file) or no time at
        all is stale, never fresh for ever; an entry that does not read as a verdict is no verdict."""
        raw = self.entries.get(url)
        if raw is None or raw.get("state") not in (STORED if offline else SERVED):
            return None
        try:
            entry = LinkResult.from_dict(raw)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        now = time.time() if now is None else now
        age = now - entry.checked_at
        if not offline and not -CLOCK_SKEW <= age <= self.max_age:  # also False for NaN
            return None
        note = f"cached {_age(age)} ago; --offline" if offline and entry.state not in SERVED else ""
        return replace(entry, cached=True, detail=f"{entry.detail} ({note})" if note else entry.detail)

    def save(self, results: list[LinkResult]) -> None:
        """Merge this run's verdicts into the file under a lock (the newer verdict on a URL wins; entries older
        than KEEP_FOR go) and replace it atomically; a failure becomes a warning, never an exception."""
        mine = {r.url: {**r.as_dict(), "cached": False, "lines": [], "line": None, "places": []}
                for r in results if r.state in STORED and not r.cached}
        if not mine:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _locked(self.path.with_name(FILENAME + ".lock")):
                unchanged = self.read_from is not None and _generation(self.path) == self.read_from
                if unchanged:
                    entries = dict(self.entries)
                else:
                    entries, _, problem, unreadable = _read(self.path)
                    if unreadable:  # what it holds is not known: replacing it would lose every verdict in it
                        self.warnings.append(f"{problem.removesuffix('; checking every link')}; this run's "
                                             "verdicts were not saved, the file is left as it is")
                        return
                for url, result in mine.items():
                    if not _when(entries.get(url)) > result["checked_at"]:
                        entries[url] = result
                oldest = time.time() - max(KEEP_FOR, self.max_age)
                entries = {url: e for url, e in entries.items() if _when(e) >= oldest}
                generation = os.urandom(GENERATION_BYTES).hex()
                payload = {"version": VERSION, "generation": generation, "results": dict(sorted(entries.items()))}
                write_atomic(self.path, json.dumps(payload, separators=(",", ":")))
                self.entries, self.read_from = entries, generation
        except TimeoutError:
            self.warnings.append(f"{self.path}: another run held the cache's lock for {LOCK_WAIT:g} s; this run's "
                                 "verdicts were not saved")
        except OSError as exc:
            self.warnings.append(f"{self.path}: cannot write the link cache ({exc.strerror or exc})")


def _generation(path: Path) -> str | None:
    """Return the generation the file holds, read from its first bytes (every save writes it first), None when it
    cannot be read or holds none."""
    try:
        with path.open("rb") as file:
            head = file.read(len(_GENERATION_AT) + 2 * GENERATION_BYTES + 1)
    except OSError:
        return None
    generation = head[len(_GENERATION_AT):-1].decode("ascii", "replace")
    if not head.startswith(_GENERATION_AT) or head[-1:] != b'"' or not _is_generation(generation):
        return None
    return generation


def _is_generation(value: object) -> bool:
    return isinstance(value, str) and len(value) == 2 * GENERATION_BYTES and \
        all(c in "0123456789abcdef" for c in value)


def _when(entry: dict[str, Any] | None) -> float:
    """Return when an entry was checked (-inf when it has no readable time: any verdict replaces it)."""
    try:
        value = float(entry["checked_at"]) if entry is not None else float("-inf")
    except (KeyError, TypeError, ValueError):
        return float("-inf")
    return value if value == value else float("-inf")  # NaN: unreadable


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], str | None, str, bool]:
    """Return the file's entries, its generation (None: none, or not read whole), a warning ("" if none) and
    whether the file could not be read at all (then what it holds is not known; a corrupt one is known useless)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        results = data["results"]
        if not isinstance(results, dict):
            raise ValueError("results is not an object")
        generation = data.get("generation")
        return {url: item for url, item in results.items() if isinstance(item, dict)}, \
            generation if _is_generation(generation) else None, "", False
    except FileNotFoundError:
        return {}, None, "", False
    except OSError as exc:
        return {}, None, f"{path}: cannot read the link cache ({exc}); checking every link", True
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return {}, None, f"{path}: ignoring a corrupt link cache ({exc}); it will be rewritten", False


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing), waiting up to LOCK_WAIT; raise TimeoutError."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        give_up = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    raise TimeoutError from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(0, seconds) / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"
