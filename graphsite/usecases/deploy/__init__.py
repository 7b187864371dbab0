"""`graphsite deploy`: name, build, plan, then ensure each resource in order; on any failure or signal, undo
what this run started, once, and prove it.

Each step registers its compensation *before* its effect: an effect whose answer was lost (a timeout, a 5xx, a
signal) is looked up by name when the undo runs, and removed only if graphsite made it for this run.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from graphsite.codes import CheckStatus
from graphsite.config import Config
from graphsite.errors import ChangedSince, DeployError, GraphsiteError, Stopped
from graphsite.labels import subdomain_of
from graphsite.publisher import bind, files, probe, route
from graphsite.publisher.access import Access, decide_access, mark
from graphsite.publisher.check import CheckResult
from graphsite.publisher.clients import DNS, ROUTES, SWARM, Clients
from graphsite.publisher.deployment import (
    NEEDS_PROOF,
    Claim,
    Deployment,
    Leftover,
    PageDirectory,
    Stamp,
    adopted,
    bind_dir,
    claim,
    route_path,
    whose,
    whose_now,
)
from graphsite.publisher.lock import subdomain_lock
from graphsite.publisher.names import check_length, draw_name, fqdn
from graphsite.publisher.outcomes import CREATED, REPLACED, UNCHANGED, UPDATED, Did, Outcome
from graphsite.publisher.plan import ConfigFile, DeployPlan, make_plan
from graphsite.publisher.ports import BindStore, DnsPort, Reporter, RouteStore, SwarmPort
from graphsite.publisher.record_actions import apply_record, restore_record
from graphsite.publisher.records import RecordDecision, decide_record
from graphsite.publisher.swarm import Expected, Service, ServiceOutcome, config_labels, runs, service_verdict
from graphsite.publisher.undo import Undo
from graphsite.publisher.versions import Held, Switch, dropped_line, read_versions
from graphsite.signals import Interrupted, interruptible, last_chance
from graphsite.usecases.deploy import versions
from graphsite.usecases.diff import LiveChanges, LivePage, deployed_page
from graphsite.usecases.doctor import WARN, preflight, preflight_error
from graphsite.usecases.inventory import Answers, Foreign, Holding, SurveySettings, holding, known
from graphsite.usecases.inventory import survey as survey_of
from graphsite.usecases.verify import VerifySettings, reads_content, run_checks

if TYPE_CHECKING:  # the builder is imported only by a deploy that builds
    from graphsite.builder.model import Report


@dataclass(frozen=True)
class DeployRequest:
    source: Path
    subdomain: str | None = None
    ttl: timedelta | None = None
    content: str | None = None
    dry_run: bool = False
    force: bool = False
    keep_on_failure: bool = False
    verify: bool = True
    wait: float = 0.0
    private: bool = False
    public: bool = False
    auth_file: Path | None = None
    new_password: bool = False
    # a kept version to make live instead of building `source` (rollback): read under the name's lock, given
    # what the survey there found for the name
    version: Callable[[Clients, Holding], Page] | None = None


@dataclass(frozen=True)
class Page:
    """What a deploy makes live: the page built from the source, or a kept version's."""

    html: str
    sha256: str
    title: str
    date: str = ""  # the source's front-matter date
    content: str = ""  # how a kept version reaches Caddy: its deployment's mode ('' : the request's or the config's)


@dataclass(frozen=True)
class DeployResult:
    plan: DeployPlan
    outcomes: tuple[Outcome, ...]
    dns: str  # the DNS step in one line: CREATED id=… / EXISTS id=… / REPLACED …
    checks: tuple[CheckResult, ...] = ()
    dry_run: bool = False
    access: Access = Access()
    changes: LiveChanges | None = None  # against the live page; None on a first deploy or a rollback

    @property
    def content_checked(self) -> bool:
        """False when verify ran but could not read the page: private, with credentials this run did not make."""
        return not self.checks or reads_content(self.plan.deployment, self.access.credentials)

    def as_json(self) -> dict[str, Any]:
        plan = self.plan
        deployment = plan.deployment
        made = {"access": self.access.as_json()} if self.access.credentials and not self.dry_run else {}
        return {**made, "private": self.access.private, "subdomain": plan.subdomain, "fqdn": plan.fqdn,
                "url": plan.url, "sha256": plan.sha256,
                "title": deployment.title, "content": plan.content_mode, "created": deployment.created,
                "expires": deployment.expires or None, "dry_run": self.dry_run, "dns": self.dns,
                "service": plan.service.describe(), "route": str(plan.route_path),
                "resources": [o.as_json() for o in self.outcomes], "checks": [c.as_json() for c in self.checks]}




def requested_subdomain(config: Config, name: str) -> str:
    """Return the subdomain `--subdomain NAME` asks for (NAME alone or its fqdn), when a deploy can use it."""
    return check_length(subdomain_of(name, config.site.domain, what="--subdomain"))


