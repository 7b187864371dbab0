"""The fake Cloudflare's state: the zone, injected faults and latency, the request log.

Its own module so that the server (`cfserver`) and the answers (`routes`) both depend on it and not on each
other."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from graphsite.atomic import write_atomic
from graphsite.lab import processes, records
from graphsite.lab.contract import Contract

REDACTED = "[REDACTED-TOKEN]"


class FakeCloudflare:
    """The server's state: the zone, injected faults and latency, the request log. Thread-safe."""

    def __init__(self, lab_dir: Path, zone: str, zone_id: str) -> None:
        self.lab_dir = lab_dir
        self.state_path = lab_dir / "cloudflare-state.json"
        self.log_path = lab_dir / "cloudflare.log"
        self.token = (lab_dir / "cf-token").read_text(encoding="utf-8").strip()
        self.code = processes.lab_code()  # what this server was started from (`up` compares)
        self.contract = Contract.load()
        self.lock = threading.Lock()
        self.zone = records.Zone(zone, zone_id, self._load())
        self.faults: dict[str, Any] = {"fail_next": 0, "status": 500, "retry_after": 1, "match": "", "after": False}
        self.latency_ms = 0
        self.requests: list[dict[str, Any]] = []
        self.answered = 0  # API calls answered since the start: the log's `seq` (the log keeps the last 2,000)

    def _load(self) -> tuple[dict[str, Any], ...]:
        try:
            return tuple(json.loads(self.state_path.read_text(encoding="utf-8"))["records"])
        except FileNotFoundError:
            return ()

    def save(self) -> None:
        write_atomic(self.state_path, json.dumps({"zone": self.zone.name, "zone_id": self.zone.zone_id,
                                                  "records": list(self.zone.records)}, indent=1))

    def log(self, line: str) -> None:
        with self.lock, self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {self.redact(line)}\n")

    def redact(self, text: str) -> str:
        return text.replace(self.token, REDACTED) if self.token else text

    def take_fault(self, request: str) -> dict[str, Any] | None:
        """Return the fault to answer `request` (method, path, query and body as text) with, or None.
        With a `match`, only requests holding it fail: tests on a shared lab fault their own calls only."""
        with self.lock:
            if self.faults["fail_next"] <= 0 or self.faults["match"] not in request:
                return None
            self.faults["fail_next"] -= 1
            return dict(self.faults)

    def reset(self) -> None:
        with self.lock:
            self.zone = records.Zone(self.zone.name, self.zone.zone_id, ())
            self.faults.update(fail_next=0, match="", after=False)
            self.latency_ms = 0
            self.requests.clear()
        self.save()
