"""What tests (and people) use to drive a running lab: `attach()` returns a `Lab` handle, and `LabCloudflare`
speaks the fake Cloudflare's control API (faults, latency, reset, request log)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from graphsite.config import Config, load_config
from graphsite_lab.faults import Kind
from graphsite_lab.instance import LabInstance


class LabCloudflare:
    """Client of the fake Cloudflare's `/__lab/` control API."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = httpx.request(method, f"{self.base}/__lab/{path}", json=body, timeout=10)
        answer.raise_for_status()
        return answer.json()

    def fail_next(self, count: int, status: int = 500, retry_after: int = 1, match: str = "",
                  after: bool = False) -> dict[str, Any]:
        """Make the next `count` API calls fail with `status` (429 carries Retry-After); with `match`, only calls
        whose method, path, query or body hold that text (a record's name), so others on a shared lab are spared;
        with `after`, each call is carried out first and only its answer fails (a lost response)."""
        return self._call("POST", "faults", {"fail_next": count, "status": status, "retry_after": retry_after,
                                             "match": match, "after": after})

    def lie_next(self, count: int, kind: Kind, match: str = "", after: bool = False,
                 variant: str = "") -> dict[str, Any]:
        """Make the next `count` API calls that hold `match` and fit `kind` answer with that lie instead (the kinds
        and their variants are in docs/lab.md); with `after`, each call is carried out first. Replaces any fault
        set before, as fail_next does; `fail_next(0)` clears it."""
        return self._call("POST", "faults", {"kind": str(kind), "fail_next": count, "match": match, "after": after,
                                             "variant": variant})

    def fault(self) -> dict[str, Any]:
        """Return the fault set now: its kind, variant, match, after and `fail_next`, the calls it has left."""
        return self._call("GET", "faults")

    def latency(self, ms: int) -> dict[str, Any]:
        """Delay every API call by `ms` milliseconds (0 to stop)."""
        return self._call("POST", "latency", {"ms": ms})

    def reset(self) -> None:
        """Forget every record, fault, latency and logged request."""
        self._call("POST", "reset")

    def requests(self) -> list[dict[str, Any]]:
        """Return the API calls received so far: method, path, query, body, status, fault (never the token)."""
        return self._call("GET", "requests")

    def answered(self) -> int:
        """Return how many API calls it has answered since it started, every one (`requests` keeps the last
        2,000 only: its length stops growing there), a reset included."""
        return int(self.health()["answered"])

    def records(self) -> list[dict[str, Any]]:
        """Return every DNS record of the zone, as stored."""
        return self._call("GET", "records")

    def health(self) -> dict[str, Any]:
        return self._call("GET", "health")


@dataclass(frozen=True)
class Lab:
    """A running lab, as tests see it."""

    instance: LabInstance
    config_path: Path
    config: Config
    cloudflare: LabCloudflare
    https_port: int
    http_port: int
    cf_port: int
    ca_path: Path
    domain: str
    zone_id: str

    @property
    def api_base_url(self) -> str:
        return self.config.dns.api_base_url

    def token(self) -> str:
        """Return the lab's Cloudflare token (tests only; it is never printed)."""
        return self.config.token() or ""


def attach(instance: LabInstance | None = None) -> Lab | str:
    """Return a handle on the running lab, or a sentence saying which part does not answer."""
    lab = instance or LabInstance.from_env()
    config_path = lab.path("graphsite.toml")
    if not config_path.is_file():
        return f"{config_path} is missing"
    cloudflare = LabCloudflare(lab.cf_base)
    try:
        cloudflare.health()
    except (httpx.HTTPError, ValueError):
        return f"the fake Cloudflare does not answer on {lab.cf_base}"
    if not lab.path("ca.pem").is_file():
        return f"{lab.path('ca.pem')} is missing"
    import socket

    try:
        socket.create_connection(("127.0.0.1", lab.https_port), timeout=2).close()
    except OSError:
        return f"the edge does not answer on 127.0.0.1:{lab.https_port}"
    config = load_config(config_path, environ={})
    return Lab(lab, config_path, config, cloudflare, lab.https_port, lab.http_port, lab.cf_port,
               lab.path("ca.pem"), lab.domain, lab.zone_id)