def choose_subdomain(config: Config, request: DeployRequest, clients: Clients, *,
                     token: Callable[[int], str] = secrets.token_hex) -> str:
    """Return the requested subdomain, or a fresh random one no service, route or record uses."""
    if request.subdomain:
        return requested_subdomain(config, request.subdomain)

    def taken(name: str) -> bool:  # a candidate's look, before its lock: the run decides on the survey under it
        return (clients.docker.service(name) is not None
                or clients.routes.exists(route_path(config.deploy.dynamic_dir, name))
                or bool(clients.dns.records(fqdn(name, config.site.domain))))

    return draw_name(config.site.prefix, taken, token=token)


def deploy(config: Config, request: DeployRequest, clients: Clients, reporter: Reporter) -> DeployResult:
    """Deploy the page of `request.source`; return what was done, the DNS line and the checks. SIGINT, SIGTERM
    and SIGHUP undo the run like any failure, then raise Stopped. Progress goes to `reporter`."""
    try:
        with interruptible():
            report = _checked(config, request, reporter)
            with reporter.step("name"):
                subdomain = choose_subdomain(config, request, clients)
            reporter.info(f"  subdomain {subdomain}")
            if request.dry_run:
                return _dry_run(config, request, clients, subdomain, reporter, report)
            with subdomain_lock(config.deploy.lock_dir, subdomain, wait=request.wait):
                return _run(config, request, clients, subdomain, reporter, report)
    except Interrupted as stop:
        what = {"kept": "what it had made was kept (--keep-on-failure): see above",
                "live": "the new version was already live; its old content may be left for teardown or the next "
                        "deploy",
                }.get(getattr(stop, "outcome", ""), "what it had made was undone (see above)")
        verb = "rollback" if request.version is not None else "deploy"
        raise Stopped(f"{verb} stopped by {stop.name}; {what}", signum=stop.signum) from None


def _checked(config: Config, request: DeployRequest, reporter: Reporter) -> Report | None:
    """Return the report of `request.source`, read and checked, not rendered yet (its page notes what it changes
    against the live one, which the survey finds); None for a rollback, whose page is a kept version. First of
    all: a report that does not build fails before any system is asked anything, the name's look included."""
    if request.version is not None:
        return None
    from graphsite.usecases.build import checked_report  # the builder, only for a deploy that builds

    with reporter.step("build"):
        return checked_report(request.source, config=config)


@dataclass(frozen=True)
class _Prepared:
    plan: DeployPlan
    decision: RecordDecision
    current: Service | None  # the service of a previous version, if any
    access: Access
    seen: Holding  # what the plan step's survey found for the name: every step decides on it
    changes: LiveChanges | None = None
    # whether a resource of the name proved it this configuration's before the run made anything (its own
    # resources prove nothing): what names no domain (an older graphsite's stamp, an unfinished write) is
    # taken over, relabelled or removed only then (`adopted`)
    proven: bool = False
    held: Held | None = None  # the versions the bind directory held when the plan read it (bind mode only)
    switch: Switch | None = None  # a redeploy to the other content mode: the former mode's versions it drops
    force: bool = False  # --force: the DNS step may replace a record graphsite did not make (decided again there)

    @property
    def answers(self) -> Answers:
        """Return what the systems answered the plan step's survey."""
        assert self.seen.answers is not None, "the plan step surveys the name with every system it decides on"
        return self.seen.answers


def _run(config: Config, request: DeployRequest, clients: Clients, subdomain: str, reporter: Reporter,
         report: Report | None) -> DeployResult:
    prepared = _prepare(config, request, clients, subdomain, reporter, report)
    plan, undo = prepared.plan, Undo()
    try:
        outcomes, dns_line = _apply(prepared, clients, undo, config, reporter)
        checks = _verify(config, plan, clients, reporter, prepared.access.credentials) if request.verify else ()
    except (Exception, KeyboardInterrupt) as failure:  # whatever failed, even a bug or a signal: undo it
        if request.keep_on_failure:
            reporter.info(f"  kept for inspection (--keep-on-failure): {', '.join(undo.pending()) or 'nothing'}")
            reporter.info(f"  remove it with: graphsite teardown {subdomain}")
        else:
            _undo(config, clients, prepared, undo, reporter)
        if isinstance(failure, Interrupted):
            failure.outcome = "kept" if request.keep_on_failure else "undone"
        raise
    try:
        with reporter.step("remove old content"):
            outcomes += _remove_old_content(config, plan, clients, reporter, prepared)
    except Interrupted as stop:
        stop.outcome = "live"
        raise
    return DeployResult(plan, tuple(outcomes), dns=dns_line, checks=checks, access=prepared.access,
                        changes=prepared.changes)


