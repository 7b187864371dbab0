"""`graphsite list` and `graphsite gc`: deployments as the systems record them (service labels, route
files, DNS records), orphans included; gc tears down what has expired."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from graphsite.config import Config
from graphsite.publisher import route
from graphsite.publisher.access import PRIVATE_LABEL
from graphsite.publisher.clients import Clients
from graphsite.publisher.teardown import Removal, teardown


@dataclass(frozen=True)
class Entry:
    subdomain: str
    fqdn: str
    service: bool
    route: bool
    record: bool
    created: str = ""
    expires: str = ""
    sha256: str = ""
    replicas: str = ""
    private: bool = False

    @property
    def orphan(self) -> str:
        """Say what is missing beside what exists (empty: complete)."""
        missing = [name for name, present in (("service", self.service), ("route", self.route),
                                              ("record", self.record)) if not present]
        return f"orphan: no {', '.join(missing)}" if missing else ""

    def expired(self, now: datetime) -> bool:
        return bool(self.expires) and _parse(self.expires) <= now

    def as_json(self, now: datetime) -> dict:
        return {"subdomain": self.subdomain, "fqdn": self.fqdn, "service": self.service, "route": self.route,
                "record": self.record, "created": self.created or None, "expires": self.expires or None,
                "age": age(self.created, now), "sha256": self.sha256 or None, "replicas": self.replicas or None,
                "orphan": self.orphan or None, "expired": self.expired(now), "private": self.private}


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def age(created: str, now: datetime) -> str:
    """Return how long ago `created` was, as 42s, 5m, 3h or 2d."""
    if not created:
        return ""
    seconds = max(0, int((now - _parse(created)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def deployments(config: Config, clients: Clients) -> list[Entry]:
    """Return every deployment any of the three systems knows of, sorted by subdomain."""
    suffix = "." + config.site.domain
    services = {s.name: s for s in clients.swarm.services()}
    routes = route.route_files(Path(config.deploy.dynamic_dir))
    records = {r.name[: -len(suffix)]: r for r in clients.dns.graphsite_records() if r.name.endswith(suffix)}
    entries = []
    for name in sorted(set(services) | set(routes) | set(records)):
        service = services.get(name)
        labels = service.labels if service else {}
        running = ""
        if service:
            tasks = [t for t in clients.swarm.tasks(name) if t.state == "running" and t.desired == "running"]
            running = f"{len(tasks)}/{service.replicas}"
        entries.append(Entry(
            subdomain=name, fqdn=labels.get("graphsite.fqdn") or f"{name}{suffix}", service=service is not None,
            route=name in routes, record=name in records, created=labels.get("graphsite.created", ""),
            expires=labels.get("graphsite.expires", ""), sha256=labels.get("graphsite.sha256", ""),
            replicas=running, private=labels.get(PRIVATE_LABEL) == "true"))
    return entries


def collect(config: Config, clients: Clients, *, dry_run: bool = False,
            now: datetime | None = None) -> list[tuple[Entry, list[Removal]]]:
    """Tear down every expired deployment (only those: an entry without an expiry never expires)."""
    now = now or datetime.now(UTC)
    expired = [e for e in deployments(config, clients) if e.expired(now)]
    return [(entry, [] if dry_run else teardown(config, entry.subdomain, clients)) for entry in expired]
