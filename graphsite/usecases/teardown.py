"""`graphsite teardown`: take the page offline first, then remove everything graphsite made for a name, then
prove it: each resource looked up again, and the page asked for through the edge.

Order: the route file (the edge stops routing), the service, its configs and directory, then the DNS record
last, because it is the one step that needs a third party and may be unreachable: that step is bounded by
`dns.teardown_deadline`, and a teardown that could not finish says what is left and exits non-zero. Running it
again finishes the job (every removal is idempotent).
"""

from __future__ import annotations

import hashlib
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError
from graphsite.labels import subdomain_of
from graphsite.publisher import files, probe
from graphsite.publisher.clients import DIRECTORIES, ROUTES, Clients
from graphsite.publisher.deployment import Claim, bind_dir, claim, route_path, whose
from graphsite.publisher.lock import subdomain_lock
from graphsite.publisher.outcomes import ABSENT, FAILED, KEPT, REMOVED, Did, Outcome
from graphsite.publisher.ports import BindStore, EdgePort, Reporter, RouteStore
from graphsite.usecases.inventory import SWARM, Holding, SurveySettings, holding, record_owner

PAGE_WAIT = 15.0  # seconds the edge may take to drop a removed route (Traefik reloads on a file event)


@dataclass(frozen=True)
class TeardownSettings:
    """The settings a teardown needs: where the deployments are, where their locks are, how long Cloudflare may
    take, and where the edge is asked whether the page is still served."""

    survey: SurveySettings
    lock_dir: Path
    dns_deadline: float  # dns.teardown_deadline
    edge_address: str  # host:port: verify.origin_address, else verify.resolve_https (empty: the edge is not asked)
    ca_bundle: str  # verify.ca_bundle

    @classmethod
    def from_config(cls, config: Config) -> TeardownSettings:
        verify = config.verify
        return cls(SurveySettings.from_config(config), Path(config.deploy.lock_dir), config.dns.teardown_deadline,
                   verify.origin_address or verify.resolve_https, verify.ca_bundle)


@dataclass(frozen=True)
class TeardownReport:
    name: str
    fqdn: str
    outcomes: tuple[Outcome, ...]
    left: tuple[str, ...]  # what the proof still found (or could not look at)
    page: str  # the evidence that the page is no longer served, or why that is not proven
    page_state: PageState

    @property
    def page_offline(self) -> bool:
        return self.page_state == PageState.OFFLINE

    @property
    def clean(self) -> bool:
        return not self.left and self.page_offline and not any(o.failed for o in self.outcomes)

    @property
    def nothing_was_there(self) -> bool:
        return all(o.outcome == ABSENT for o in self.outcomes)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "fqdn": self.fqdn, "clean": self.clean,
                "resources": [o.as_json() for o in self.outcomes], "left": list(self.left),
                "page": {"offline": self.page_offline, "state": str(self.page_state), "evidence": self.page}}


def teardown(settings: TeardownSettings, name: str, clients: Clients, reporter: Reporter, *,
             wait: float = 30.0) -> TeardownReport:
    """Remove every resource of NAME (a subdomain or its fqdn) under its lock; return what happened. Progress
    goes to `reporter`."""
    subdomain = subdomain_of(name, settings.survey.domain)
    check_edge(settings)
    with subdomain_lock(settings.lock_dir, subdomain, wait=wait):
        return teardown_locked(settings, subdomain, clients, reporter)


def check_edge(settings: TeardownSettings) -> None:
    """Raise ConfigError when the edge is to be asked and `verify.ca_bundle` cannot be loaded: a teardown (or a
    gc) refuses before it removes anything, not in its proof after everything is gone and the report lost."""
    if settings.edge_address:
        probe.tls_context(settings.ca_bundle)