def _undo(config: Config, clients: Clients, prepared: _Prepared, undo: Undo, reporter: Reporter) -> None:
    """Run the undo once; a second signal leaves at once, saying what is left and how to remove it."""
    name = prepared.plan.subdomain

    def left() -> str:
        pending = "; ".join(undo.pending()) or "nothing"
        return f"not undone: {pending}. Remove it with: graphsite teardown {name}"

    with last_chance(left):
        for line in undo.run():
            reporter.info(f"  {line}")
        if prepared.current is None:  # a new deployment: prove that nothing of it is left, as teardown does
            try:
                held, unreadable = holding(SurveySettings.from_config(config), clients, name)
            except GraphsiteError as exc:
                reporter.info(f"  proof: could not look again: {exc.message.splitlines()[0]}")
                return
            found = [f"{kind} {what}" for kind, what in held.resources()]
            found += [f"{system} not checked: {why}" for system, why in unreadable.items()]
            if found:
                reporter.info(f"  proof: left: {', '.join(found)}; remove it with: graphsite teardown {name}")
            else:
                reporter.info(f"  proof: nothing of {name} is left")


def _dry_run(config: Config, request: DeployRequest, clients: Clients, subdomain: str, reporter: Reporter,
             report: Report | None) -> DeployResult:
    prepared = _prepare(config, request, clients, subdomain, reporter, report)
    if prepared.switch is not None:  # what a run says once the page is live
        dropped = prepared.switch.dropped
    else:
        dropped = versions.falling_off(config, prepared.plan, clients, prepared.held,
                                       prepared.answers.configs) if prepared.current else ()
    for version in dropped:
        reporter.info(f"  {dropped_line(version, config.deploy.keep_versions, prepared.switch, would=True)}")
    outcomes = tuple(o.planned() for o in survey(prepared, clients, config.site.domain))
    dns = {"create": "would create", "restamp": "would update", "replace": "would replace"}.get(
        prepared.decision.action, UNCHANGED)
    return DeployResult(prepared.plan, outcomes, dns=dns, dry_run=True, access=prepared.access,
                        changes=prepared.changes)


def _prepare(config: Config, request: DeployRequest, clients: Clients, subdomain: str, reporter: Reporter,
             report: Report | None) -> _Prepared:
    """Survey, render (or read the version rolled back to) and plan; refuse (before anything is made) what the
    deploy must not do. `report`: the source's, read and checked (None for a rollback)."""
    if request.verify:
        probe.tls_context(config.verify.ca_bundle)
    changes: LiveChanges | None = None
    live: LivePage | None = None  # a rollback's version is read by request.version: no page to compare with
    with reporter.step("survey"):  # a system that cannot be read fails here, in its own words
        # the one look at what the systems hold for the name, under its lock: the live page the page compares
        # with, the version rolled back to, and every decision of the plan are made on this one answer
        seen = survey_of(SurveySettings.from_config(config), clients, name=subdomain, required=_DECIDED_ON)
        held_now = seen.holdings[subdomain]
        answers = held_now.answers
        if answers is None:  # the required systems raise instead: a guard, not a path
            raise DeployError(f"{subdomain}: not every system could be read", hint="run the deploy again")
        current = answers.service
    if report is None:
        assert request.version is not None, "a deploy that builds checked its report first"
        with reporter.step("version"):
            page = request.version(clients, held_now)
    else:
        with reporter.step("render"):  # with what it changes against the live page, for the page's note
            built, changes, live = deployed_page(report, subdomain, config, clients, current)
            page = Page(built.html, built.sha256, built.title, built.report.front.date)
    content = request.content or page.content or config.deploy.content
    with reporter.step("plan"):
        node = clients.docker.node_id() if content == "bind" else ""
        plan = make_plan(config, subdomain, html=page.html, sha256=page.sha256, title=page.title,
                         content=content, now=datetime.now(UTC), ttl=request.ttl, node_id=node)
        # the proof as list, gc and teardown decide it (the survey's), taken before anything is made
        proven = subdomain in seen.proven
        _refuse_foreign(plan, current, config.site.domain, clients, proven, seen.foreign, answers)
        previous = Deployment.from_labels(current.labels) if current is not None else None
        if previous is not None:
            plan = plan.renewing(previous)
        # doctor's cheap checks: Swarm role, network, dynamic directory and every file in it (one file Traefik
        # cannot load blocks every change, this route's included), the middlewares the route uses, who else may
        # change the token file and the directories this run writes in (bind_root with --content bind too);
        # before the versions are read, so that a bind_root that is no directory is named as such
        # and bind_root of a switch from bind mode, whose directory it removes, when anything is there at all
        looked = content
        if previous is not None and previous.content == "bind" and clients.binds.exists(Path(config.deploy.bind_root)):
            looked = "bind"
        checks = preflight(config.replace("deploy", content=looked), clients.docker)
        failed = preflight_error(checks)
        if failed is not None:
            raise failed
        for check in checks:  # e.g. deploy.middlewares defined nowhere, with deploy.undefined_middleware = "warn"
            if check.status == WARN:
                reporter.warn(check.evidence + (f" (fix: {check.fix})" if check.fix else ""))
        # read once: what the plan serves and what the content step keeps are decided from the same answer
        held = versions.read_held(plan, clients)
        switch = versions.switch(config, plan, previous, clients, answers.configs, answers.directory)
        plan = versions.keep_versions(config, plan, previous, clients, page.title, page.date, held,
                                      answers.configs, answers.directory, live)
        access = decide_access(plan.route_path, subdomain, private=request.private, public=request.public,
                               auth_file=request.auth_file, new_password=request.new_password,
                               was_private=previous is not None and previous.access == "private",
                               read=clients.routes.document)
        document = route.route_document(route.RouteSettings.from_config(config), subdomain, plan.fqdn,
                                        users=access.users)
        plan = mark(plan, access, document)
        decision = decide_record(list(answers.records), plan.record, config.site.domain, force=request.force)
        route.check_route(plan.route, plan.route_path)
    return _Prepared(plan, decision, current, access, held_now, changes, proven, held, switch, request.force)


