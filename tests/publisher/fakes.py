"""In-memory fakes of the publisher's ports (graphsite/publisher/ports.py), with a failure injectable at every call.

They prove the rules (what deploy, verify, gc, teardown, list and the undo decide) fast and for every failure; the
lab proves the real adapters. The route store and the bind store keep their files in dictionaries and judge them
with route.py's and bind.py's own pure functions (a stamp, a temporary's owner). A fault is one of: an error
before the call does anything (`Fault.error`), an answer lost after the call did its work (`Fault.lost`), or a
stall (`Fault.stall`: the call takes `seconds`, then fails like a timeout). Every effect is recorded in
`removed`/`created`, so a test can say "nothing was deleted".
"""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError, UnknownVersions
from graphsite.publisher import bind, caddy, files, route
from graphsite.publisher.clients import Clients
from graphsite.publisher.cloudflare import DnsError, Record
from graphsite.publisher.deployment import MARKER, Leftover, PageDirectory, Stamp
from graphsite.publisher.dynamic import parse_text
from graphsite.publisher.plan import ConfigFile, DnsRecord, ServiceSpec
from graphsite.publisher.ports import BindStore, DnsPort, EdgePort, Reporter, RouteStore, SwarmPort
from graphsite.publisher.probe import Probe
from graphsite.publisher.stores import RouteFiles
from graphsite.publisher.swarm import (
    DaemonFacts,
    Expected,
    NetworkFacts,
    Service,
    ServiceOutcome,
    SwarmError,
    Task,
    config_labels,
    runs,
    service_verdict,
    spec_digest,
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class Fault:
    """What an injected call does instead of answering."""

    kind: str = "error"  # error: fail before any effect; lost: the effect happens, the answer is lost; stall
    seconds: float = 0.0
    hint: str | None = None  # an error's next step, as a real adapter's failure says one

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
        refused = error(f"{method}: refused (injected)")
        if fault.hint is not None and isinstance(refused, GraphsiteError):
            refused = type(refused)(refused.detail, hint=fault.hint)
        raise refused


_K = TypeVar("_K")


def _popped(store: dict[_K, Any], key: _K, what: str, removed: list[str]) -> bool:
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
        self.overlay = "dokploy-network"  # the network its tasks are attached to
        self.config_labels: dict[str, dict[str, str]] = {}
        self.config_data: dict[str, tuple[str, bytes]] = {}  # name: (target, data) of the configs it made
        self.mounts: dict[str, dict[str, str]] = {}  # service: {target: config name}, as its spec mounts them
        self.previous_mounts: dict[str, dict[str, str]] = {}
        self.faults = _Faults()
        self.removed: list[str] = []
        self.created: list[str] = []
        self.read_configs: list[str] = []  # the name of every config whose data was read, in order
        self._ids = itertools.count(1)

    def _run(self, method: str, effect: Callable[[], _T]) -> _T:
        return self.faults.run(method, effect, lambda why: SwarmError(f"Docker: {why}"))

    # --- what tests arrange -------------------------------------------------------------------------------

    def add_service(self, name: str, labels: dict[str, str], configs: tuple[str, ...] = ()) -> None:
        self.services_by_name[name] = _as_read(Service(id=f"svc{next(self._ids)}", name=name, labels=dict(labels),
                                                       replicas=1, configs=configs, version=1,
                                                       image="caddy:2-alpine"))

    def bookkeeping(self, name: str) -> None:
        """Write service `name` again with its spec as it is, as Swarm's updater does by itself (a rollout marked
        started, then completed one monitor period after its last task): its version moves, nothing else."""
        service = self.services_by_name[name]
        self.services_by_name[name] = replace(service, version=service.version + 1)

    def add_config(self, name: str, labels: dict[str, str]) -> None:
        self.config_labels[name] = dict(labels)

    # --- SwarmPort ----------------------------------------------------------------------------------------

    def node_id(self) -> str:
        return self._run("node_id", lambda: "node1")

    def service(self, name: str) -> Service | None:
        return self._run("service", lambda: self._read(name))

    def _read(self, name: str) -> Service | None:
        service = self.services_by_name.get(name)
        return None if service is None else _as_read(service)

    def services(self) -> list[Service]:
        return self._run("services", lambda: [_as_read(s) for s in self.services_by_name.values()
                                              if "graphsite.subdomain" in s.labels])

    def tasks(self, name: str) -> list[Task]:
        def running() -> list[Task]:
            service = self.services_by_name.get(name)
            return [Task(id=f"t-{name}", state="running", desired="running", error="", message="", node="node1",
                         spec_configs=service.configs, image=service.image,
                         addresses=((self.overlay, "10.0.1.2"),))] if service else []

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

    def configs_named(self, names: Collection[str]) -> frozenset[str]:
        return self._run("configs_named", lambda: frozenset(n for n in names if n in self.config_labels))

    def ensure_config(self, stamp: Stamp, config: ConfigFile) -> bool:
        def create() -> bool:
            if config.name in self.config_labels:
                return False
            self.config_labels[config.name] = config_labels(stamp, config)
            self.config_data[config.name] = (config.target, config.data)
            self.created.append(f"config {config.name}")
            return True

        return self._run("ensure_config", create)

    def read_config(self, name: str) -> bytes | None:
        def read() -> bytes | None:
            self.read_configs.append(name)
            if name not in self.config_labels:
                return None
            return self.config_data.get(name, ("", b""))[1]

        return self._run("read_config", read)

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

    def ensure_service(self, spec: ServiceSpec, expected: Expected) -> ServiceOutcome:
        def apply() -> ServiceOutcome:
            current = self._read(spec.name)
            verdict = service_verdict(current, spec, expected)  # the adapter's own rule
            if verdict not in (ServiceOutcome.CREATED, ServiceOutcome.UPDATED):
                return verdict
            # Docker refuses an update at a version the service has moved from; the adapter then looks again and
            # sends it at the new version only when the spec is still the one read (Swarm's own bookkeeping)
            if current is not None and current.version != expected.version \
                    and current.spec_digest != expected.spec_digest:
                return ServiceOutcome.CHANGED
            missing = sorted({c.name for c in spec.configs} - set(self.config_labels))
            if missing:  # as the adapter refuses (and Swarm would): a spec that mounts a config that is not there
                raise DeployError(f"Docker: config {missing[0]} is missing")
            if current:
                self.previous[spec.name] = current
                self.previous_mounts[spec.name] = self.mounts.get(spec.name, {})
            self.services_by_name[spec.name] = _as_read(Service(
                id=current.id if current else f"svc{next(self._ids)}", name=spec.name, labels=dict(spec.labels),
                replicas=spec.replicas, configs=tuple(sorted(c.name for c in spec.configs)),
                version=(current.version + 1) if current else 1, image=spec.image))
            self.mounts[spec.name] = {c.target: c.name for c in spec.configs}
            self.created.append(f"service {spec.name}")
            return verdict

        return self._run("ensure_service", apply)

    def restore_previous(self, spec: ServiceSpec) -> bool:
        def restore() -> bool:
            current, previous = self.services_by_name.get(spec.name), self.previous.get(spec.name)
            if current is None or previous is None or not runs(current, spec):
                return False  # as the adapter: no service, no previous spec, or not the spec this run applied
            del self.previous[spec.name]
            self.services_by_name[spec.name] = replace(previous, version=current.version + 1)
            self.mounts[spec.name] = self.previous_mounts.pop(spec.name, {})
            return True

        return self._run("restore_previous", restore)

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]:
        return self._run("wait_converged", lambda: self.tasks(spec.name))

    def remove_service(self, name: str) -> bool:
        def remove() -> bool:
            self.previous.pop(name, None)  # Swarm forgets a removed service's previous spec with it
            self.previous_mounts.pop(name, None)
            return _popped(self.services_by_name, name, f"service {name}", self.removed)

        return self._run("remove_service", remove)

    def daemon(self) -> DaemonFacts:
        return self._run("daemon", lambda: DaemonFacts(version="27.0", api_version="1.46", swarm_state="active",
                                                       manager=True, node_id="node1"))

    def network(self, name: str) -> NetworkFacts:
        return self._run("network", lambda: NetworkFacts(name=name, found=True, driver="overlay", scope="swarm",
                                                         attachable=True))

    def close(self) -> None:
        return None


