"""`graphsite verify`: seven checks, each PASS, FAIL or SKIP with its evidence and time. Origin, public and TLS
checks go over the real network path.

Only what can change with time is retried, with backoff until the deadline: a service converging, a route being
loaded (nothing answers yet, the edge's 404, 502 or 503, no certificate for the name yet). A mismatch (a header,
a certificate, the content, a record) fails once it reads the same twice, verify.confirm_after apart."""

from __future__ import annotations

import hashlib
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from graphsite.config import PASSWORD_ENV, Config, VerifyConfig
from graphsite.errors import DeployError, VerifyError
from graphsite.labels import subdomain_of
from graphsite.publisher import caddy, dynamic, probe, route
from graphsite.publisher.check import FAIL, PASS, SKIP, CheckResult, CheckStatus
from graphsite.publisher.deployment import Claim, Deployment, Stamp, route_path, whose
from graphsite.publisher.ports import EdgePort, RouteStore
from graphsite.publisher.records import owned
from graphsite.publisher.route import RouteSettings

if TYPE_CHECKING:
    from graphsite.publisher.clients import Clients

WAIT = "WAIT"  # a check's own answer, never a result: failed for now, in a way that can change with time
# The edge answers 404 before it has loaded a new route, 502 or 503 while no task of the service answers yet.
WAITING_STATUSES = frozenset({404, 502, 503})
# A mismatch is read once more verify.confirm_after seconds after it was first seen (2 s by default): Traefik
# applies a changed route file at most every providersThrottleDuration, so a redeploy's old route may still
# answer until then.
CONFIRM_AFTER = 2.0
STABLE_OVER = 1.0  # seconds the service's tasks are watched: the same ones running twice, none restarting
Next = Literal["stop", "retry", "confirm"]
PASSWORD_SOURCES = f"--password-file FILE or {PASSWORD_ENV}"
UNREAD = f"content not checked: the page is private and no password was given ({PASSWORD_SOURCES})"


@dataclass(frozen=True)
class VerifySettings:
    """The settings verify checks by: its own section (where to connect, what to trust, how long to retry),
    and what a deployment of this configuration must look like."""

    verify: VerifyConfig
    domain: str
    indexable: bool  # site.indexable: the robots header and meta tag the page must carry
    network: str  # deploy.network: where a task's address is
    dynamic_dir: Path
    record_content: str  # dns.record_content: the address the A record must point at
    route: RouteSettings  # the route the route check expects

    @classmethod
    def from_config(cls, config: Config) -> VerifySettings:
        return cls(config.verify, config.site.domain, config.site.indexable, config.deploy.network,
                   Path(config.deploy.dynamic_dir), config.dns.record_content, RouteSettings.from_config(config))


@dataclass(frozen=True)
class VerifyReport:
    """The checks of one deployment, and whether they could read its content."""

    deployment: Deployment
    checks: tuple[CheckResult, ...]
    content_checked: bool  # False: a private page and no password, so the origin and public checks are SKIP

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if c.status == FAIL]

    def as_json(self) -> dict[str, Any]:
        deployment = self.deployment
        return {"name": deployment.name, "ok": not self.failed, "content_checked": self.content_checked,
                "made_by": deployment.made_by or None, "created": deployment.created or None,
                "checks": [c.as_json() for c in self.checks]}


def reads_content(target: Deployment, credentials: tuple[str, str] | None) -> bool:
    """True when verify can read the content of `target`: it is public, or the password is given."""
    return target.access != "private" or credentials is not None