# The systems a deploy decides on: one that cannot be read stops it before anything is made. Not the page
# directories: a config-mode deploy has no use for the name's, so a failed look at it must not stop one. That
# look is kept in the survey's answers all the same (Unread), and whatever decides on the directory raises its
# error: the refusal of a foreign directory, the versions step's proof that it is the deployment's, a switch
# from bind mode. A bind redeploy on a host without it is judged by the versions step, which names the node.
_DECIDED_ON = frozenset({SWARM, ROUTES, DNS})


def _refuse_foreign(plan: DeployPlan, current: Service | None, domain: str, clients: Clients,
                    proven: bool, foreign: tuple[Foreign, ...], answers: Answers) -> None:
    """Refuse to take over a service, a route file or a directory that is not this configuration's deployment
    of this name (one an older graphsite made for it is taken over: the redeploy writes this release's stamp).
    The service, the route file and the page directory are judged as the survey read them (`answers`)."""
    previous = Deployment.from_labels(current.labels) if current is not None else None
    directory = known(answers.directory) if plan.bind_dir else None  # a look that failed refuses here
    if directory is not None and directory.path != plan.bind_dir:  # a guard, not a path: the survey's is the plan's
        raise DeployError(f"{plan.bind_dir} was not looked at (the survey's look is at {directory.path}); nothing "
                          "made", hint="report this, then run the deploy again")
    # a link is never followed, never ours
    for path, target, what in ((plan.route_path, clients.routes.link(plan.route_path), "route file"),
                               (plan.bind_dir, directory.link if directory else None, "page directory")):
        refusal = path and files.refused_link(path, target, what)
        if refusal:
            raise refusal
    if current is not None:
        owner = claim(previous.stamp if previous else None, plan.subdomain, domain)
        if owner != Claim.OURS:
            raise DeployError(f"a Swarm service named {plan.subdomain} exists and is not this configuration's: "
                              f"{whose(owner, previous.stamp if previous else None)}",
                              hint="choose another subdomain; graphsite never changes services it did not make")
    # an older graphsite's route or directory is taken over only when a resource of this name proves it is this
    # configuration's (the one rule: `adopted`)
    for path, what, hint in (
            (plan.route_path, "a route of this configuration",
             "choose another subdomain; graphsite never overwrites routes it did not write"),
            (plan.bind_dir, "this configuration's", "choose another subdomain or another deploy.bind_root")):
        if not path:
            continue
        if path == plan.route_path:
            if path not in answers.routes:
                continue
            stamp = answers.routes[path]
        elif directory is not None and directory.there:
            stamp = directory.stamp
        else:
            continue
        owner = claim(stamp, plan.subdomain, domain)
        if not adopted(owner, proven):
            raise DeployError(f"{path} exists and is not {what}: {whose(owner, stamp)}",
                              hint=_by_hand(plan.subdomain, foreign) if owner in NEEDS_PROOF else hint)


_REMOVE = {"route": "rm {}", "temporary route": "rm {}", "directory": "rm -r {}", "temporary directory": "rm -r {}",
           "config": "docker config rm {}"}


def _by_hand(name: str, foreign: tuple[Foreign, ...]) -> str:
    """Return how to remove, by hand, the resources of `name` whose stamps name no domain and that nothing proves
    this configuration's (graphsite 0.1's whose service is gone): neither deploy nor teardown will."""
    steps = [_REMOVE[f.kind].format(shlex.quote(f.name)) for f in foreign if f.claim in NEEDS_PROOF
             and f.kind in _REMOVE]
    return (f"choose another subdomain; if it is a graphsite 0.1 deployment of yours whose service is gone, "
            f"nothing proves it this configuration's and neither deploy nor teardown removes it: remove it by hand "
            f"(`{'`, `'.join(steps)}`), then deploy {name} again")


def _verify(config: Config, plan: DeployPlan, clients: Clients, reporter: Reporter,
            credentials: tuple[str, str] | None = None) -> tuple[CheckResult, ...]:
    with reporter.step("verify"):
        checks = tuple(run_checks(VerifySettings.from_config(config), plan.deployment, clients, credentials))
        failed = [c for c in checks if c.status == CheckStatus.FAIL]
        if failed:
            raise DeployError("verify: " + "; ".join(f"{c.name}: {c.evidence}" for c in failed),
                              hint="rerun with --keep-on-failure to inspect, then `graphsite verify NAME`")
    return checks


