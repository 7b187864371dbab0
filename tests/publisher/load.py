"""Requests sent without pause through the lab's edge while a deploy or a rollback switches the page: every
failure counted, never retried (graphsite's own probe, `publisher/probe.py`, as verify asks), and the sha256 of
every page served, in order. A test that uses it counts failed requests under load: it holds the lab alone
(tests/schedule.py reads `hammer` in its source)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import threading
from collections.abc import Iterator

from graphsite.config import Config


@dataclasses.dataclass
class Load:
    seen: list[str] = dataclasses.field(default_factory=list)  # the sha256 of each page served, in order
    failures: list[str] = dataclasses.field(default_factory=list)  # why each failed request failed

    def __str__(self) -> str:
        return f"{len(self.failures)} failed of {len(self.failures) + len(self.seen)}: {self.failures[:3]}"


@contextlib.contextmanager
def hammer(config: Config, fqdn: str, *, after: float = 1.0) -> Iterator[Load]:
    """Request https://FQDN/ through verify.origin_address, one request after another, in a thread, while the
    block runs and `after` seconds more (requests after the switch)."""
    from graphsite.publisher import probe

    load, stop = Load(), threading.Event()

    def send() -> None:
        while not stop.is_set():
            result = probe.fetch("https", fqdn, config.verify.origin_address, ca_bundle=config.verify.ca_bundle)
            if result.status != 200:
                load.failures.append(result.error or f"HTTP {result.status}")
            else:
                load.seen.append(hashlib.sha256(result.body).hexdigest())

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    try:
        yield load
        stop.wait(after)
    finally:
        stop.set()
        thread.join(timeout=30)
