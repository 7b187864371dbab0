"""`graphsite deploy`: name, build, plan, then ensure each resource in order; undo this run's work on failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphsite import output
from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError
from graphsite.labels import check_label
from graphsite.publisher import bind, probe, route
from graphsite.publisher.clients import Clients
from graphsite.publisher.lock import subdomain_lock
from graphsite.publisher.names import draw_name, fqdn
from graphsite.publisher.plan import DeployPlan, bind_dir, carry_over, make_plan
from graphsite.publisher.records import apply_record, decide_record
from graphsite.publisher.verify import CheckResult, Target, run_checks


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


@dataclass(frozen=True)
class Action:
    """One resource and what the run did (or, with --dry-run, would do) to it."""

    resource: str
    name: str
    outcome: str


@dataclass(frozen=True)
class DeployResult:
    plan: DeployPlan
    actions: tuple[Action, ...]
    dns: str
    checks: tuple[CheckResult, ...] = ()
    dry_run: bool = False

    def as_json(self) -> dict:
        plan = self.plan
        return {"subdomain": plan.subdomain, "fqdn": plan.fqdn, "url": plan.url, "sha256": plan.sha256,
                "title": plan.title, "content": plan.content_mode, "created": plan.created,
                "expires": plan.expires or None, "dry_run": self.dry_run, "dns": self.dns,
                "service": plan.service.describe(), "route": str(plan.route_path),
                "resources": [a.__dict__ for a in self.actions], "checks": [c.as_json() for c in self.checks]}


@dataclass
class Undo:
    """What this run created, to be removed in reverse order when a later step fails."""

    steps: list[tuple[str, Callable[[], object]]] = field(default_factory=list)

    def push(self, description: str, action: Callable[[], object]) -> None:
        self.steps.append((description, action))

    def run(self) -> list[str]:
        lines = []
        for description, action in reversed(self.steps):
            try:
                action()
                lines.append(f"undone: {description}")
            except (GraphsiteError, OSError) as exc:
                reason = (getattr(exc, "message", None) or str(exc)).splitlines()[0]  # without the hint
                lines.append(f"NOT undone: {description}: {reason}")
        return lines


def choose_subdomain(config: Config, request: DeployRequest, clients: Clients, **draw) -> str:
    """Return the requested subdomain, or a fresh random one no service, route or record uses."""
    if request.subdomain:
        return check_label(request.subdomain)

    def taken(name: str) -> bool:
        return (clients.swarm.service(name) is not None
                or (Path(config.deploy.dynamic_dir) / f"{name}.yml").exists()
                or bool(clients.dns.records(fqdn(name, config.site.domain))))

    return draw_name(config.site.prefix, taken, **draw)


def deploy(config: Config, request: DeployRequest, clients: Clients) -> DeployResult:
    """Deploy the page of `request.source`; return what was done, the DNS line and the checks."""
    with output.step("name"):
        subdomain = choose_subdomain(config, request, clients)
    output.info(f"  subdomain {subdomain}")
    if request.dry_run:
        return _run(config, request, clients, subdomain)
    with subdomain_lock(config.deploy.lock_dir, subdomain, wait=request.wait):
        return _run(config, request, clients, subdomain)


def _run(config, request, clients, subdomain) -> DeployResult:
    plan, document, decision = _prepare(config, request, clients, subdomain)
    if request.dry_run:
        actions = survey(plan, document, decision.action, clients)
        return DeployResult(plan, actions, dns=f"would {decision.action}", dry_run=True)
    undo = Undo()
    try:
        actions, dns_line = _apply(plan, document, decision, clients, undo, config)
        checks = _verify(config, plan, clients) if request.verify else ()
    except (Exception, KeyboardInterrupt):  # whatever failed, even a bug: undo this run's work
        if request.keep_on_failure:
            kept = ", ".join(d for d, _ in undo.steps) or "nothing"
            output.info(f"  kept for inspection (--keep-on-failure): {kept}")
        else:
            for line in undo.run():
                output.info(f"  {line}")
        raise
    with output.step("remove old content"):
        _remove_old_content(config, plan, clients)
    return DeployResult(plan, tuple(actions), dns=dns_line, checks=checks)


def _prepare(config, request, clients, subdomain):
    """Build and plan; refuse (before anything is made) what the deploy must not do."""
    from graphsite.build import build_page

    if request.verify:
        probe.tls_context(config.verify.ca_bundle)
    with output.step("build"):
        page = build_page(request.source, subdomain=subdomain, config=config)
    content = request.content or config.deploy.content
    with output.step("plan"):
        node = clients.swarm.node_id() if content == "bind" else ""
        plan = make_plan(config, subdomain, html=page.html, sha256=page.sha256, title=page.title,
                         content=content, now=datetime.now(UTC), ttl=request.ttl, node_id=node)
        current = clients.swarm.service(subdomain)
        _refuse_foreign(plan, current)
        if current is not None:
            plan = carry_over(plan, current.labels)
        route.check_dynamic_dir(plan.route_path.parent)
        if not clients.swarm.network_exists(plan.service.network):
            raise DeployError(f"deploy.network: Docker network {plan.service.network} does not exist",
                              hint="create it (docker network create -d overlay --attachable NAME) or fix the name")
        decision = decide_record(clients.dns.records(plan.fqdn), plan.record, force=request.force)
        document = route.route_document(config, subdomain, plan.fqdn)
        route.check_route(document, plan.route_path)
    missing = route.missing_middleware(config)
    if missing:
        output.warn(f"the route uses middleware {missing}, which no file in {config.deploy.dynamic_dir} defines")
    return plan, document, decision


def _refuse_foreign(plan: DeployPlan, current) -> None:
    """Refuse to take over a service or a route file graphsite did not make."""
    if current is not None and current.labels.get("graphsite.subdomain") != plan.subdomain:
        raise DeployError(f"a Swarm service named {plan.subdomain} exists and graphsite did not make it",
                          hint="choose another subdomain; graphsite never changes services it did not make")
    if plan.route_path.exists() and not route.is_ours(plan.route_path):
        raise DeployError(f"{plan.route_path} exists and is not a route graphsite wrote",
                          hint="choose another subdomain; graphsite never overwrites routes it did not write")
    if plan.bind_dir and plan.bind_dir.exists() and not bind.made_by_graphsite(plan.bind_dir):
        raise DeployError(f"{plan.bind_dir} exists and graphsite did not make it",
                          hint="choose another subdomain or another deploy.bind_root")


def _verify(config: Config, plan: DeployPlan, clients: Clients) -> tuple[CheckResult, ...]:
    with output.step("verify"):
        checks = tuple(run_checks(config, Target.from_plan(plan), clients))
    failed = [c for c in checks if c.status == "FAIL"]
    if failed:
        raise DeployError("verify: " + "; ".join(f"{c.name}: {c.evidence}" for c in failed),
                          hint="rerun with --keep-on-failure to inspect, then `graphsite verify NAME`")
    return checks


def _remove_old_content(config: Config, plan: DeployPlan, clients: Clients) -> None:
    """Remove the configs (and a bind directory) the previous version used; the new one is live already."""
    old = sorted(set(clients.swarm.configs(plan.subdomain)) - {c.name for c in plan.service.configs})
    directory = bind_dir(config, plan.subdomain)
    try:
        for name in old:
            clients.swarm.remove_config(name)
        if plan.bind_dir is None and directory.exists():
            bind.remove_bind_dir(directory)
    except GraphsiteError as exc:  # the deployment is live: leftovers are for `teardown`, not a failure
        output.warn(f"old content of {plan.subdomain} left in place: {exc.message}")


def survey(plan: DeployPlan, document: dict, dns_action: str, clients: Clients) -> tuple[Action, ...]:
    """Return each resource of the plan and whether a deploy would create, update or keep it."""
    swarm, actions = clients.swarm, []
    existing = set(swarm.configs(plan.subdomain))
    for config in plan.service.configs:
        actions.append(Action("config", config.name, "present" if config.name in existing else "create"))
    if plan.bind_dir:
        actions.append(Action("directory", str(plan.bind_dir), "present" if plan.bind_dir.exists() else "create"))
    service = swarm.service(plan.subdomain)
    actions.append(Action("service", plan.subdomain, "create" if service is None else
                          "present" if service.labels.get("graphsite.sha256") == plan.sha256 else "update"))
    text = route.dump(document)
    current = plan.route_path.read_text(encoding="utf-8") if plan.route_path.is_file() else None
    actions.append(Action("route", str(plan.route_path),
                          "create" if current is None else "present" if current == text else "update"))
    actions.append(Action("record", f"A {plan.fqdn}", {"exists": "present"}.get(dns_action, dns_action)))
    return tuple(actions)


def _apply(plan, document, decision, clients: Clients, undo: Undo, config: Config):
    swarm, actions = clients.swarm, []
    with output.step("content"):
        for item in plan.service.configs:
            created = swarm.ensure_config(plan.subdomain, item)
            actions.append(Action("config", item.name, "created" if created else "present"))
            if created:
                undo.push(f"removed config {item.name}", lambda n=item.name: swarm.remove_config(n))
        if plan.bind_dir:
            created = bind.ensure_bind_dir(plan.bind_dir, plan.page, plan.sha256)
            actions.append(Action("directory", str(plan.bind_dir), "created" if created else "updated"))
            if created:
                undo.push(f"removed directory {plan.bind_dir}", lambda: bind.remove_bind_dir(plan.bind_dir))
    with output.step("service"):
        outcome = swarm.ensure_service(plan.service)
        actions.append(Action("service", plan.subdomain, outcome))
        if outcome == "created":
            undo.push(f"removed service {plan.subdomain}", lambda: swarm.remove_service(plan.subdomain))
        elif outcome == "updated":  # a redeploy: the previous version serves again, and its configs stay in use
            undo.push(f"restored the previous version of service {plan.subdomain}",
                      lambda: swarm.restore_previous(plan.service))
    with output.step("converge"):
        swarm.wait_converged(plan.service, config.deploy.converge_timeout)
    with output.step("route"):
        existed = plan.route_path.exists()
        written = route.write_route(plan.route_path, document)
        actions.append(Action("route", str(plan.route_path),
                              "updated" if written and existed else "created" if written else "present"))
        if not existed:
            undo.push(f"removed route {plan.route_path}", lambda: plan.route_path.unlink(missing_ok=True))
    with output.step("dns"):
        line, record = apply_record(clients.dns, plan.record, decision)
        actions.append(Action("record", f"A {plan.fqdn}", line.split()[0].lower()))
        if decision.action == "create":
            undo.push(f"deleted record {record.id}", lambda: clients.dns.delete(record.id))
    output.info(f"  {line}")
    return actions, line
