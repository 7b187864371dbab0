"""The fake Cloudflare's state: the zone, injected faults and latency, the request log.

Its own module so that the server (`cfserver`) and the answers (`routes`) both depend on it and not on each
other."""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphsite.atomic import write_atomic
from graphsite_lab import faults, processes, records
from graphsite_lab.contract import Contract

REDACTED = "[REDACTED-TOKEN]"
REQUESTS_KEPT = 2000  # the request log keeps the last calls only: a long-lived lab would grow it without end


class FakeCloudflare:
    """The server's state: the zone, injected faults and latency, the request log. Thread-safe."""

    def __init__(self, lab_dir: Path, zone: str, zone_id: str, requests_kept: int = REQUESTS_KEPT) -> None:
        if requests_kept < 0:
            raise ValueError(f"requests_kept: expected 0 or more calls to keep, got {requests_kept}")
        self.lab_dir = lab_dir
        self.state_path = lab_dir / "cloudflare-state.json"
        self.log_path = lab_dir / "cloudflare.log"
        self.token = (lab_dir / "cf-token").read_text(encoding="utf-8").strip()
        self.code = processes.lab_code()  # what this server was started from (`up` compares)
        self.contract = Contract.load()
        self.lock = threading.Lock()
        self.zone = records.Zone(zone, zone_id, self._load())
        self.fault = faults.Fault()
        self.latency_ms = 0
        self.requests: list[dict[str, Any]] = []
        self.requests_kept = requests_kept
        self.answered = 0  # API calls answered since the start: the log's `seq` (the log keeps `requests_kept`)
        self.run = secrets.token_hex(8)  # this start's: after a restart another, and `answered` counts from 0

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

    def set_fault(self, data: dict[str, Any]) -> faults.Fault | str:
        """Replace the fault with the one a control call asks for; return it, or why it cannot be one."""
        with self.lock:
            fault = faults.parse(data, serial=self.fault.serial + 1)
            if isinstance(fault, faults.Fault):
                self.fault = fault
            return fault

    def take_fault(self, request: str, shape: faults.Shape) -> faults.Fault | None:
        """Return the fault to answer `request` (method, path, query and body as text) with, or None.
        With a `match`, only requests holding it fail: tests on a shared lab fault their own calls only; a kind
        that cannot lie about a call of this shape (a page's lie, a delete's) leaves it alone."""
        with self.lock:
            if not faults.fits(self.fault, request, shape):
                return None
            self.fault = replace(self.fault, count=self.fault.count - 1)
            return self.fault

    def give_back(self, fault: faults.Fault) -> None:
        """Count a taken fault as not used (it had nothing to distort), unless another has replaced it since."""
        with self.lock:
            if self.fault.serial == fault.serial:
                self.fault = replace(self.fault, count=self.fault.count + 1)

    def reset(self) -> None:
        with self.lock:
            self.zone = records.Zone(self.zone.name, self.zone.zone_id, ())
            self.fault = faults.Fault(serial=self.fault.serial + 1)
            self.latency_ms = 0
            self.requests.clear()
        self.save()