def teardown_locked(settings: TeardownSettings, subdomain: str, clients: Clients,
                    reporter: Reporter) -> TeardownReport:
    """Teardown for a caller that holds the name's lock already (gc)."""
    # Cloudflare is asked only in the DNS step: an unreachable Cloudflare must not keep the page online.
    held, unreadable = holding(settings.survey, clients, subdomain, dns=False)
    outcomes: list[Outcome] = []
    with reporter.step("route"):
        _route(settings.survey, held, clients.routes, outcomes, unreadable.get(ROUTES))
    with reporter.step("service"):
        _attempt(outcomes, "service", subdomain, lambda: _service(clients, held), SWARM in unreadable)
    with reporter.step("configs"):
        for name in held.configs:
            _attempt(outcomes, "config", name, partial(clients.docker.remove_config, name))
        if not held.configs:
            outcomes.append(Outcome("config", f"{subdomain}-*", FAILED if SWARM in unreadable else ABSENT,
                                    unreadable.get(SWARM, "")))
    with reporter.step("directory"):
        _directory(settings.survey, held, clients.binds, outcomes, unreadable.get(DIRECTORIES))
    clients.dns.limit(settings.dns_deadline)  # every Cloudflare call from here on, the proof's too
    try:
        with reporter.step("dns"):
            _dns(settings.survey.domain, held, clients, outcomes)
        with reporter.step("prove"):
            after, still_unreadable = holding(settings.survey, clients, subdomain)
            left = [f"{kind} {name}" for kind, name in after.resources()]
            said = {o.detail for o in outcomes if o.failed}  # a reason a failed step gave already is not repeated
            left += [f"{system}: not checked" + ("" if why in said else f" ({why})")
                     for system, why in still_unreadable.items()]
            state, evidence = page_offline(settings, held, clients.edge)
    finally:
        clients.dns.limit(None)
    return TeardownReport(subdomain, held.fqdn, tuple(outcomes), tuple(left), evidence, state)


def _attempt(outcomes: list[Outcome], resource: str, name: str, remove: Callable[[], object],
             unreadable: bool = False) -> None:
    """Run one removal; record removed/absent/kept, or failed with the reason (the other steps still run)."""
    try:
        result = remove()
    except GraphsiteError as exc:
        outcomes.append(Outcome(resource, name, FAILED, exc.message.splitlines()[0]))
        return
    if isinstance(result, str):
        outcomes.append(Outcome(resource, name, Did(result)))
    else:
        outcomes.append(Outcome(resource, name, REMOVED if result else (FAILED if unreadable else ABSENT)))


def _left_alone(store: RouteStore | BindStore, path: Path, ours: bool, foreign: str) -> str:
    """Return why teardown leaves `path` alone: a symbolic link (graphsite makes none, so it never follows nor
    removes one), or `foreign` for something there that is not `ours`; empty when it is to be removed."""
    return files.kept(store.link(path)) or (foreign if not ours and store.exists(path) else "")


def _route(places: SurveySettings, held: Holding, routes: RouteStore, outcomes: list[Outcome],
           not_read: str | None) -> None:
    path = route_path(places.dynamic_dir, held.name)
    stamp = held.route_file[0] if held.route_file else None
    owner = claim(stamp, held.name, places.domain) if stamp is not None else None
    if owner == Claim.OTHER:  # another configuration's live route: never an invitation to remove it
        kept = f"{whose(owner, stamp)}: left in place, and Traefik still reads it"
    elif stamp is not None:  # an older graphsite's nothing of the name proves ours, or a stamp that proves nothing
        kept = (f"{whose(owner, stamp)}: left in place, and Traefik still reads it; if it was {held.name}'s, "
                f"remove it by hand (`rm {shlex.quote(str(path))}`)")
    else:
        # one edited by hand is no longer provably graphsite's: kept, even when it was the deployment's (gc keeps
        # the whole deployment then; a teardown asked for by name removes the rest)
        kept = (f"not a route graphsite wrote as it stands (not graphsite's shape: edited by hand, or someone "
                f"else's): left in place, and Traefik still reads it; remove it by hand "
                f"(`rm {shlex.quote(str(path))}`) if it was {held.name}'s")
    _remove_file_kind(outcomes, ("route", "temporary route"), routes, path, held.route is not None, kept,
                      routes.remove, held.temporaries, routes.remove, not_read)


def _service(clients: Clients, held: Holding) -> object:
    if clients.swarm is None:  # Docker could not be reached when the command started
        raise DeployError(clients.unavailable.get(SWARM, "Docker: the daemon could not be reached"),
                          hint="run the command again once the Docker daemon answers")
    if held.deployment is None:
        current = clients.docker.service(held.name)
        return KEPT if current is not None else False  # a service graphsite did not make stays
    return clients.docker.remove_service(held.name)


def _directory(places: SurveySettings, held: Holding, binds: BindStore, outcomes: list[Outcome],
               not_read: str | None) -> None:
    directory, stamp = bind_dir(places.bind_root, held.name), held.directory_stamp
    # removed only while its marker is still the stamp the survey judged this name's
    _remove_file_kind(outcomes, ("directory", "temporary directory"), binds, directory, stamp is not None,
                      "graphsite did not make it", lambda path: stamp is not None and binds.remove(path, stamp),
                      held.temporary_dirs, lambda path: binds.remove_temporary(path, held.temporary_stamp(path)),
                      not_read)