def _remove_old_content(config: Config, plan: DeployPlan, clients: Clients, reporter: Reporter,
                        prepared: _Prepared) -> list[Outcome]:
    """Remove the configs (and a bind directory) the previous version used and the versions that fell off
    deploy.keep_versions; the new one is live already; return the kept versions left in place (KEPT: warned
    about, never a failure of the live deploy). A page config not proven this deployment's stays; what names no
    domain is the previous version's only when the name was proven before the run."""
    directory = bind_dir(config.deploy.bind_root, plan.subdomain)
    proven, switch = prepared.proven, prepared.switch
    left_versions: list[Outcome] = []
    try:
        domain = config.site.domain
        # the configs as the plan read them, not looked up again: the versions dropped are exactly those the plan
        # judged to fall off, and a config that appeared since was judged by nobody (this run's own are the
        # plan's, kept). That read is enough for a config, unlike a bind version (versions.drop_bind_versions
        # reads again): its data cannot change under its name (the name carries its hash), one removed since is a
        # removal that finds nothing, and Docker refuses to remove one a service mounts
        labelled = prepared.answers.configs
        found = read_versions(labelled, plan.deployment, domain)
        mine = {name for name, labels in labelled.items()
                if adopted(claim(Stamp.from_labels(labels), plan.subdomain, domain), proven)}
        old = sorted(mine - {c.name for c in plan.service.configs} - {u.config for u in found.unproven})
        dropped = {v.config: v for v in found.versions}
        for name in old:
            clients.docker.remove_config(name)
            line = dropped_line(dropped[name], config.deploy.keep_versions, switch) if name in dropped else None
            if line:
                reporter.info(f"  {line}")
        if plan.bind_dir is not None:
            left_versions += versions.drop_bind_versions(config, plan, clients, reporter)
        # the previous version's page directory, not one another configuration made for this name (a link there
        # is refused, never followed: bind_stamp does not read through one); looked at right before its removal,
        # which only a deploy in config mode makes (in bind mode it is the live page's: its marker is not read)
        binds = clients.binds
        page_stamp = binds.stamp(directory) if plan.bind_dir is None else None
        previous_page = adopted(claim(page_stamp, plan.subdomain, domain), proven)
        if plan.bind_dir is None and binds.exists(directory) and previous_page and page_stamp is not None:
            # the plan's look at it is not enough: what appeared there since would go with it, unread
            left = versions.unproven_in(config, plan.subdomain, plan.deployment, clients)
            if left:
                raise DeployError(f"{directory} holds what nothing proves the deployment's, put there since this "
                                  f"deploy's plan ({'; '.join(f'{u.config}: {u.why}' for u in left)}); left in place",
                                  hint=f"look at it, then remove {directory} by hand if nothing there is yours")
            binds.remove(directory, page_stamp)
            for version in switch.dropped if switch else ():
                reporter.info(f"  {dropped_line(version, config.deploy.keep_versions, switch)}")
    except GraphsiteError as exc:  # the deployment is live: leftovers are for `teardown`, not a failure
        reporter.warn(f"old content of {plan.subdomain} left in place: {exc.message}")
    return left_versions


def survey(prepared: _Prepared, clients: Clients, domain: str) -> list[Outcome]:
    """Return each resource of the plan and what a deploy would do to it, in a real run's words."""
    plan, outcomes = prepared.plan, []
    existing = prepared.answers.configs
    for item in plan.contents:
        outcomes.append(Outcome("config", item.name, Did(config_change(plan, item, existing.get(item.name), domain,
                                                                  proven=prepared.proven))))
    if plan.bind_dir:
        outcomes.append(Outcome("directory", str(plan.bind_dir),
                                UPDATED if clients.binds.exists(plan.bind_dir) else CREATED))
    current = prepared.current  # what the service step's own look will find, if nothing changes meanwhile
    verdict = service_verdict(current, plan.service, Expected.read(current))
    outcomes.append(Outcome("service", plan.subdomain, _service_did(verdict, plan.subdomain)))
    text = route.dump(plan.route, plan.stamp)
    now = clients.routes.text(plan.route_path)
    outcomes.append(Outcome("route", str(plan.route_path),
                            CREATED if now is None else UNCHANGED if now == text else UPDATED))
    outcomes.append(Outcome("record", f"A {plan.fqdn}", _RECORD_OUTCOME[prepared.decision.action]))
    return outcomes


_RECORD_OUTCOME = {"create": CREATED, "exists": UNCHANGED, "restamp": UPDATED, "replace": REPLACED}


