"""What graphsite holds, read from the systems alone: every resource it made, grouped by deployment name, complete
or not. A deployment's state is derived here, never stored: deployed, partial (with what is missing), expired.

Each system is read on its own: when one cannot be read (Cloudflare down, Docker down), the others are still
reported and the one that could not be read is named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from graphsite.config import Config
from graphsite.errors import GraphsiteError
from graphsite.publisher import bind, route
from graphsite.publisher.clients import DIRECTORIES, DNS, ROUTES, SWARM, Clients
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import Deployment, Stamp, parse_stamp
from graphsite.publisher.deployment import bind_dir as bind_dir_of
from graphsite.publisher.deployment import route_path as route_path_of
from graphsite.publisher.names import fqdn as make_fqdn
from graphsite.publisher.swarm import Service

__all__ = ["DIRECTORIES", "DNS", "ROUTES", "SWARM", "Holding", "Inventory", "age", "holding", "survey"]


@dataclass(frozen=True)
class Holding:
    """Everything graphsite made for one name, as found."""

    name: str
    fqdn: str
    deployment: Deployment | None = None  # from the service's labels
    running: str = ""  # running/wanted replicas, e.g. 1/1
    nodes: tuple[str, ...] = ()  # the node (hostname) of each running task
    configs: tuple[str, ...] = ()
    route: Path | None = None
    temporaries: tuple[Path, ...] = ()  # route files a killed write left
    temporary_dirs: tuple[Path, ...] = ()  # page directories a killed deploy left half-filled
    directory: Path | None = None
    records: tuple[Record, ...] = ()
    stamps: tuple[Stamp, ...] = ()  # what each resource says of itself
    unknown: tuple[str, ...] = ()  # the systems that could not be read

    @property
    def created(self) -> str:
        """When the deployment was made: the service says so, else the earliest resource does."""
        if self.deployment and self.deployment.created:
            return self.deployment.created
        stamps = sorted(s.created for s in self.stamps if parse_stamp(s.created))
        return stamps[0] if stamps else ""

    @property
    def expires(self) -> str:
        if self.deployment is not None:
            return self.deployment.expires
        stamps = sorted(s.expires for s in self.stamps if parse_stamp(s.expires))
        return stamps[-1] if stamps else ""

    @property
    def empty(self) -> bool:
        return not (self.deployment or self.configs or self.route or self.leftovers or self.directory
                    or self.records)

    @property
    def leftovers(self) -> bool:
        """True when a killed run left a temporary route file or page directory."""
        return bool(self.temporaries or self.temporary_dirs)

    def missing(self) -> list[str]:
        """Return what a complete deployment has and this one lacks (empty: complete). What could not be read
        is not called missing."""
        content = self.deployment.content if self.deployment else \
            ("bind" if self.directory or self.temporary_dirs else "config")
        wanted = [("service", self.deployment is not None, SWARM), ("route", self.route is not None, ROUTES),
                  ("record", bool(self.records), DNS)]
        if content == "bind":
            wanted.append(("directory", self.directory is not None, DIRECTORIES))
        else:
            wanted.append(("configs", bool(self.configs), SWARM))
        return [what for what, present, system in wanted if not present and system not in self.unknown]

    def state(self, now: datetime) -> str:
        """Return `expired`, `partial` or `deployed` (a state, derived every time from what was found)."""
        if Stamp(self.name, self.created, self.expires).expired(now):
            return "expired"
        return "partial" if self.missing() or self.leftovers else "deployed"

    def resources(self) -> list[tuple[str, str]]:
        """Return (kind, name) of every resource found, in teardown order."""
        found = [("route", str(self.route))] if self.route else []
        found += [("temporary route", str(p)) for p in self.temporaries]
        found += [("service", self.name)] if self.deployment else []
        found += [("config", c) for c in self.configs]
        found += [("directory", str(self.directory))] if self.directory else []
        found += [("temporary directory", str(p)) for p in self.temporary_dirs]
        found += [("record", f"A {r.name} id={r.id}") for r in self.records]
        return found


@dataclass(frozen=True)
class Inventory:
    holdings: dict[str, Holding] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)  # system -> why it could not be read


@dataclass
class _Found:
    services: dict[str, Service] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    configs: dict[str, dict[str, Stamp]] = field(default_factory=dict)
    routes: dict[str, tuple[Path, Stamp]] = field(default_factory=dict)
    temporaries: dict[str, list[Path]] = field(default_factory=dict)
    directories: dict[str, tuple[Path, Stamp]] = field(default_factory=dict)
    temporary_dirs: dict[str, list[Path]] = field(default_factory=dict)
    records: dict[str, list[Record]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)


def survey(config: Config, clients: Clients, *, name: str | None = None, dns: bool = True,
           runtime: bool = False) -> Inventory:
    """Return what graphsite holds in every system (only `name`'s resources when given; without `dns`, Cloudflare
    is not asked and no record is reported; with `runtime`, each service's running tasks and their nodes, which
    only `list` shows, are asked for too)."""
    found = _Found()
    _read(found, SWARM, lambda: _read_swarm(found, clients, name, runtime), clients.unavailable)
    _read(found, ROUTES, lambda: _read_routes(found, Path(config.deploy.dynamic_dir), name))
    _read(found, DIRECTORIES, lambda: _read_directories(found, Path(config.deploy.bind_root), name))
    if dns:
        _read(found, DNS, lambda: _read_dns(found, config, clients, name), clients.unavailable)
    names = (set(found.services) | set(found.configs) | set(found.routes) | set(found.temporaries)
             | set(found.directories) | set(found.temporary_dirs) | set(found.records))
    if name is not None:
        names = {name}
    holdings = {n: _holding(config, n, found) for n in sorted(names)}
    return Inventory(holdings={n: h for n, h in holdings.items() if not h.empty or n == name},
                     unreadable=dict(found.unreadable))


def holding(config: Config, clients: Clients, name: str, *, dns: bool = True) -> tuple[Holding, dict[str, str]]:
    """Return what graphsite holds for `name`, and the systems that could not be read."""
    inventory = survey(config, clients, name=name, dns=dns)
    return inventory.holdings[name], inventory.unreadable


def _read(found: _Found, system: str, read, unavailable: dict[str, str] | None = None) -> None:
    if unavailable and system in unavailable:
        found.unreadable[system] = unavailable[system]
        return
    try:
        read()
    except GraphsiteError as exc:
        found.unreadable[system] = exc.message.splitlines()[0]
    except OSError as exc:
        found.unreadable[system] = f"{exc.filename or ''}: {exc.strerror or exc}"


def _read_swarm(found: _Found, clients: Clients, name: str | None, runtime: bool) -> None:
    swarm = clients.swarm
    if name is not None:
        service = swarm.service(name)
        services = [service] if service is not None else []
    else:
        services = swarm.services()
    hostnames = swarm.node_names() if services and runtime else {}
    for service in services:
        stamp = Stamp.from_labels(service.labels)
        if stamp is None or stamp.name != service.name:
            continue  # not graphsite's, or a label that names another deployment: not ours to hold
        found.services[service.name] = service
        if not runtime:
            continue
        tasks = [t for t in swarm.tasks(service.name) if t.state == "running" and t.desired == "running"]
        found.running[service.name] = f"{len(tasks)}/{service.replicas}"
        found.nodes[service.name] = tuple(sorted(hostnames.get(t.node) or t.node[:12] for t in tasks))
    for config_name, stamp in swarm.config_stamps(name).items():
        found.configs.setdefault(stamp.name, {})[config_name] = stamp


def _read_routes(found: _Found, dynamic_dir: Path, name: str | None) -> None:
    if not dynamic_dir.is_dir():
        return
    paths = [route_path_of(dynamic_dir, name)] if name is not None else sorted(dynamic_dir.glob("*.yml"))
    for path in paths:
        stamp = route.route_stamp(path) if path.is_file() else None
        if stamp is not None:
            found.routes[path.stem] = (path, stamp)
    for owner, temporaries in route.temporaries(dynamic_dir).items():
        if name is None or owner == name:
            found.temporaries[owner] = temporaries


def _read_directories(found: _Found, bind_root: Path, name: str | None) -> None:
    if name is None:
        found.directories.update(bind.bind_dirs(bind_root))
    elif (stamp := bind.own_stamp(bind_dir_of(bind_root, name))) is not None:
        found.directories[name] = (bind_dir_of(bind_root, name), stamp)
    for owner, temporaries in bind.temporaries(bind_root).items():
        if name is None or owner == name:
            found.temporary_dirs[owner] = temporaries


def _read_dns(found: _Found, config: Config, clients: Clients, name: str | None) -> None:
    domain = config.site.domain
    if name is not None:
        records = [r for r in clients.dns.records(make_fqdn(name, domain)) if r.type == "A" and r.ours]
    else:
        records = clients.dns.graphsite_records()
    for record in records:
        owner = record_owner(record, domain)
        if owner:
            found.records.setdefault(owner, []).append(record)


def record_owner(record: Record, domain: str) -> str:
    """Return the name of the deployment a record belongs to (its comment names it, and so does its own name),
    or '' when graphsite did not make it."""
    stamp = record.stamp
    return stamp.name if stamp is not None and record.name == make_fqdn(stamp.name, domain) else ""


def _holding(config: Config, name: str, found: _Found) -> Holding:
    service = found.services.get(name)
    deployment = Deployment.from_labels(service.labels, service.replicas) if service else None
    stamps = [deployment.stamp] if deployment else []
    configs = found.configs.get(name, {})
    stamps += configs.values()
    route_found = found.routes.get(name)
    directory = found.directories.get(name)
    records = found.records.get(name, [])
    stamps += [s for s in (route_found and route_found[1], directory and directory[1]) if s]
    temporary_dirs = tuple(found.temporary_dirs.get(name, ()))
    stamps += [s for s in map(bind.bind_stamp, temporary_dirs) if s]
    stamps += [r.stamp for r in records if r.stamp]
    return Holding(name=name, fqdn=(deployment.fqdn if deployment and deployment.fqdn
                                    else make_fqdn(name, config.site.domain)),
                   deployment=deployment, running=found.running.get(name, ""),
                   nodes=found.nodes.get(name, ()), configs=tuple(sorted(configs)),
                   route=route_found[0] if route_found else None,
                   temporaries=tuple(found.temporaries.get(name, ())), temporary_dirs=temporary_dirs,
                   directory=directory[0] if directory else None, records=tuple(records), stamps=tuple(stamps),
                   unknown=tuple(found.unreadable))


def age(created: str, now: datetime) -> str:
    """Return how long ago `created` was, as 42s, 5m, 3h or 2d."""
    moment = parse_stamp(created)
    if moment is None:
        return ""
    seconds = max(0, int((now - moment).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
