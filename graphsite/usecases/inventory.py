"""What graphsite holds, read from the systems alone: every resource it made, grouped by deployment name, complete
or not. A deployment's state is derived here, never stored: deployed, partial (with what is missing), expired.

Each system is read on its own: when one cannot be read (Cloudflare down, Docker down), the others are still
reported and the one that could not be read is named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError, UnknownVersions
from graphsite.publisher.clients import DIRECTORIES, DNS, ROUTES, SWARM, Clients
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import (
    CONTENT,
    NEEDS_PROOF,
    Claim,
    Deployment,
    Leftover,
    PageDirectory,
    Stamp,
    adopted,
    claim,
    parse_stamp,
    route_path,
    whose,
)
from graphsite.publisher.deployment import bind_dir as bind_dir_of
from graphsite.publisher.names import fqdn as make_fqdn
from graphsite.publisher.ports import BindStore, RouteStore
from graphsite.publisher.swarm import Service
from graphsite.publisher.versions import bind_pages, read_versions

__all__ = ["DIRECTORIES", "DNS", "ROUTES", "SWARM", "Answers", "Foreign", "Holding", "Inventory", "Unread", "age",
           "holding", "known", "survey"]


@dataclass(frozen=True)
class Unread:
    """A look that failed, kept as its answer: whoever decides on it raises its error (`known`); it is never
    taken for "nothing there"."""

    error: GraphsiteError


def known(answer: PageDirectory | Unread) -> PageDirectory:
    """Return the page directory as the survey's look found it; raise that look's error when it failed."""
    if isinstance(answer, Unread):
        raise answer.error
    return answer


@dataclass(frozen=True)
class Answers:
    """What each system answered a survey of one name, whoever made what it holds (the Holding's other fields
    are the survey's judgements of it): kept so that a caller decides on this one read instead of asking again,
    which could answer otherwise."""

    service: Service | None  # the Swarm service called NAME, anyone's
    configs: dict[str, dict[str, str]]  # {config: its labels} of every config labelled with NAME, anyone's
    routes: dict[Path, Stamp | None]  # NAME.yml with its stamp (None: not graphsite's shape, a link), when there
    records: tuple[Record, ...]  # every record called NAME's fqdn, of any type and anyone's
    # NAME's page directory under deploy.bind_root, anyone's: whether it is there, a link, the stamp its marker
    # holds; Unread when that look failed (a marker that cannot be read: decided on by nobody, see `known`)
    directory: PageDirectory | Unread


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
    # the whole stamp the marker of each of them held when it was judged (none: it had no marker yet)
    temporary_dir_stamps: tuple[tuple[Path, Stamp], ...] = ()
    directory: Path | None = None
    directory_stamp: Stamp | None = None  # the marker the directory held when it was judged this name's
    records: tuple[Record, ...] = ()
    stamps: tuple[Stamp, ...] = ()  # what each resource says of itself
    unknown: tuple[str, ...] = ()  # the systems that could not be read
    # the versions it keeps, counted as history does (None: unknown: a read failed, a bind directory this host
    # does not hold, a service of a release before versions)
    versions: int | None = 0
    versions_unknown: str = ""  # why `versions` is None, when reading the bind directory's v/ said it
    # the answers themselves, when the survey asked for this name alone and Swarm, the route directory and
    # Cloudflare all answered, with the look at its page directory even when that failed (Answers.directory,
    # Unread) (None: a listing of every name, a survey without Cloudflare, one of those three unreadable)
    answers: Answers | None = None
    # what is there in the place of a missing part (its route file NAME.yml, an A record at its fqdn) but is not
    # proven this configuration's: never that part's absence (`_occupants`); each is in the inventory's foreign
    occupied: tuple[Foreign, ...] = ()
    # what the survey read at its route file NAME.yml when that is not this configuration's route: (the stamp it
    # carries, None: none that parses or not graphsite's shape,); None when no such file was read
    route_file: tuple[Stamp | None] | None = None

    def temporary_stamp(self, directory: Path) -> Stamp | None:
        """Return the stamp the temporary page directory `directory` held when it was judged (None: no marker)."""
        return dict(self.temporary_dir_stamps).get(directory)

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
        if Stamp(self.name, created=self.created, expires=self.expires).expired(now):
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
class Foreign:
    """A resource that carries a graphsite stamp but is not this configuration's to touch: another
    configuration's, a lookalike, or one made by an older graphsite that nothing of this configuration vouches
    for. `list` shows it; nothing removes it."""

    kind: str  # service, config, route, directory, record
    name: str  # the service, config or record name, or the path
    claim: Claim
    stamp: Stamp | None = None
    why: str = ""  # for one in a deployment's place (`Holding.occupied`): where it is and what it is not

    def line(self) -> str:
        owner = f" ({self.stamp.fqdn})" if self.claim == Claim.OTHER and self.stamp else ""
        return f"{self.kind} {self.name}: {self.claim}{owner}" + (f": {self.why}" if self.why else "")

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "claim": str(self.claim),
                "fqdn": self.stamp.fqdn if self.stamp else None, "why": self.why or None}


@dataclass(frozen=True)
class Inventory:
    holdings: dict[str, Holding] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)  # system -> why it could not be read
    foreign: tuple[Foreign, ...] = ()
    # the names a resource proves this configuration's (`_proven`: the one proof, deploy's too)
    proven: frozenset[str] = frozenset()

    @property
    def complete(self) -> bool:
        """True when every system was read: the only state a destructive decision may be made on."""
        return not self.unreadable


@dataclass
class _Found:
    services: dict[str, Service] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    configs: dict[str, dict[str, Stamp]] = field(default_factory=dict)
    config_labels: dict[str, dict[str, str]] = field(default_factory=dict)  # config -> its labels (versions)
    routes: dict[str, tuple[Path, Stamp]] = field(default_factory=dict)
    temporaries: dict[str, list[Path]] = field(default_factory=dict)
    temporary_stamps: dict[Path, Stamp] = field(default_factory=dict)  # the whole stamps temporaries carry
    directories: dict[str, tuple[Path, Stamp]] = field(default_factory=dict)
    temporary_dirs: dict[str, list[Path]] = field(default_factory=dict)
    # name -> {sha12: marker} in bind mode; None: its versions could not be read (a link at v/); absent: not asked
    kept: dict[str, dict[str, str | None] | None] = field(default_factory=dict)
    unknown_versions: dict[str, str] = field(default_factory=dict)  # name -> why its kept versions are unknown
    records: dict[str, list[Record]] = field(default_factory=dict)
    a_records: dict[str, list[Record]] = field(default_factory=dict)  # every A record read, anyone's, by name
    unreadable: dict[str, str] = field(default_factory=dict)
    # name -> (kind, what, claim, stamp) of the resources whose stamp names no domain (adopted when proven)
    older: dict[str, list[tuple[str, str, Claim, Stamp | None]]] = field(default_factory=dict)
    foreign: list[Foreign] = field(default_factory=list)
    # what a survey of one name was answered, each set once its read is complete (`Answers`)
    service_of_name: tuple[Service | None] | None = None
    labelled: dict[str, dict[str, str]] | None = None
    route_files: dict[Path, Stamp | None] | None = None
    named_records: tuple[Record, ...] | None = None
    page_directory: PageDirectory | Unread | None = None

    def answers(self) -> Answers | None:
        """Return what Swarm, the route directory and Cloudflare answered for one name, and the look at its page
        directory (failed or not); None unless all did."""
        if self.service_of_name is None or self.labelled is None or self.route_files is None \
                or self.named_records is None or self.page_directory is None \
                or {SWARM, ROUTES, DNS} & set(self.unreadable):
            return None
        return Answers(self.service_of_name[0], self.labelled, self.route_files, self.named_records,
                       self.page_directory)

    def judge(self, kind: str, what: str, stamp: Stamp | None, resource: str, domain: str) -> bool:
        """Return True when the resource is this configuration's; remember it as foreign (or, made by an
        older graphsite, as waiting for a proven resource of its name) otherwise."""
        owner = claim(stamp, resource, domain)
        if owner == Claim.OURS:
            return True
        if owner in NEEDS_PROOF:
            self.older.setdefault(resource, []).append((kind, what, owner, stamp))
        elif owner is not None:
            self.foreign.append(Foreign(kind, what, owner, stamp))
        return False

    def held(self, kind: str, path: Path, left: Leftover, resource: str) -> None:
        """Keep a temporary a killed run left: this configuration's (OURS), or waiting for a proven resource of
        its name when it names no domain. Its stamp, when whole, dates it: a leftover is collected past the grace
        period, not kept as undated."""
        if left.stamp is not None:
            self.temporary_stamps[path] = left.stamp
        if left.claim == Claim.OURS:
            self.temporary(kind, resource, path)
        else:
            self.older.setdefault(resource, []).append((kind, str(path), left.claim, None))

    def temporary(self, kind: str, resource: str, path: Path) -> None:
        held = self.temporaries if kind == "temporary route" else self.temporary_dirs
        held.setdefault(resource, []).append(path)


@dataclass(frozen=True)
class SurveySettings:
    """The settings a survey reads by: the domain that says which resources are this configuration's, and where
    its route files and bind directories are."""

    domain: str
    dynamic_dir: Path
    bind_root: Path

    @classmethod
    def from_config(cls, config: Config) -> SurveySettings:
        return cls(config.site.domain, Path(config.deploy.dynamic_dir), Path(config.deploy.bind_root))


def survey(settings: SurveySettings, clients: Clients, *, name: str | None = None, dns: bool = True,
           runtime: bool = False, required: frozenset[str] = frozenset()) -> Inventory:
    """Return what graphsite holds in every system (only `name`'s resources when given; without `dns`, Cloudflare
    is not asked and no record is reported; with `runtime`, each service's running tasks and their nodes, which
    only `list` shows, are asked for too, and so are the versions a bind directory keeps: without it, their count
    is None). A system that cannot be read is named in `unreadable`; one of `required` raises its error instead
    (deploy's: it decides nothing on a system it could not read)."""
    found = _Found()
    domain = settings.domain
    _read(found, SWARM, lambda: _read_swarm(found, clients, name, runtime, domain), clients.unavailable, required)
    _read(found, ROUTES, lambda: _read_routes(found, clients.routes, settings.dynamic_dir, name, domain),
          required=required)
    _read(found, DIRECTORIES, lambda: _read_directories(found, clients.binds, settings.bind_root, name, domain,
                                                                 versions=runtime), required=required)
    if dns:
        _read(found, DNS, lambda: _read_dns(found, domain, clients, name), clients.unavailable, required)
    _missing_bind_root(found, clients.binds, settings.bind_root)
    proven = _proven(found)
    _adopt_older(found, proven)
    names = (set(found.services) | set(found.configs) | set(found.routes) | set(found.temporaries)
             | set(found.directories) | set(found.temporary_dirs) | set(found.records))
    if name is not None:
        names = {name}
    holdings = {n: _holding(domain, n, found) for n in sorted(names)}
    if name is not None:
        holdings[name] = replace(holdings[name], answers=found.answers())
    holdings = {n: replace(h, occupied=_occupants(found, settings, h)) for n, h in holdings.items()
                if not h.empty or n == name}
    return Inventory(holdings=holdings, unreadable=dict(found.unreadable),
                     foreign=_with_occupants(found.foreign, holdings.values()), proven=proven)


def _occupants(found: _Found, settings: SurveySettings, held: Holding) -> tuple[Foreign, ...]:
    """Return what is there, read, in the place of a part `held` misses, though not proven this configuration's:
    its route file NAME.yml (not graphsite's shape as it stands: edited by hand, a link; or another's stamp), the
    A records at its fqdn (a comment rewritten, or none of graphsite's). Such a part is unproven, never absent: gc
    does not collect the deployment as partial on it. A name nothing of this configuration's holds has none: the
    route files of other tools beside graphsite's are nobody's business here."""
    if held.empty:
        return ()
    missing, there = held.missing(), []
    path, domain = route_path(settings.dynamic_dir, held.name), settings.domain
    if "route" in missing and found.route_files is not None and path in found.route_files:
        stamp = found.route_files[path]
        owner = claim(stamp, held.name, domain)
        there.append(Foreign("route", str(path), owner or Claim.UNPROVEN, stamp, f"in {held.name}'s place, but " + (
            whose(owner, stamp) if stamp is not None else
            "not the route graphsite wrote as it stands (not graphsite's shape: edited by hand, or someone else's)")))
    if "record" in missing:
        fqdn = make_fqdn(held.name, domain)
        there += [Foreign("record", f"A {r.name} id={r.id}", r.claim(domain) or Claim.UNPROVEN, r.stamp,
                          f"in {held.name}'s place, but " + (
                              whose(r.claim(domain), r.stamp) if r.stamp is not None else
                              "its comment is not graphsite's stamp (rewritten by hand, or someone else's)"))
                  for r in found.a_records.get(fqdn, ())]
    return tuple(there)


def _with_occupants(foreign: list[Foreign], holdings: Iterable[Holding]) -> tuple[Foreign, ...]:
    """Return the foreign resources with every deployment's occupants among them, each once: one already judged
    foreign by its stamp is shown with why it matters; one with no stamp at all is added."""
    placed = {(f.kind, f.name): f for held in holdings for f in held.occupied}
    shown = [placed.pop((f.kind, f.name), f) for f in foreign]
    return tuple(shown + list(placed.values()))


def _proven(found: _Found) -> frozenset[str]:
    """Return the names proven this configuration's: each has a resource whose complete stamp names this domain
    (its service, a config `NAME-…`, its route file, its page directory, its A record), judged where the survey
    judges it. Only these let what names no domain (graphsite 0.1's stamp, an unfinished write) be adopted; a
    temporary proves nothing, and a system that was not read proves nothing either."""
    return frozenset(set(found.services) | set(found.configs) | set(found.routes) | set(found.directories)
                     | set(found.records))


def _missing_bind_root(found: _Found, binds: BindStore, bind_root: Path) -> None:
    """A bind deployment's directory lives on its node: where `bind_root` does not exist (another manager, a
    container without the mount), the directories are not known, not absent. Without a bind deployment, a bind
    root never made is simply empty."""
    held = [s.name for s in found.services.values() if s.labels.get(CONTENT) == "bind"]
    if held and not binds.has_root(bind_root) and DIRECTORIES not in found.unreadable:
        found.unreadable[DIRECTORIES] = (f"{bind_root} does not exist on this host, and {held[0]} keeps its page "
                                         "there: run the command on the node that holds it")


def _adopt_older(found: _Found, proven: frozenset[str]) -> None:
    """Resources whose stamp names no domain (an older graphsite's, a temporary cut short) are a name's when a
    resource of that name proves it is this configuration's (`adopted`); the others are shown as foreign and
    kept."""
    for resource, older in found.older.items():
        for kind, what, owner, stamp in older:
            if not adopted(owner, resource in proven):
                found.foreign.append(Foreign(kind, what, owner, stamp))
            elif kind.startswith("temporary"):
                found.temporary(kind, resource, Path(what))
            elif kind == "config" and stamp is not None:
                found.configs.setdefault(resource, {})[what] = stamp
            elif kind == "route" and stamp is not None:
                found.routes[resource] = (Path(what), stamp)
            elif kind == "directory" and stamp is not None:
                found.directories[resource] = (Path(what), stamp)


def holding(settings: SurveySettings, clients: Clients, name: str, *,
            dns: bool = True) -> tuple[Holding, dict[str, str]]:
    """Return what graphsite holds for `name`, and the systems that could not be read."""
    inventory = survey(settings, clients, name=name, dns=dns)
    return inventory.holdings[name], inventory.unreadable


def _read(found: _Found, system: str, read: Callable[[], object], unavailable: dict[str, str] | None = None,
          required: frozenset[str] = frozenset()) -> None:
    if unavailable and system in unavailable and system not in required:  # required: read() raises why
        found.unreadable[system] = unavailable[system]
        return
    try:
        read()
    except GraphsiteError as exc:
        if system in required:
            raise
        found.unreadable[system] = exc.message.splitlines()[0]
    except OSError as exc:
        if system in required:
            raise _unreadable(system, exc) from None
        found.unreadable[system] = _why(exc)


def _why(exc: OSError) -> str:
    return f"{exc.filename or ''}: {exc.strerror or exc}"


def _unreadable(system: str, exc: OSError) -> DeployError:
    """Return the error of a read of `system` that failed with `exc`, naming the file."""
    return DeployError(f"{system}: cannot be read: {_why(exc)}",
                       hint="nothing is decided on a system that was not read: fix it, then run again")


def _read_swarm(found: _Found, clients: Clients, name: str | None, runtime: bool, domain: str) -> None:
    swarm = clients.docker
    if name is not None:
        service = swarm.service(name)
        services = [service] if service is not None else []
        found.service_of_name = (service,)
    else:
        services = swarm.services()
    hostnames = swarm.node_names() if services and runtime else {}
    for service in services:
        if not found.judge("service", service.name, Stamp.from_labels(service.labels), service.name, domain):
            continue  # not graphsite's, another configuration's, or a label that names another deployment
        found.services[service.name] = service
        if not runtime:
            continue
        tasks = [t for t in swarm.tasks(service.name) if t.state == "running" and t.desired == "running"]
        found.running[service.name] = f"{len(tasks)}/{service.replicas}"
        found.nodes[service.name] = tuple(sorted(hostnames.get(t.node) or t.node[:12] for t in tasks))
    found.labelled = swarm.labelled_configs(name)
    for config_name, labels in found.labelled.items():
        stamp = Stamp.from_labels(labels)
        if stamp is None:
            continue
        resource = stamp.name if config_name.startswith(f"{stamp.name}-") else config_name
        if found.judge("config", config_name, stamp, resource, domain):
            found.configs.setdefault(stamp.name, {})[config_name] = stamp
            found.config_labels[config_name] = labels


def _read_routes(found: _Found, routes: RouteStore, dynamic_dir: Path, name: str | None, domain: str) -> None:
    found.route_files = routes.routes(dynamic_dir, name)
    for path, stamp in found.route_files.items():
        if found.judge("route", str(path), stamp, path.stem, domain) and stamp is not None:
            found.routes[path.stem] = (path, stamp)
    for owner, temporaries in routes.temporaries(dynamic_dir, domain).items():
        if name is None or owner == name:
            for path, left in temporaries.items():
                found.held("temporary route", path, left, owner)


def _read_directories(found: _Found, binds: BindStore, bind_root: Path, name: str | None, domain: str, *,
                      versions: bool) -> None:
    if name is None:
        directories = binds.directories(bind_root)
    else:
        try:
            found.page_directory = binds.page_directory(bind_dir_of(bind_root, name))
        except GraphsiteError as exc:  # kept as the answer, failed: whoever would decide on it refuses
            found.page_directory = Unread(exc)
            raise
        except OSError as exc:  # a failure the store did not translate: as _read names it, kept all the same
            found.page_directory = Unread(_unreadable(DIRECTORIES, exc))
            raise
        stamp = found.page_directory.own_stamp
        directories = {name: (found.page_directory.path, stamp)} if stamp is not None else {}
    for owner, (path, stamp) in directories.items():
        if found.judge("directory", str(path), stamp, owner, domain):
            found.directories[owner] = (path, stamp)
            if not versions:  # only list counts them: a deploy, teardown or gc has no use for them
                continue
            try:
                found.kept[owner] = binds.versions(path)
            except UnknownVersions as exc:  # not the deployment's (a link at v/): its count, not the whole system;
                found.kept[owner] = None      # a read that failed makes the page directories unreadable
                found.unknown_versions[owner] = exc.detail
            except GraphsiteError as exc:  # the rest is still read: one name's v/ does not hide the others
                found.kept[owner] = None
                found.unreadable.setdefault(DIRECTORIES, exc.message.splitlines()[0])
    for owner, temporaries in binds.temporaries(bind_root, domain).items():
        if name is None or owner == name:
            for path, left in temporaries.items():
                found.held("temporary directory", path, left, owner)


def _read_dns(found: _Found, domain: str, clients: Clients, name: str | None) -> None:
    if name is not None:
        found.named_records = tuple(clients.dns.records(make_fqdn(name, domain)))
        records = [r for r in found.named_records if r.type == "A"]
    else:
        records = clients.dns.a_records()
    for record in records:
        found.a_records.setdefault(record.name, []).append(record)
        owner = record.claim(domain)
        if owner == Claim.OURS and record.stamp is not None:
            found.records.setdefault(record.stamp.name, []).append(record)
        elif owner is not None:
            found.foreign.append(Foreign("record", f"A {record.name} id={record.id}", owner, record.stamp))


def record_owner(record: Record, domain: str) -> str:
    """Return the name of the deployment a record belongs to under `domain` (its comment holds a complete stamp
    whose fqdn is the record's own name), or '' when it is not this configuration's."""
    stamp = record.stamp
    return stamp.name if stamp is not None and record.claim(domain) == Claim.OURS else ""


def _holding(domain: str, name: str, found: _Found) -> Holding:
    service = found.services.get(name)
    deployment = Deployment.from_labels(service.labels, service.replicas) if service else None
    stamps = [deployment.stamp] if deployment else []
    configs = found.configs.get(name, {})
    stamps += configs.values()
    route_found = found.routes.get(name)
    directory = found.directories.get(name)
    records = found.records.get(name, [])
    route_file = None if route_found else next(
        ((stamp,) for path, stamp in (found.route_files or {}).items() if path.stem == name), None)
    stamps += [s for s in (route_found and route_found[1], directory and directory[1]) if s]
    temporaries = tuple(found.temporaries.get(name, ()))
    stamps += [found.temporary_stamps[path] for path in temporaries if path in found.temporary_stamps]
    temporary_dirs = tuple(found.temporary_dirs.get(name, ()))
    stamps += [found.temporary_stamps[path] for path in temporary_dirs if path in found.temporary_stamps]
    stamps += [r.stamp for r in records if r.stamp]
    return Holding(name=name, fqdn=(deployment.fqdn if deployment and deployment.fqdn
                                    else make_fqdn(name, domain)),
                   deployment=deployment, running=found.running.get(name, ""),
                   nodes=found.nodes.get(name, ()), configs=tuple(sorted(configs)),
                   route=route_found[0] if route_found else None, route_file=route_file,
                   temporaries=temporaries, temporary_dirs=temporary_dirs,
                   temporary_dir_stamps=tuple((p, found.temporary_stamps[p]) for p in temporary_dirs
                                              if p in found.temporary_stamps),
                   directory=directory[0] if directory else None,
                   directory_stamp=directory[1] if directory else None, records=tuple(records),
                   stamps=tuple(stamps), unknown=tuple(found.unreadable),
                   versions=(versions := _versions(domain, name, deployment, configs, found)),
                   versions_unknown=found.unknown_versions.get(name, "") if versions is None else "")


def _versions(domain: str, name: str, deployment: Deployment | None, configs: dict[str, Stamp],
              found: _Found) -> int | None:
    """Return how many versions the name keeps, by history's rule (read_versions); 0 without a service (nothing
    proves whose its pages are); None when it is not known: Swarm not read, a service without an id (a release
    before versions), a read that failed, a bind directory not found here (or its versions not asked: `survey`'s
    `runtime`)."""
    if SWARM in found.unreadable:
        return None  # no service found may be a service not read
    if deployment is None:
        return 0
    if not deployment.id:
        return None
    if deployment.content == "bind":
        directory, kept = found.directories.get(name), found.kept.get(name)
        if directory is None or DIRECTORIES in found.unreadable or kept is None or directory[1].id != deployment.id:
            return None  # not held here, not read, or not the deployment's directory (history refuses it too)
        labelled, _ = bind_pages(kept, name, directory[0])
    else:
        labelled = {config: found.config_labels.get(config, {}) for config in configs}
    return len(read_versions(labelled, deployment, domain).versions)


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