class _Title(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title: str | None = None
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._inside = tag == "title" and self.title is None

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.title = (self.title or "") + data

    def handle_endtag(self, tag: str) -> None:
        self._inside = False


def page_title(body: bytes) -> str | None:
    parser = _Title()
    parser.feed(body.decode("utf-8", errors="replace"))
    return parser.title.strip() if parser.title is not None else None


def changing(answer: probe.Probe) -> bool:
    """True when a failed answer can change with time: nothing answers yet, the edge holds no certificate for
    the name yet, or the edge answers 404, 502 or 503 (its route is loading, no task answers yet)."""
    if answer.failure:
        return answer.failure in ("unreachable", "no-certificate")
    return answer.status in WAITING_STATUSES


def _failed(answer: probe.Probe) -> str:
    """Return the status of an answer that is not the one wanted: WAIT when it can change with time, else FAIL."""
    return WAIT if changing(answer) else FAIL


def next_read(status: str, evidence: str, previous: str | None) -> Next:
    """Return what follows a check's answer, given the evidence of the FAIL just before it (None: none): stop
    (PASS, SKIP, or the same FAIL twice: it will not change), retry with backoff (WAIT), or confirm (a FAIL not
    seen before: read once more, verify.confirm_after later)."""
    if status == WAIT:
        return "retry"
    if status == FAIL and evidence != previous:
        return "confirm"
    return "stop"


def _retry(name: str, check: Callable[[], tuple[str, str]], deadline: float, *,
           clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
           confirm_after: float = CONFIRM_AFTER) -> CheckResult:
    """Run `check` as next_read says, until `deadline` (on `clock`, monotonic), a FAIL confirmed `confirm_after`
    seconds later; a WAIT still there at the deadline is a FAIL."""
    start, delay, previous = clock(), 0.2, None
    while True:
        status, evidence = check()
        step = next_read(status, evidence, previous)
        pause = confirm_after if step == "confirm" else delay
        if step == "stop" or clock() + pause > deadline:
            return CheckResult(name, FAIL if status == WAIT else CheckStatus(status), evidence,
                               seconds=clock() - start)
        sleep(pause)
        if step == "retry":
            delay = min(delay * 2, 2.0)
        previous = evidence if status == FAIL else None


def _service(target: Deployment, clients: Clients, sleep: Callable[[float], None]) -> tuple[str, str]:
    service = clients.docker.service(target.name)
    if service is None:
        return FAIL, f"no service {target.name}"
    stamp = Stamp.from_labels(service.labels)
    if stamp != target.stamp:  # replaced, relabelled or another's since it was judged: not this deployment
        said = f"id {stamp.id or '-'}, fqdn {stamp.fqdn or '-'}" if stamp else "no graphsite stamp"
        return FAIL, (f"service {target.name}: its labels ({said}) are not this deployment's stamp "
                      f"(id {target.id or '-'}, fqdn {target.fqdn})")
    if service.replicas < 1:  # `docker service scale NAME=0`: no task is wanted, so 0/0 would read as all running
        # Only a deploy is the fix: it sets deploy.replicas (not always 1), and Docker refuses `docker service
        # scale` on a service in global mode, which reads here as 0 replicas too.
        return FAIL, (f"service {target.name} is scaled to {service.replicas} replicas: nothing serves the page; "
                      "deploy it again (it sets deploy.replicas)")
    ids = []
    for attempt in range(2):  # stable: the same tasks running twice, a moment apart, none restarting
        running = [t for t in clients.docker.tasks(target.name) if t.state == "running" and t.desired == "running"]
        if len(running) < service.replicas:
            return WAIT, f"{len(running)}/{service.replicas} replicas running"
        ids.append(sorted(t.id for t in running))
        if attempt == 0:
            sleep(STABLE_OVER)
    if ids[0] != ids[1]:
        return WAIT, "tasks changed while watching: restarting"
    return PASS, (f"{len(ids[1])}/{service.replicas} replicas running, stable over {STABLE_OVER:g} s "
                  f"({', '.join(ids[1])})")


def _page(target: Deployment, result: probe.Probe, where: str, indexing: bool = False) -> tuple[str, str]:
    if result.error:
        return _failed(result), f"{where}: {result.error}"
    if result.status != 200:
        return _failed(result), f"{where}: HTTP {result.status}"
    digest = hashlib.sha256(result.body).hexdigest()
    if digest != target.sha256:
        return FAIL, f"{where}: HTTP 200 but sha256 {digest[:12]}… is not the deployed {target.sha256[:12]}…"
    missing = caddy.header_findings(result.headers, result.body, indexing)
    if missing:
        return FAIL, f"{where}: HTTP 200, sha256 matches, but security headers: {'; '.join(missing)}"
    return PASS, f"{where}: HTTP 200, {len(result.body)} bytes, sha256 {digest[:12]}… matches, security headers sent"


def _guarded(target: Deployment, settings: VerifySettings, edge: EdgePort, address: str, where: str,
             credentials: tuple[str, str] | None,
             headers: dict[str, str] | None = None) -> tuple[str, probe.Probe | None, str]:
    """Fetch the page at `address`; a private one must first refuse a request without credentials (401).
    Return (FAIL or WAIT, None, why) when it does not; (SKIP, None, why) when it does but there is no password
    to read the content with; else ('', the answer to check, a note)."""
    fetch = edge.fetch("https", target.fqdn, address, ca_bundle=settings.verify.ca_bundle, headers=headers)
    if target.access != "private":
        return "", fetch, ""
    if fetch.error or fetch.status != 401:
        state = fetch.error or f"HTTP {fetch.status}"
        return _failed(fetch), None, f"{where}: {state} without credentials: a private page must answer 401"
    if credentials is None:
        return SKIP, None, f"{where}: HTTP 401 without credentials, as a private page must; {UNREAD}"
    answer = edge.fetch("https", target.fqdn, address, ca_bundle=settings.verify.ca_bundle, auth=credentials,
                        headers=headers)
    return "", answer, "HTTP 401 without credentials, "


def _at(target: Deployment, settings: VerifySettings, edge: EdgePort, where: str, credentials: tuple[str, str] | None,
        headers: dict[str, str] | None = None) -> tuple[str, str]:
    """The page through the edge at verify.origin_address (with `headers`), checked as `where`."""
    failed, answer, note = _guarded(target, settings, edge, settings.verify.origin_address, where, credentials,
                                    headers)
    if answer is None:
        return failed, note
    status, evidence = _page(target, answer, where, settings.indexable)
    return status, note + evidence


def _origin(target: Deployment, settings: VerifySettings, clients: Clients,
            credentials: tuple[str, str] | None) -> tuple[str, str]:
    """The page through the edge on this host; with verify.task_header, from every running task of the current
    spec in turn (the lab's edge proxies to the overlay address the header names), each against the deployed
    sha256."""
    origin, header = settings.verify.origin_address, settings.verify.task_header
    if not header:
        return _at(target, settings, clients.edge, f"edge {origin}", credentials)
    service = clients.docker.service(target.name)
    if service is None:
        return FAIL, f"no service {target.name}"
    tasks = [t for t in clients.docker.tasks(target.name) if t.serves(service)]
    if not tasks:
        return WAIT, f"edge {origin}: no running task of {target.name} to reach"
    nodes, reached = clients.docker.node_names(), []
    for task in sorted(tasks, key=lambda t: t.id):
        where = f"task {task.id} on {nodes.get(task.node) or task.node[:12]}"
        address = task.address(settings.network)
        if not address:
            return WAIT, f"{where}: no address on network {settings.network}"
        status, evidence = _at(target, settings, clients.edge, f"{where} ({address})", credentials,
                               {header: address})
        if status not in (PASS, SKIP):  # SKIP: it refused without credentials, and there is no password
            return status, evidence
        reached.append(where)
    tasks_of = f"edge {origin}: {len(reached)}/{len(reached)} tasks"
    if not reads_content(target, credentials):
        return SKIP, f"{tasks_of} HTTP 401 without credentials ({'; '.join(reached)}); {UNREAD}"
    return PASS, f"{tasks_of} HTTP 200, sha256 {target.sha256[:12]}… matches ({'; '.join(reached)})"


def _public(target: Deployment, settings: VerifySettings, edge: EdgePort,
            credentials: tuple[str, str] | None) -> tuple[str, str]:
    failed, result, note = _guarded(target, settings, edge, settings.verify.resolve_https, target.fqdn, credentials)
    if result is None:
        return failed, note
    status, evidence = _page(target, result, result.url, settings.indexable)
    evidence = note + evidence
    if status == PASS and target.title:
        title = page_title(result.body)
        if title != target.title:
            return FAIL, f"{result.url}: <title> is {title!r}, not {target.title!r}"
        evidence += f", <title> {title!r}"
    return status, evidence


def _covers(names: list[str], fqdn: str) -> bool:
    for name in names:
        if name.lower() == fqdn or (name.startswith("*.") and fqdn.split(".", 1)[1] == name[2:].lower()):
            return True
    return False


def tls_findings(cert: dict[str, Any], fqdn: str, now: datetime) -> list[str]:
    """Return what is wrong with a verified peer certificate for `fqdn` (empty: nothing)."""
    names = [value for kind, value in cert.get("subjectAltName", ()) if kind == "DNS"]
    not_before = datetime.fromtimestamp(ssl.cert_time_to_seconds(cert["notBefore"]), UTC)
    not_after = datetime.fromtimestamp(ssl.cert_time_to_seconds(cert["notAfter"]), UTC)
    problems = []
    if not _covers(names, fqdn):
        problems.append(f"does not cover {fqdn} (names: {', '.join(names) or 'none'})")
    if now - not_before > timedelta(days=90) or not_before > now:
        problems.append(f"notBefore {not_before:%Y-%m-%d} is not within the last 90 days")
    if not_after - now < timedelta(days=14):
        problems.append(f"notAfter {not_after:%Y-%m-%d} is less than 14 days away")
    return problems


def _tls(target: Deployment, settings: VerifySettings, edge: EdgePort) -> tuple[str, str]:
    result = edge.fetch("https", target.fqdn, settings.verify.resolve_https, ca_bundle=settings.verify.ca_bundle)
    trust = settings.verify.ca_bundle or "system trust"
    if result.cert is None:
        return _failed(result), f"no verified certificate: {result.error or 'not TLS'} (trust: {trust})"
    cert = result.cert
    issuer = ", ".join(f"{k}={v}" for rdn in cert.get("issuer", ()) for k, v in rdn)
    problems = tls_findings(cert, target.fqdn, datetime.now(UTC))  # now: the edge may have issued it just now
    if problems:
        return FAIL, "; ".join(problems) + f" (issuer {issuer})"
    return PASS, (f"covers {target.fqdn}, issuer {issuer}, {cert['notBefore']} → {cert['notAfter']}, "
                  f"chain verified ({trust})")


def _redirect(target: Deployment, settings: VerifySettings, edge: EdgePort) -> tuple[str, str]:
    result = edge.fetch("http", target.fqdn, settings.verify.resolve_http)
    if result.error:
        return _failed(result), f"{result.url}: {result.error}"
    wanted = f"https://{target.fqdn}/"
    if result.status in (301, 308) and result.location == wanted:
        return PASS, f"{result.url}: HTTP {result.status} → {result.location}"
    got = f"HTTP {result.status} → {result.location or 'no Location'}"
    return _failed(result), f"{result.url}: {got} (want 301/308 → {wanted})"


def _dns(target: Deployment, settings: VerifySettings, clients: Clients) -> tuple[str, str]:
    wanted = settings.record_content
    found = clients.dns.records(target.fqdn)
    records = [r for r in found if r.type == "A"]
    if not any(r.content == wanted for r in records):
        found_a = ", ".join(owned(r, settings.domain) for r in records) or "none"
        return FAIL, f"no A {target.fqdn} → {wanted} in Cloudflare (found: {found_a})"
    record = next(r for r in records if r.content == wanted)
    # resolvers hand out every address record of the name: one beside the wanted A sends readers elsewhere
    beside = [r for r in found if r.type in ("A", "AAAA", "CNAME") and r.id != record.id]
    if beside:
        others = ", ".join(owned(r, settings.domain) for r in beside)
        return FAIL, (f"A id={record.id} → {wanted}, but {target.fqdn} also has {others}: readers are split "
                      "between hosts; remove the records beside it in Cloudflare")
    if settings.verify.resolve_https:
        host = settings.verify.resolve_https.rsplit(":", 1)[0]
        state: str = PASS if host == wanted else FAIL
        return state, f"A id={record.id} → {wanted}; name resolution overridden to {host}"
    if record.proxied:
        return PASS, f"A id={record.id} → {wanted} (proxied: the name resolves to Cloudflare)"
    try:
        addresses = sorted({str(info[4][0]) for info in socket.getaddrinfo(target.fqdn, 443, type=socket.SOCK_STREAM)})
    except socket.gaierror as exc:
        return WAIT, f"A id={record.id} → {wanted}, but {target.fqdn} does not resolve yet: {exc.strerror}"
    state = PASS if wanted in addresses else WAIT  # a resolver may hold the old answer until its TTL ends
    return state, f"A id={record.id} → {wanted}; {target.fqdn} resolves to {', '.join(addresses)}"


def _route(target: Deployment, settings: VerifySettings, routes: RouteStore) -> tuple[str, str]:
    path = route_path(settings.dynamic_dir, target.name)
    document = routes.document(path)
    if document is None:
        return FAIL, f"{path}: missing or not YAML"
    errors = dynamic.schema_errors(document)
    if errors:
        return FAIL, f"{path}: {errors[0]}"
    try:
        users = route.route_users(document, target.name, path)
    except DeployError as unread:  # a hand-edited middleware: who may read the page is unknown, never "anyone"
        return FAIL, unread.detail
    if target.access == "private" and not users:
        return FAIL, f"{path}: no basicAuth middleware, but the deployment is private (label graphsite.access)"
    if document != route.route_document(settings.route, target.name, target.fqdn, users=users):
        return FAIL, f"{path}: schema-valid but not the route graphsite would write"
    try:
        blocked = dynamic.blocking_files(path.parent)
    except dynamic.Unread as unread:  # Traefik (root on Dokploy) may read it: unknown, neither empty nor broken
        return FAIL, (f"{unread}: whether Traefik applies the route is unknown (one file it cannot load blocks "
                      f"every change); run verify as a user who may read every file and directory under "
                      f"{path.parent}")
    if blocked:
        return FAIL, f"Traefik applies no change while a file is broken: {blocked[0]}"
    return PASS, f"{path}: schema-valid, routes {target.fqdn}" + (" (private)" if users else "")


def verify(settings: VerifySettings, name: str, clients: Clients,
           credentials: tuple[str, str] | None = None) -> VerifyReport:
    """Return the seven checks of the deployment NAME (a subdomain or its fqdn), as its service records it;
    a private one's content is read with `credentials` (without them, its content checks are SKIP)."""
    subdomain = subdomain_of(name, settings.domain)
    service = clients.docker.service(subdomain)
    deployment = Deployment.from_labels(service.labels, service.replicas) if service is not None else None
    if deployment is None or deployment.name != subdomain or not deployment.sha256:
        raise VerifyError(f"no deployment named {subdomain}: no graphsite service",
                          hint="see `graphsite list` for what is deployed")
    owner = deployment.stamp.claim(subdomain, settings.domain)
    if owner != Claim.OURS:  # its labels do not prove it: what it serves is not this configuration's to judge
        raise VerifyError(f"{subdomain}: not verified: the Swarm service of that name is not this configuration's "
                          f"deployment: {whose(owner, deployment.stamp)}",
                          hint="verify it with the configuration that deployed it; see `graphsite list`")
    checks = run_checks(settings, deployment, clients, credentials)
    return VerifyReport(deployment, tuple(checks), reads_content(deployment, credentials))


def run_checks(settings: VerifySettings, target: Deployment, clients: Clients,
               credentials: tuple[str, str] | None = None, *, clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> list[CheckResult]:
    """Return the seven checks of `target`, in order; `clock` (monotonic seconds) and `sleep` time the retries."""
    probe.tls_context(settings.verify.ca_bundle)  # a bundle that cannot load is the user's to fix, not a FAIL
    deadline = clock() + settings.verify.deadline
    origin, edge = settings.verify.origin_address, clients.edge
    checks = [
        ("service", lambda: _service(target, clients, sleep)),
        ("origin", lambda: _origin(target, settings, clients, credentials)),
        ("public", lambda: _public(target, settings, edge, credentials)),
        ("tls", lambda: _tls(target, settings, edge)),
        ("redirect", lambda: _redirect(target, settings, edge)),
        ("dns", lambda: _dns(target, settings, clients)),
        ("route", lambda: _route(target, settings, clients.routes)),
    ]
    if not origin:  # no edge on this host to ask (verify runs elsewhere): say so rather than guess
        checks[1] = ("origin", lambda: (SKIP, "verify.origin_address is empty"))
    return [_retry(name, check, deadline, clock=clock, sleep=sleep, confirm_after=settings.verify.confirm_after)
            for name, check in checks]