def _apply(prepared: _Prepared, clients: Clients, undo: Undo, config: Config,
           reporter: Reporter) -> tuple[list[Outcome], str]:
    plan, swarm = prepared.plan, clients.docker
    with reporter.step("content"):
        existing = prepared.answers.configs  # as the plan judged them: ensure_config looks for its own name again
        configs = {item.name: _ensure_config(plan, item, existing.get(item.name), swarm, undo, config.site.domain,
                                             prepared.proven) for item in plan.contents}
        directory = []
        if plan.bind_dir:
            assert prepared.held is not None
            directory.append(_ensure_directory(plan, clients.binds, undo, prepared.proven, prepared.held,
                                               prepared.seen, known(prepared.answers.directory),
                                               first=prepared.current is None))
        for name in _ensure_mounted(plan, swarm, undo):  # removed since the plan, made again
            configs[name] = Outcome("config", name, CREATED)
        outcomes = [*configs.values(), *directory]
    with reporter.step("service"):
        if prepared.current is None:
            undo.push(f"service {plan.subdomain}", f"removed service {plan.subdomain}",
                      partial(_remove_service_made, swarm, plan))
        elif not runs(prepared.current, plan.service):  # a redeploy: the previous version serves again
            undo.push(f"service {plan.subdomain}", f"restored the previous version of service {plan.subdomain}",
                      lambda: swarm.restore_previous(plan.service))
        # an identical redeploy changes nothing here, so there is nothing to restore: Swarm's PreviousSpec is the
        # version before the live one, and putting it back would roll the live page back
        # ensure_service's own look (the one before its write) must find the service the plan read: a new one is
        # only created (one made since, by a run of another configuration, is left alone; the undo removes only a
        # service with this run's stamp), and a redeploy rolls only the service it judged, never one made since
        # by another host's teardown and deploy, nor makes one again after another host removed it; its update
        # carries the version the plan read, so one that another host redeployed since is refused, not overwritten
        # (CHANGED: its Spec is no longer the one read; a version only Swarm's own bookkeeping moved is no change)
        changed = swarm.ensure_service(plan.service, Expected.read(prepared.current))
        if changed is ServiceOutcome.CHANGED:  # nothing of this run's there: its undo has nothing to put back
            undo.settle(f"service {plan.subdomain}", "left as the other change made it")
        outcomes.append(Outcome("service", plan.subdomain, _service_did(changed, plan.subdomain)))
    with reporter.step("converge"):
        swarm.wait_converged(plan.service, config.deploy.converge_timeout)
    with reporter.step("route"):
        outcomes.append(_ensure_route(prepared, clients.routes, undo))
    with reporter.step("dns"):
        line, outcome = _ensure_record(prepared, clients, undo, config.site.domain)
        outcomes.append(outcome)
    reporter.info(f"  {line}")
    return outcomes, line


def _service_did(outcome: ServiceOutcome, name: str) -> Did:
    """Return what the service step did to service `name`, given ensure_service's `outcome`; raise DeployError
    when the service was left as it is because it is not what the plan read (every outcome is one or the other:
    one added to ServiceOutcome and not here fails mypy, not a user)."""
    match outcome:
        case ServiceOutcome.CREATED:
            return CREATED
        case ServiceOutcome.UPDATED:
            return UPDATED
        case ServiceOutcome.UNCHANGED:
            return UNCHANGED
        case ServiceOutcome.EXISTS:
            raise DeployError(f"a Swarm service named {name} appeared since this deploy's plan",
                              hint="another graphsite configuration may deploy this name: choose another one")
        case ServiceOutcome.GONE | ServiceOutcome.ANOTHER | ServiceOutcome.CHANGED:
            what, left, see = _NOT_AS_READ[outcome]
            raise DeployError(f"the Swarm service {name} {what} since this deploy's plan read it{left}",
                              hint=f"run `graphsite list {name}` to see {see}, then deploy again")
        case _:
            assert_never(outcome)


# What the service step says of a service that is not the one the plan read: what happened, what was left, and
# what `graphsite list NAME` shows.
_NOT_AS_READ = {
    ServiceOutcome.GONE: ("was removed", "; left as it is", "what holds the name"),
    ServiceOutcome.ANOTHER: ("was replaced by another service", "; left as it is", "what holds the name"),
    ServiceOutcome.CHANGED: ("changed", " (another deploy or rollback, or `docker service update`); this run's "
                             "update was refused and the service left as it is", "what it serves now"),
}


def _ensure_config(plan: DeployPlan, item: ConfigFile, before: dict[str, str] | None, swarm: SwarmPort, undo: Undo,
                   domain: str, proven: bool) -> Outcome:
    """Create the config; one an earlier deploy made (the same data) is kept and given this deploy's stamp."""
    change = config_change(plan, item, before, domain, proven=proven)
    if change == CREATED:
        return Outcome("config", item.name, CREATED if _create_config(plan, item, swarm, undo) else UNCHANGED)
    if change == UPDATED and before is not None:
        undo.push(f"labels of config {item.name}", f"put back the previous labels of config {item.name}",
                  partial(swarm.relabel_config, item.name, before))
        swarm.relabel_config(item.name, config_labels(plan.stamp, item))
    return Outcome("config", item.name, Did(change))


def _create_config(plan: DeployPlan, item: ConfigFile, swarm: SwarmPort, undo: Undo) -> bool:
    """Create config `item` unless one of its name is there (ensure_config's own look); return True when it was
    created. A kept version has no data here to make it from: it was removed since the plan listed it."""
    if not item.data:
        raise DeployError(f"config {item.name}, a kept version, was removed while this deploy ran",
                          hint=f"deploy again; `graphsite history {plan.subdomain}` lists the versions kept")
    # registered first: a create whose answer is lost is still undone
    undo.push(f"config {item.name}", f"removed config {item.name}", partial(_remove_config_made, swarm, plan, item))
    return swarm.ensure_config(plan.stamp, item)