def _remove_file_kind(outcomes: list[Outcome], kinds: tuple[str, str], store: RouteStore | BindStore, path: Path,
                      ours: bool, foreign: str, remove: Callable[[Path], bool], temporaries: Iterable[Path],
                      remove_temporary: Callable[[Path], bool], not_read: str | None) -> None:
    """Remove the route file or page directory at `path` unless it is left alone (a link, or not `ours`), then
    the temporaries a killed write of it left. When its system could not be read (`not_read` says why), nothing
    is decided: whose it is, or whether it is there, is not known."""
    kind, temporary_kind = kinds
    if not_read is not None:
        outcomes.append(Outcome(kind, str(path), FAILED, not_read))
        return
    kept = _left_alone(store, path, ours, foreign)
    if kept:
        outcomes.append(Outcome(kind, str(path), KEPT, kept))
    else:
        _attempt(outcomes, kind, str(path), partial(remove, path))
    for temporary in temporaries:
        _attempt(outcomes, temporary_kind, str(temporary), partial(remove_temporary, temporary))


def _dns(domain: str, held: Holding, clients: Clients, outcomes: list[Outcome]) -> None:
    try:  # an unreachable Cloudflare fails here, the record step only
        found = [r for r in clients.dns.records(held.fqdn) if r.type == "A"]
        mine = [r for r in found if record_owner(r, domain) == held.name]
        for record in mine:
            _attempt(outcomes, "record", f"A {record.name} id={record.id}", partial(clients.dns.delete, record.id))
        foreign = [r for r in found if r not in mine]
        outcomes += [Outcome("record", f"A {r.name} id={r.id}", KEPT, whose(r.claim(domain), r.stamp))
                     for r in foreign]
        if not mine and not foreign:
            outcomes.append(Outcome("record", f"A {held.fqdn}", ABSENT))
    except GraphsiteError as exc:
        outcomes.append(Outcome("record", f"A {held.fqdn}", FAILED, exc.message.splitlines()[0]))


class PageState(StrEnum):
    """What the edge says of the page after a teardown."""

    OFFLINE = "offline"  # the edge answered, and not with the page
    SERVED = "served"  # the edge still serves the page
    NOT_PROVEN = "not proven"  # the edge could not be asked, or never answered


def page_offline(settings: TeardownSettings, held: Holding, edge: EdgePort,
                 wait: float = PAGE_WAIT) -> tuple[PageState, str]:
    """Return what the edge says of the page, with the evidence; the edge gets `wait` seconds to drop the route.
    Only an HTTP answer that is not the page proves it offline: an edge that cannot be asked proves nothing."""
    address = settings.edge_address
    if not address:
        return PageState.NOT_PROVEN, "not asked: verify.origin_address and verify.resolve_https are empty"
    sha256 = held.deployment.sha256 if held.deployment else ""
    deadline = time.monotonic() + wait
    while True:
        try:
            result = edge.fetch("https", held.fqdn, address, ca_bundle=settings.ca_bundle, timeout=3.0)
        except GraphsiteError as exc:  # the CA bundle (check_edge loaded it before the teardown) cannot load now
            return PageState.NOT_PROVEN, (f"not asked: {exc.message.splitlines()[0]}: the page's absence is not "
                                          "proven")
        if result.error and "CERTIFICATE_VERIFY_FAILED" in result.error:
            # Traefik answers a name it no longer routes with its default certificate: ask again, unverified,
            # for the HTTP answer (only whether it is the page counts, never its content)
            result = edge.fetch("https", held.fqdn, address, timeout=3.0, insecure=True)
        # a 401 is a router that still answers for the name: a private page's route not yet dropped
        served = not result.error and (result.status == 401 or result.status == 200 and (
            not sha256 or hashlib.sha256(result.body).hexdigest() == sha256))
        if not result.error and not served:
            return PageState.OFFLINE, f"{result.url}: HTTP {result.status}: the page is no longer served"
        if time.monotonic() > deadline:
            if result.error:
                return PageState.NOT_PROVEN, (f"{result.url}: {result.error}: the edge could not be asked, so "
                                              "the page's absence is not proven")
            return PageState.SERVED, (f"{result.url}: HTTP {result.status}: the edge still serves the page after "
                                      f"{wait:.0f} s")
        time.sleep(0.3)
