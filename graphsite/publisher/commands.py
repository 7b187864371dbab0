"""The verbs behind the CLI commands: connect the adapters, call the use case, print the human report."""

from __future__ import annotations

import time
from datetime import UTC
from pathlib import Path

from graphsite import output
from graphsite.config import Config
from graphsite.errors import VerifyError
from graphsite.publisher.clients import Clients
from graphsite.publisher.deploy import DeployRequest, DeployResult, deploy
from graphsite.publisher.plan import parse_ttl
from graphsite.publisher.verify import CheckResult


def _site(config: Config) -> Config:
    """Return `config` with site.domain as Cloudflare and Swarm hold names: lower case, no trailing dot."""
    from graphsite.labels import check_domain

    return config.replace("site", domain=check_domain(config.site.domain))


def deploy_verb(config: Config, source: Path, *, subdomain: str | None, ttl: str | None, content: str | None,
                dry_run: bool, force: bool, keep_on_failure: bool, verify: bool, wait: float,
                private: bool = False, public: bool = False, auth_file: Path | None = None,
                new_password: bool = False) -> DeployResult:
    """Deploy and report on stderr; return the result."""
    request = DeployRequest(source=source, subdomain=subdomain, ttl=parse_ttl(ttl) if ttl else None,
                            content=content, dry_run=dry_run, force=force, keep_on_failure=keep_on_failure,
                            verify=verify, wait=wait, private=private, public=public, auth_file=auth_file,
                            new_password=new_password)
    start, config = time.perf_counter(), _site(config)
    clients = Clients.connect(config)
    try:
        result = deploy(config, request, clients)
    finally:
        clients.close()
    if dry_run:
        output.info(f"Plan for {result.plan.url} (dry run: nothing was changed):")
    for action in result.actions:  # the same words, with "would" in a dry run
        verb = f"would {action.outcome}" if dry_run and action.outcome != "present" else action.outcome
        output.info(f"  {verb:13} {action.resource} {action.name}")
    if not dry_run:
        print_checks(result.checks)
        output.info(f"Deployed {result.plan.fqdn} ({result.plan.sha256[:12]}) in {time.perf_counter() - start:.2f} s")
    return result


def print_checks(checks: tuple[CheckResult, ...] | list[CheckResult]) -> None:
    for check in checks:
        output.info(f"  {check.status} {check.name:8} {check.evidence} ({check.seconds:.2f} s)")


def verify_verb(config: Config, name: str) -> list[CheckResult]:
    """Run the seven checks of deployment NAME; raise VerifyError after printing them when any fails."""
    from graphsite.publisher.teardown import subdomain_of
    from graphsite.publisher.verify import Target, run_checks

    config = _site(config)
    subdomain = subdomain_of(config, name)
    clients = Clients.connect(config)
    try:
        service = clients.swarm.service(subdomain)
        if service is None or "graphsite.sha256" not in service.labels:
            raise VerifyError(f"no deployment named {subdomain}: no graphsite service",
                              hint="see `graphsite list` for what is deployed")
        checks = run_checks(config, Target.from_service(service), clients)
    finally:
        clients.close()
    return checks


def teardown_verb(config: Config, name: str, *, wait: float):
    """Tear NAME down; say so when nothing was left."""
    from graphsite.publisher.teardown import teardown

    config = _site(config)
    clients = Clients.connect(config)
    try:
        removals = teardown(config, name, clients, wait=wait)
    finally:
        clients.close()
    if all(r.outcome == "absent" for r in removals):
        output.info(f"nothing left of {name}: every resource was already absent")
    return removals


def list_verb(config: Config):
    """Return the deployments and the time they were read at."""
    from datetime import datetime

    from graphsite.publisher.inventory import deployments

    config = _site(config)
    clients = Clients.connect(config)
    try:
        return deployments(config, clients), datetime.now(UTC)
    finally:
        clients.close()


def render_list(entries, now) -> list[str]:
    """Return the table `graphsite list` prints."""
    from graphsite.publisher.inventory import age

    rows = [("FQDN", "AGE", "EXPIRES", "SHA256", "REPLICAS", "ACCESS", "STATE")]
    for e in entries:
        rows.append((e.fqdn, age(e.created, now) or "-", e.expires or "-", e.sha256[:12] or "-",
                     e.replicas or "-", "private" if e.private else "public",
                     e.orphan or ("expired" if e.expired(now) else "ok")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip() for row in rows]


def gc_verb(config: Config, *, dry_run: bool):
    from graphsite.publisher.inventory import collect

    config = _site(config)
    clients = Clients.connect(config)
    try:
        collected = collect(config, clients, dry_run=dry_run)
    finally:
        clients.close()
    if not collected:
        output.info("nothing has expired")
    return collected