def _as_read(service: Service) -> Service:
    """Return `service` as the adapter reads it: with the digest of its spec (what a test arranged by hand, with
    `replace`, is judged by what it holds, not by a digest it copied)."""
    spec = {"Name": service.name, "Labels": service.labels, "Replicas": service.replicas,
            "Configs": service.configs, "Image": service.image}
    return replace(service, spec_digest=spec_digest(spec))


class SignalledSwarm(FakeSwarm):
    """A Swarm whose convergence, while `armed`, is cut short by a real SIGTERM to this process (as `kill` would
    send)."""

    def __init__(self, *, armed: bool = True) -> None:
        super().__init__()
        self.armed = armed

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]:
        if self.armed:
            signal.raise_signal(signal.SIGTERM)
        return super().wait_converged(spec, timeout, failures=failures)


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


class FakeRoutes:
    """Traefik's dynamic directories in memory: route files by path (their text), and symbolic links by path
    (their target). A directory exists once a test names it (`FakeRoutes(directory)`) or a route is written."""

    def __init__(self, *directories: Path) -> None:
        self.directories: set[Path] = set(directories)
        self.files: dict[Path, str] = {}
        self.links: dict[Path, str] = {}
        self.faults = _Faults()
        self.removed: list[str] = []
        self.created: list[str] = []

    def _run(self, method: str, effect: Callable[[], _T]) -> _T:
        return self.faults.run(method, effect, lambda why: DeployError(f"route directory: {why}"))

    def _refuse_link(self, path: Path) -> None:
        refusal = files.refused_link(path, self.links.get(path), "route file")
        if refusal is not None:
            raise refusal

    def _stamp(self, path: Path) -> Stamp | None:
        text = self.files.get(path)
        return route.stamp_in(text.encode(), path.stem) if text is not None else None

    # --- RouteStore ---------------------------------------------------------------------------------------

    def routes(self, dynamic_dir: Path, name: str | None = None) -> dict[Path, Stamp | None]:
        def listed() -> dict[Path, Stamp | None]:
            if dynamic_dir not in self.directories:
                raise DeployError(f"deploy.dynamic_dir: {dynamic_dir} does not exist or is no directory")
            paths = [p for p in [*self.files, *self.links] if p.parent == dynamic_dir and p.suffix == ".yml"
                     and name in (None, p.stem)]
            return {p: self._stamp(p) for p in sorted(paths)}

        return self._run("routes", listed)

    def temporaries(self, dynamic_dir: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        def found() -> dict[str, dict[Path, Leftover]]:
            owners: dict[str, dict[Path, Leftover]] = {}
            for path, text in sorted(self.files.items()):
                owner = route.temporary_owner(path.name, text.encode(), domain) if path.parent == dynamic_dir else None
                if owner is not None:
                    owners.setdefault(owner[0], {})[path] = owner[1]
            return owners

        return self._run("temporaries", found)

    def text(self, path: Path) -> str | None:
        def read() -> str | None:
            self._refuse_link(path)
            return self.files.get(path)

        return self._run("text", read)

    def document(self, path: Path) -> dict[str, Any] | None:
        def parsed() -> dict[str, Any] | None:
            text = self.files.get(path)
            return parse_text(path, text).data or None if text is not None else None

        return self._run("document", parsed)

    def stamp(self, path: Path) -> Stamp | None:
        return self._run("stamp", lambda: self._stamp(path))

    def write(self, path: Path, document: dict[str, Any], stamp: Stamp | None = None) -> bool:
        def written() -> bool:
            route.check_route(document, path)
            self._refuse_link(path)
            text = route.dump(document, stamp)
            if self.files.get(path) == text:
                return False
            self.directories.add(path.parent)
            self.files[path] = text
            self.created.append(f"route {path.name}")
            return True

        return self._run("write", written)

    def put_back(self, path: Path, text: str) -> None:
        def put() -> None:
            self.files[path] = text

        self._run("put_back", put)

    def remove(self, path: Path) -> bool:
        def removed() -> bool:
            self._refuse_link(path)
            return _popped(self.files, path, f"route {path.name}", self.removed)

        return self._run("remove", removed)

    def exists(self, path: Path) -> bool:
        return self._run("exists", lambda: path in self.files or path in self.links)

    def link(self, path: Path) -> str | None:
        return self._run("link", lambda: self.links.get(path))


class FakeBinds:
    """Page directories in memory: {directory: {file name: content}}, and symbolic links by path. A bind root
    exists once a test names it or a directory is made in it."""

    def __init__(self, *roots: Path) -> None:
        self.roots: set[Path] = set(roots)
        self.dirs: dict[Path, dict[str, bytes]] = {}
        self.kept: dict[Path, dict[str, tuple[bytes, str | None]]] = {}  # directory: {sha12: (page, marker)}
        self.links: dict[Path, str] = {}
        self.faults = _Faults()
        self.removed: list[str] = []
        self.created: list[str] = []

    def _run(self, method: str, effect: Callable[[], _T]) -> _T:
        return self.faults.run(method, effect, lambda why: DeployError(f"bind directories: {why}"))

    def _stamp(self, directory: Path) -> Stamp | None:
        marker = self.dirs.get(directory, {}).get(MARKER)
        return Stamp.from_marker(marker.decode("utf-8", errors="replace")) if marker is not None else None

    def _own(self, directory: Path) -> Stamp | None:
        stamp = self._stamp(directory)
        return stamp if stamp is not None and stamp.name == directory.name else None

    def _refuse_links(self, directory: Path) -> None:
        for path, what in ((directory, "page directory"), (directory / bind.VERSIONS, "kept versions")):
            target = self.links.get(path)
            if target is not None:  # what is behind a link is never read: unknown, not none
                raise UnknownVersions(f"the kept versions of {directory} are unknown: "
                                      f"{files.link_said(path, target, what)}")

    # --- BindStore ----------------------------------------------------------------------------------------

    def has_root(self, bind_root: Path) -> bool:
        return self._run("has_root", lambda: bind_root in self.roots)

    def directories(self, bind_root: Path) -> dict[str, tuple[Path, Stamp]]:
        def found() -> dict[str, tuple[Path, Stamp]]:
            return {path.name: (path, stamp) for path in sorted(self.dirs)
                    if path.parent == bind_root and (stamp := self._own(path)) is not None}

        return self._run("directories", found)

    def temporaries(self, bind_root: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        def found() -> dict[str, dict[Path, Leftover]]:
            owners: dict[str, dict[Path, Leftover]] = {}
            for path, content in sorted(self.dirs.items()):
                name = bind.temporary_name(path.name) if path.parent == bind_root else ""
                stamp = self._stamp(path)
                owner = bind.temporary_claim(dict.fromkeys(content, True), stamp, name, domain)
                if name and owner is not None:
                    owners.setdefault(name, {})[path] = Leftover(owner, stamp)
            return owners

        return self._run("temporaries", found)

    def page_directory(self, directory: Path) -> PageDirectory:
        def looked() -> PageDirectory:
            if directory in self.links:  # never followed
                return PageDirectory(directory, there=True, link=self.links[directory])
            return PageDirectory(directory, there=directory in self.dirs, stamp=self._stamp(directory))

        return self._run("page_directory", looked)

    def stamp(self, directory: Path) -> Stamp | None:
        return self._run("stamp", lambda: self._stamp(directory))

    def page(self, directory: Path) -> bytes | None:
        return self._run("page", lambda: self.dirs.get(directory, {}).get(bind.PAGE))

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        def made() -> bool:
            refusal = files.refused_link(directory, self.links.get(directory), "page directory")
            if refusal is not None:
                raise refusal
            now = PageDirectory(directory, there=directory in self.dirs, stamp=self._stamp(directory))
            refusal = bind.changed_since(seen, now, stamp.fqdn.partition(".")[2])  # the adapter's look, as its own
            if refusal is not None:
                raise refusal
            created = directory not in self.dirs
            # the marker and the page are rewritten; what else is there (a test's planted file) stays, as on disk
            self.dirs[directory] = {**self.dirs.get(directory, {}), MARKER: stamp.marker(sha256).encode(),
                                    bind.PAGE: page}
            self.roots.add(directory.parent)
            if created:
                self.created.append(f"directory {directory.name}")
            return created

        return self._run("ensure", made)

    def put_back_page(self, directory: Path, page: bytes, ours: Collection[Stamp]) -> bool:
        def put() -> bool:
            if self._stamp(directory) not in ours:  # the marker the write would go beside, as the adapter's
                raise DeployError(f"{directory}: its marker is no longer this deployment's; the previous page was "
                                  "not put back there")
            self.dirs[directory][bind.PAGE] = page
            return True

        return self._run("put_back_page", put)

    def remove(self, directory: Path, stamp: Stamp) -> bool:
        def removed() -> bool:
            if directory not in self.dirs and directory not in self.links:
                return False
            refusal = files.refused_link(directory, self.links.get(directory), "page directory")
            if refusal is not None:
                raise refusal
            if self._own(directory) is None:
                raise DeployError(f"{directory} exists but graphsite did not make it; left in place")
            if self._stamp(directory) != stamp:
                raise DeployError(f"{directory}: its marker is not the deployment's; left in place")
            strays = self._strays(directory)
            if strays:  # what graphsite did not put there is never removed: the directory stays, marker and all
                raise bind.strays_refusal(directory, strays, name=directory.name)
            self.kept.pop(directory, None)
            return _popped(self.dirs, directory, f"directory {directory.name}", self.removed)

        return self._run("remove", removed)

    def remove_temporary(self, directory: Path, stamp: Stamp | None) -> bool:
        def removed() -> bool:
            judged = (stamp is not None, stamp)  # as the adapter: a marker, or none, exactly as the survey saw it
            if directory in self.dirs and (MARKER in self.dirs[directory], self._stamp(directory)) != judged:
                raise DeployError(f"{directory}: a deploy's temporary directory whose marker changed since it was "
                                  "judged; left in place")
            return _popped(self.dirs, directory, f"directory {directory.name}", self.removed)

        return self._run("remove_temporary", removed)

    def versions(self, directory: Path) -> dict[str, str | None]:
        def read() -> dict[str, str | None]:
            self._refuse_links(directory)
            return {sha12: marker for sha12, (_, marker) in sorted(self.kept.get(directory, {}).items())}

        return self._run("versions", read)

    def _strays(self, directory: Path) -> tuple[str, ...]:
        names = list(self.dirs.get(directory, {}))  # a test plants 'notes' or 'v/notes' as a file name
        top = [n for n in names if "/" not in n] + ([bind.VERSIONS] if self.kept.get(directory) else [])
        below = [n.split("/", 1)[1] for n in names if n.startswith(f"{bind.VERSIONS}/")]
        return bind.stray_entries(top, below + list(self.kept.get(directory, {})))

    def strays(self, directory: Path) -> tuple[str, ...]:
        def read() -> tuple[str, ...]:
            self._refuse_links(directory)
            return self._strays(directory)

        return self._run("strays", read)

    def version_page(self, directory: Path, sha12: str) -> bytes | None:
        return self._run("version_page", lambda: self.kept.get(directory, {}).get(sha12, (None, None))[0])

    def keep_version(self, directory: Path, sha12: str, page: bytes, marker: str) -> bool:
        def keep() -> bool:
            if directory not in self.dirs:
                raise DeployError(f"bind directories: {directory} is missing")
            versions = self.kept.setdefault(directory, {})
            if sha12 in versions:
                return False
            versions[sha12] = (page, marker)
            self.created.append(f"version {sha12}")
            return True

        return self._run("keep_version", keep)

    def restamp_version(self, directory: Path, sha12: str, marker: str) -> bool:
        def restamp() -> bool:
            versions = self.kept.get(directory, {})
            if sha12 not in versions:
                return False
            versions[sha12] = (versions[sha12][0], marker)
            return True

        return self._run("restamp_version", restamp)

    def remove_version(self, directory: Path, sha12: str) -> bool:
        def removed() -> bool:
            inside = f"{bind.VERSIONS}/{sha12}/"  # a test plants 'v/<sha12>/notes' as a file name
            strays = sorted(n for n in self.dirs.get(directory, {}) if n.startswith(inside))
            if strays and sha12 in self.kept.get(directory, {}):
                raise bind.version_refusal(directory, sha12, strays)
            return _popped(self.kept.get(directory, {}), sha12, f"version {sha12}", self.removed)

        return self._run("remove_version", removed)

    def exists(self, path: Path) -> bool:
        return self._run("exists", lambda: path in self.dirs or path in self.links)

    def link(self, path: Path) -> str | None:
        return self._run("link", lambda: self.links.get(path))


def _cert_time(moment: datetime) -> str:
    return moment.strftime("%b %d %H:%M:%S %Y GMT")


class FakeEdge:
    """The edge as a reader meets it: for a name whose route file is in one of `routes` (in `store`: the
    filesystem unless given) and whose service runs in `swarm`, http answers 308 to https, https answers the
    page with the security headers Caddy sends and a certificate for the name (401 without `credentials` when
    the route asks for a password); any other name is 404 (Traefik's answer for a name it does not route). A
    fault answers with a transport error (the edge could not be asked). `page` None serves the service's
    index.html config (the deployed page, as Caddy does in content mode config)."""

    def __init__(self, swarm: FakeSwarm, routes: list[Path], page: bytes | None, store: RouteStore | None = None, *,
                 credentials: tuple[str, str] | None = None) -> None:
        self.swarm, self.routes, self.page, self.store = swarm, routes, page, store
        self.credentials = credentials
        self.headers: dict[str, str] | None = None  # None: the headers Caddy sends with `page`
        now = datetime.now(UTC)
        self.cert_dates = (now - timedelta(days=1), now + timedelta(days=60))
        self.faults = _Faults()
        self.asked: list[tuple[str, str]] = []  # (scheme, address) of every request

    def _route(self, name: str) -> Path | None:
        store = self.store or RouteFiles()
        for directory in self.routes:
            path = directory / f"{name}.yml"
            if (path.is_file() if self.store is None else store.exists(path)):
                return path
        return None

    def _served(self, name: str, path: str = "/") -> bytes:
        """Return what the service's Caddy answers for `path`: the config mounted at /srv<path>index.html (the
        live page at /, a kept version at /v/<sha12>/); a service arranged without mounts serves its index.html."""
        mounted = self.swarm.mounts.get(name)
        if mounted is None:
            configs = self.swarm.services_by_name[name].configs
            return next((data for config, (target, data) in self.swarm.config_data.items()
                         if config in configs and target == "/srv/index.html"), b"")
        config = mounted.get(f"/srv{path}index.html")
        return self.swarm.config_data.get(config, ("", b""))[1] if config else b""

    def fetch(self, scheme: str, fqdn: str, address: str = "", *, ca_bundle: str = "", timeout: float = 5.0,
              auth: tuple[str, str] | None = None, headers: dict[str, str] | None = None,
              insecure: bool = False) -> Probe:
        url, name = f"{scheme}://{fqdn}/ via {address}", fqdn.split(".", 1)[0]
        self.asked.append((scheme, address))

        def answer() -> Probe:
            path = self._route(name)
            if path is None or name not in self.swarm.services_by_name:
                return Probe(url=url, status=404, body=b"404 page not found\n")
            if scheme == "http":
                return Probe(url=url, status=308, location=f"https://{fqdn}/")
            cert = {"subjectAltName": (("DNS", fqdn),), "issuer": ((("commonName", "fake edge CA"),),),
                    "notBefore": _cert_time(self.cert_dates[0]), "notAfter": _cert_time(self.cert_dates[1])}
            try:
                users = route.route_users((self.store or RouteFiles()).document(path), name)
            except DeployError:  # a middleware graphsite did not write (usersFile, …): users the fake cannot check
                return Probe(url=url, status=401, body=b"401 Unauthorized\n", cert=cert)
            if users and auth != self.credentials:
                return Probe(url=url, status=401, body=b"401 Unauthorized\n", cert=cert)
            page = self.page if self.page is not None else self._served(name)
            sent = self.headers if self.headers is not None else caddy.security_headers(
                caddy.page_csp(page.decode("utf-8", errors="replace")), False)
            return Probe(url=url, status=200, body=page, headers=dict(sent), cert=cert)

        try:
            return self.faults.run("fetch", answer, lambda why: OSError(why))
        except OSError as exc:
            return Probe(url=url, error=f"ConnectError: {exc}", failure="unreachable")


MIDDLEWARES = """http:
  middlewares:
    redirect-to-https:
      redirectScheme: {scheme: https, permanent: true}
"""


def fake_world(root: Path, domain: str = "example.com") -> tuple[Config, Clients]:
    """Return a configuration under `root` and clients that are all in-memory fakes (the route files and page
    directories too). The dynamic directory on disk holds only the operator's middleware file, which deploy's
    preflight reads; the lock directory is real (a lock is a file lock)."""
    dynamic, srv = root / "dynamic", root / "srv"
    for directory in (dynamic, srv):
        directory.mkdir(parents=True, exist_ok=True)
    (dynamic / "middlewares.yml").write_text(MIDDLEWARES)
    config = (Config().replace("site", domain=domain)
              .replace("deploy", dynamic_dir=str(dynamic), bind_root=str(srv), lock_dir=str(root / "locks"),
                       endpoint_mode="dnsrr", gc_grace=900.0)
              .replace("verify", origin_address="127.0.0.1:443", resolve_https="127.0.0.1:443",
                       resolve_http="127.0.0.1:80", deadline=5.0, confirm_after=0.0)
              .replace("dns", record_content="127.0.0.1"))
    swarm, routes = FakeSwarm(), FakeRoutes(dynamic)
    return config, Clients(dns=FakeDns(), swarm=swarm, edge=FakeEdge(swarm, [dynamic], None, routes),
                           routes=routes, binds=FakeBinds(srv))


class FakeClock:
    """A monotonic clock that moves only when the code under test sleeps (pass it as `clock`, its `sleep` as
    `sleep`); `slept` lists every wait."""

    def __init__(self) -> None:
        self.now, self.slept = 1000.0, list[float]()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


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


class Meanwhile(Recorder):
    """A reporter through which another hand changes the world as a step starts: `changes` maps a step's label to
    what is done then, once (between a run's plan and the step's writes: a human in Cloudflare, another host)."""

    def __init__(self, changes: dict[str, Callable[[], object]]) -> None:
        super().__init__()
        self.changes = changes

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        change = self.changes.pop(label, None)
        if change is not None:
            change()
        with super().step(label):
            yield


def _conforms(swarm: FakeSwarm, dns: FakeDns, edge: FakeEdge, routes: FakeRoutes, binds: FakeBinds,
              recorder: Recorder) -> tuple[SwarmPort, DnsPort, EdgePort, RouteStore, BindStore, Reporter]:
    """The fakes are the ports (checked by mypy on tests that type them, and by the calls the use cases make)."""
    return swarm, dns, edge, routes, binds, recorder