def _ensure_mounted(plan: DeployPlan, swarm: SwarmPort, undo: Undo) -> list[str]:
    """Look up every config the service mounts, by name, right before the service is written, and return those
    made again. The content step decided on the plan's read: a config removed since would be mounted missing (the
    service write fails) and a kept version would be served by nothing; the page's and the Caddyfile are made
    again, a kept version fails the run (`_create_config`)."""
    there = swarm.configs_named([item.name for item in plan.contents])
    return [item.name for item in plan.contents
            if item.name not in there and _create_config(plan, item, swarm, undo)]


# The undo removes only what carries this run's stamp: a resource of that name this run did not make (a config
# without graphsite's labels, a service another configuration made meanwhile) is not the run's to remove.

def _remove_config_made(swarm: SwarmPort, plan: DeployPlan, item: ConfigFile) -> bool:
    labels = swarm.labelled_configs(plan.subdomain).get(item.name)
    return labels is not None and Stamp.from_labels(labels) == plan.stamp and swarm.remove_config(item.name)


def _remove_service_made(swarm: SwarmPort, plan: DeployPlan) -> bool:
    current = swarm.service(plan.subdomain)
    made = current is not None and Stamp.from_labels(current.labels) == plan.stamp
    return made and swarm.remove_service(plan.subdomain)


def config_change(plan: DeployPlan, item: ConfigFile, before: dict[str, str] | None, domain: str, *,
                  proven: bool) -> str:
    """Return what the deploy does to config `item`, given the labels of the one that exists (None: none):
    created; updated when it carries another stamp than the deploy's, an earlier deploy's of this configuration
    (another expiry) or an older graphsite's when the name was `proven` (`adopted`), which a later release may
    no longer read; else unchanged. Another configuration's config is never touched."""
    if before is None:
        return CREATED
    stale = before != config_labels(plan.stamp, item)
    return UPDATED if stale and adopted(claim(Stamp.from_labels(before), plan.subdomain, domain), proven) \
        else UNCHANGED


def _left_by_a_killed_run(found: dict[str, dict[Path, Leftover]], name: str, proven: bool) -> list[Path]:
    """Return the temporaries of `name` that are this configuration's (`adopted`, with the proof decided before
    the run made anything): an unfinished write of another configuration sharing the directory is never one."""
    return [path for path, left in found.get(name, {}).items() if adopted(left.claim, proven)]


def _ensure_directory(plan: DeployPlan, binds: BindStore, undo: Undo, proven: bool, planned: Held,
                      seen: Holding, surveyed: PageDirectory, *, first: bool) -> Outcome:
    """Make or update the page directory, unless it is not as the plan's survey found it (`surveyed`); first
    remove the half-filled ones a killed run of the name left (as the survey `seen` judged them: this
    configuration's, or adopted beside a proven resource)."""
    directory = plan.bind_dir
    assert directory is not None
    # whose it is was judged on the survey's look (_refuse_foreign), taken before the render: looked at again
    # right before the write, and the write itself (binds.ensure) compares what it opens with that look too
    refusal = bind.changed_since(surveyed, binds.page_directory(directory), plan.fqdn.partition(".")[2])
    if refusal is not None:
        raise refusal
    for stale in seen.temporary_dirs:  # while each still holds the marker it was judged by
        binds.remove_temporary(stale, seen.temporary_stamp(stale))
    old = binds.page(directory)
    resource = f"directory {directory}" if not surveyed.there else f"page in {directory}"
    if not surveyed.there:
        undo.push(resource, f"removed directory {directory}", lambda: binds.remove(directory, plan.stamp))
    elif old is not None:  # a redeploy in bind mode rewrites the page in place: keep the old one to put back
        # only beside the deployment's marker: the directory may be swapped for another's after the write too
        ours = [stamp for stamp in (plan.stamp, surveyed.stamp) if stamp is not None]
        undo.push(resource, f"put back the previous page in {directory}",
                  partial(binds.put_back_page, directory, old, ours))
    try:
        created = binds.ensure(directory, plan.page, plan.stamp, plan.sha256, surveyed)
    except ChangedSince:  # swapped since the look above (ensure's own look): nothing of this run's there
        undo.settle(resource, "left as the other change made it")
        raise
    if plan.page_labels:  # the page is kept as a version too, v/<sha12>/
        versions.keep_page(plan, binds, undo, proven, planned, first=first)
    return Outcome("directory", str(directory), CREATED if created else UPDATED)


