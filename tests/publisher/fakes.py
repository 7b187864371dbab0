"""In-memory fakes of the publisher's ports (graphsite/publisher/ports.py), with a failure injectable at every call.

They prove the rules (what gc, teardown, list and the undo decide) fast and for every failure; the lab proves the
real adapters. A fault is one of: an error before the call does anything (`Fault.error`), an answer lost after
the call did its work (`Fault.lost`), or a stall (`Fault.stall`: the call takes `seconds`, then fails like a
timeout). Every effect is recorded in `removed`/`created`, so a test can say "nothing was deleted".
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from graphsite.publisher.cloudflare import DnsError, Record
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.plan import ConfigFile, DnsRecord, ServiceSpec
from graphsite.publisher.ports import DnsPort, EdgePort, Reporter, SwarmPort
from graphsite.publisher.probe import Probe
from graphsite.publisher.swarm import Service, SwarmError, Task

_T = TypeVar("_T")


@dataclass(frozen=True)
class Fault:
    """What an injected call does instead of answering."""

    kind: str = "error"  # error: fail before any effect; lost: the effect happens, the answer is lost; stall
    seconds: float = 0.0

    @classmethod
    def error(cls) -> Fault:
        return cls("error")

    @classmethod
    def lost(cls) -> Fault:
        return cls("lost")

    @classmethod
    def stall(cls, seconds: float) -> Fault:
        return cls("stall", seconds)


@dataclass
class _Faults:
    """Faults waiting for calls, by method name: each is used once, in order."""

    pending: dict[str, list[Fault]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # the calls a fault answered

    def inject(self, method: str, fault: Fault, times: int = 1) -> None:
        self.pending.setdefault(method, []).extend([fault] * times)

    def clear(self) -> None:
        self.pending.clear()

    def run(self, method: str, effect: Callable[[], _T], error: Callable[[str], Exception]) -> _T:
        self.calls.append(method)
        waiting = self.pending.get(method)
        fault = waiting.pop(0) if waiting else None
        if fault is None:
            return effect()
        self.failed.append(method)
        if fault.kind == "stall":
            time.sleep(fault.seconds)
            raise error(f"{method}: no answer within {fault.seconds:g} s (injected stall)")
        if fault.kind == "lost":
            effect()
            raise error(f"{method}: the answer was lost (injected)")
        raise error(f"{method}: refused (injected)")


def _popped(store: dict, key: str, what: str, removed: list[str]) -> bool:
    """Remove `key` from `store`, noting `what` in `removed`; return False when it was not there."""
    if store.pop(key, None) is None:
        return False
    removed.append(what)
    return True


class FakeSwarm:
    """Services and configs in memory; a service converges the moment it is made (its tasks run)."""

    def __init__(self) -> None:
        self.services_by_name: dict[str, Service] = {}
        self.previous: dict[str, Service] = {}
        self.config_labels: dict[str, dict[str, str]] = {}
        self.faults = _Faults()
        self.removed: list[str] = []
        self.created: list[str] = []
        self._ids = itertools.count(1)

    def _run(self, method: str, effect: Callable[[], _T]) -> _T:
        return self.faults.run(method, effect, lambda why: SwarmError(f"Docker: {why}"))

    # --- what tests arrange -------------------------------------------------------------------------------

    def add_service(self, name: str, labels: dict[str, str], configs: tuple[str, ...] = ()) -> None:
        self.services_by_name[name] = Service(id=f"svc{next(self._ids)}", name=name, labels=dict(labels),
                                              replicas=1, configs=configs, version=1, image="caddy:2-alpine")

    def add_config(self, name: str, labels: dict[str, str]) -> None:
        self.config_labels[name] = dict(labels)

    # --- SwarmPort ----------------------------------------------------------------------------------------

    def node_id(self) -> str:
        return self._run("node_id", lambda: "node1")

    def service(self, name: str) -> Service | None:
        return self._run("service", lambda: self.services_by_name.get(name))

    def services(self) -> list[Service]:
        return self._run("services", lambda: [s for s in self.services_by_name.values()
                                              if "graphsite.subdomain" in s.labels])

    def tasks(self, name: str) -> list[Task]:
        def running() -> list[Task]:
            service = self.services_by_name.get(name)
            return [Task(id=f"t-{name}", state="running", desired="running", error="", message="", node="node1",
                         spec_configs=service.configs, image=service.image)] if service else []

        return self._run("tasks", running)

    def node_names(self) -> dict[str, str]:
        return self._run("node_names", lambda: {"node1": "fake-node"})

    def configs(self, subdomain: str | None = None) -> list[str]:
        return sorted(self.config_stamps(subdomain))

    def config_stamps(self, subdomain: str | None = None) -> dict[str, Stamp]:
        def stamps() -> dict[str, Stamp]:
            found = {}
            for name, labels in self.config_labels.items():
                stamp = Stamp.from_labels(labels)
                if stamp is not None and subdomain in (None, stamp.name):
                    found[name] = stamp
            return found

        return self._run("config_stamps", stamps)

    def labelled_configs(self, subdomain: str | None = None) -> dict[str, dict[str, str]]:
        return self._run("labelled_configs", lambda: {
            name: dict(labels) for name, labels in self.config_labels.items()
            if labels.get("graphsite.subdomain") and subdomain in (None, labels["graphsite.subdomain"])})

    def ensure_config(self, stamp: Stamp, config: ConfigFile) -> bool:
        def create() -> bool:
            if config.name in self.config_labels:
                return False
            self.config_labels[config.name] = {**stamp.labels(), "graphsite.sha256": config.sha256}
            self.created.append(f"config {config.name}")
            return True

        return self._run("ensure_config", create)

    def relabel_config(self, name: str, labels: dict[str, str]) -> bool:
        def relabel() -> bool:
            if name not in self.config_labels:
                return False
            self.config_labels[name] = dict(labels)
            return True

        return self._run("relabel_config", relabel)

    def remove_config(self, name: str) -> bool:
        def remove() -> bool:
            users = [s.name for s in self.services_by_name.values() if name in s.configs]
            if users:  # as Docker refuses: a config a service uses cannot be removed
                raise SwarmError(f"Docker: remove config {name}: in use by {', '.join(users)}")
            return _popped(self.config_labels, name, f"config {name}", self.removed)

        return self._run("remove_config", remove)

    def ensure_service(self, spec: ServiceSpec) -> str:
        def apply() -> str:
            current = self.services_by_name.get(spec.name)
            wanted = Service(id=current.id if current else f"svc{next(self._ids)}", name=spec.name,
                             labels=dict(spec.labels), replicas=spec.replicas,
                             configs=tuple(sorted(c.name for c in spec.configs)),
                             version=(current.version + 1) if current else 1, image=spec.image)
            if current == wanted or (current and (current.labels, current.configs) == (wanted.labels,
                                                                                         wanted.configs)):
                return "unchanged"
            if current:
                self.previous[spec.name] = current
            self.services_by_name[spec.name] = wanted
            self.created.append(f"service {spec.name}")
            return "updated" if current else "created"

        return self._run("ensure_service", apply)

    def restore_previous(self, spec: ServiceSpec) -> bool:
        def restore() -> bool:
            previous = self.previous.pop(spec.name, None)
            if previous is None:
                return False
            self.services_by_name[spec.name] = previous
            return True

        return self._run("restore_previous", restore)

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]:
        return self._run("wait_converged", lambda: self.tasks(spec.name))

    def remove_service(self, name: str) -> bool:
        return self._run("remove_service", lambda: _popped(self.services_by_name, name, f"service {name}",
                                                           self.removed))

    def close(self) -> None:
        return None


class FakeDns:
    """One zone's records in memory, answered as the real adapter answers once it has judged Cloudflare: a full
    list, or DnsError."""

    def __init__(self) -> None:
        self.zone: dict[str, Record] = {}
        self.faults = _Faults()
        self.removed: list[str] = []
        self.created: list[str] = []
        self._ids = itertools.count(1)

    def _run(self, method: str, effect: Callable[[], _T]) -> _T:
        return self.faults.run(method, effect, lambda why: DnsError(f"Cloudflare: {why}"))

    def add(self, name: str, comment: str, content: str = "127.0.0.1", type_: str = "A") -> Record:
        record = Record(name=name, type=type_, content=content, ttl=1, proxied=False, comment=comment,
                        id=f"rec{next(self._ids)}")
        self.zone[record.id] = record
        return record

    # --- DnsPort ------------------------------------------------------------------------------------------

    def limit(self, seconds: float | None) -> None:
        return None

    def records(self, name: str) -> list[Record]:
        return self._run("records", lambda: [r for r in self.zone.values() if r.name == name])

    def a_records(self) -> list[Record]:
        return self._run("a_records", lambda: [r for r in self.zone.values() if r.type == "A"])

    def create(self, record: DnsRecord) -> Record:
        def make() -> Record:
            made = self.add(record.name, record.comment, record.content)
            self.created.append(f"record {made.id}")
            return made

        return self._run("create", make)

    def restamp(self, record: Record, comment: str) -> Record:
        def rewrite() -> Record:
            if record.id not in self.zone:
                raise DnsError(f"Cloudflare: update the comment of record {record.id}: HTTP 404", status=404)
            self.zone[record.id] = replace(self.zone[record.id], comment=comment)
            return self.zone[record.id]

        return self._run("restamp", rewrite)

    def delete(self, record_id: str) -> bool:
        return self._run("delete", lambda: _popped(self.zone, record_id, f"record {record_id}", self.removed))

    def close(self) -> None:
        return None


class FakeEdge:
    """The edge: serves a name's page while its route file is in one of `routes` and its service runs in `swarm`;
    answers 404 otherwise (Traefik's answer for a name it does not route). A fault answers with a transport error
    (the edge could not be asked)."""

    def __init__(self, swarm: FakeSwarm, routes: list[Path], page: bytes) -> None:
        self.swarm, self.routes, self.page = swarm, routes, page
        self.faults = _Faults()

    def fetch(self, scheme: str, fqdn: str, address: str = "", *, ca_bundle: str = "", timeout: float = 5.0,
              insecure: bool = False) -> Probe:
        url, name = f"{scheme}://{fqdn}/ via {address}", fqdn.split(".", 1)[0]

        def answer() -> Probe:
            routed = any((directory / f"{name}.yml").is_file() for directory in self.routes)
            if routed and name in self.swarm.services_by_name:
                return Probe(url=url, status=200, body=self.page)
            return Probe(url=url, status=404, body=b"404 page not found\n")

        try:
            return self.faults.run("fetch", answer, lambda why: OSError(why))
        except OSError as exc:
            return Probe(url=url, error=f"ConnectError: {exc}")


class Recorder:
    """A reporter that keeps what a use case said, in order: `lines` (a step is "LABEL done" or "LABEL failed")."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        try:
            yield
        except BaseException:
            self.lines.append(f"{label} failed")
            raise
        self.lines.append(f"{label} done")

    def info(self, message: str) -> None:
        self.lines.append(message.strip())

    def warn(self, message: str) -> None:
        self.lines.append(f"warning: {message}")


def _conforms(swarm: FakeSwarm, dns: FakeDns, edge: FakeEdge,
              recorder: Recorder) -> tuple[SwarmPort, DnsPort, EdgePort, Reporter]:
    """The fakes are the ports (checked by mypy on tests that type them, and by the calls the use cases make)."""
    return swarm, dns, edge, recorder