def _ensure_route(prepared: _Prepared, routes: RouteStore, undo: Undo) -> Outcome:
    """Write the route file, unless it is not as the plan's survey judged it; first remove the half-written ones
    a killed run of the name left (as the survey judged them)."""
    plan, proven = prepared.plan, prepared.proven
    path, domain = plan.route_path, plan.fqdn.split(".", 1)[1]
    old = routes.text(path)  # read right before the write: what the undo puts back is what the write replaced
    _refuse_changed_route(plan, old, routes, prepared.answers.routes, domain)

    def remove() -> bool:  # only the route this run wrote (its stamp), and its own temporaries
        # looked up again, after the write: a write cut short by the failure leaves a temporary the survey
        # could not have seen
        removed = routes.stamp(path) == plan.stamp and routes.remove(path)
        for temporary in _left_by_a_killed_run(routes.temporaries(path.parent, domain), plan.subdomain, proven):
            removed = routes.remove(temporary) or removed
        return removed

    def put_back() -> bool:
        assert old is not None
        if routes.text(path) == old:
            return False
        routes.put_back(path, old)
        return True

    undo.push(f"route {path}", f"removed route {path}" if old is None else f"put back the previous route {path}",
              remove if old is None else put_back)
    for stale in prepared.seen.temporaries:
        routes.remove(stale)
    written = routes.write(path, plan.route, plan.stamp)
    return Outcome("route", str(path), (UPDATED if old is not None else CREATED) if written else UNCHANGED)


def _refuse_changed_route(plan: DeployPlan, text: str | None, routes: RouteStore,
                          surveyed: Mapping[Path, Stamp | None], domain: str) -> None:
    """Raise DeployError when the route file, whose `text` was read right before the write, is not as the plan's
    survey found it (`surveyed`): there or not, with the same stamp. Whose it is was judged on that read (a
    route that is not this configuration's is refused there); one written or changed since, by another
    configuration sharing the directory, would be overwritten unjudged."""
    path = plan.route_path
    there = text is not None or routes.exists(path)  # a file that is no UTF-8 text has no text, but is there
    stamp = route.stamp_of_text(text, plan.subdomain) if text is not None else None
    if (there, stamp) == (path in surveyed, surveyed.get(path)):
        return
    raise files.changed_since(path, "file", "deploy.dynamic_dir", was_there=path in surveyed,
                              now=whose_now(stamp, plan.subdomain, domain) if there else None)


def _ensure_record(prepared: _Prepared, clients: Clients, undo: Undo, domain: str) -> tuple[str, Outcome]:
    plan, dns = prepared.plan, clients.dns
    wanted = plan.record

    def remove_mine() -> bool:
        """Delete the records this run made: named like the plan's, with its comment (graphsite's stamp)."""
        mine = [r for r in dns.records(wanted.name) if r.type == "A" and r.comment == wanted.comment]
        return sum(dns.delete(r.id) for r in mine) > 0

    # A create's undo removes only the records that carry this run's stamp, so it is registered as the step starts,
    # before the look (wherever the step stops, the undo looks for such a record); the others put back the record
    # the look confirms, so they wait for it: a record changed since must not be put back as the plan read it.
    if prepared.decision.action == "create":
        undo.push(f"record A {wanted.name}", f"deleted record A {wanted.name}", remove_mine)
    decision = _record_decision_now(prepared, dns, domain)
    if decision.action == "replace" and decision.existing is not None:
        previous = decision.existing
        undo.push(f"record A {wanted.name}", f"pointed A {wanted.name} back at {previous.content}",
                  lambda: restore_record(dns, previous, remove_mine))
    elif decision.action == "restamp" and decision.existing is not None:
        earlier = decision.existing
        undo.push(f"record A {wanted.name}", f"put back the previous comment of A {wanted.name}",
                  lambda: bool(dns.restamp(earlier, earlier.comment)))
    line, _ = apply_record(dns, wanted, decision)
    return line, Outcome("record", f"A {plan.fqdn}", _RECORD_OUTCOME[decision.action])


def _record_decision_now(prepared: _Prepared, dns: DnsPort, domain: str) -> RecordDecision:
    """Return the DNS step's decision made again on the name's records read right before the write; raise when
    it is not the plan's. The plan decided on the survey's read: a record added since would get graphsite's beside
    it (two A records, round-robin to another address), and --force would delete a record by a stale id."""
    planned, wanted = prepared.decision, prepared.plan.record
    found = dns.records(wanted.name)  # a look that fails is the run's failure, in the DNS port's words
    try:
        now = decide_record(found, wanted, domain, force=prepared.force)
    except DeployError as refused:
        raise DeployError(f"{refused.detail} (found right before the write; this deploy's plan was to "
                          f"{_RECORD_PLAN[planned.action]})", hint=refused.hint) from None
    if now != planned:
        raise DeployError(f"DNS: the records of {wanted.name} changed since this deploy's plan read them: it was to "
                          f"{_said(planned)}, it would now {_said(now)}; nothing was written",
                          hint=f"look at the records of {wanted.name} in Cloudflare, then deploy again")
    return now


_RECORD_PLAN = {"create": "create the A record", "exists": "keep graphsite's A record",
                "restamp": "restamp an earlier deploy's A record", "replace": "replace the A record"}


def _said(decision: RecordDecision) -> str:
    """Return what `decision` does, in words, with the record it acts on (its id, address and comment)."""
    record = decision.existing
    on = f" id={record.id} ({record.content}, comment {record.comment!r})" if record is not None else ""
    return f"{_RECORD_PLAN[decision.action]}{on}"
