"""The deploy plan: every resource a deployment consists of, as typed values, computed without effects."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from graphsite import __version__
from graphsite.config import CHOICES, Config, settings_errors
from graphsite.errors import ConfigError, DeployError
from graphsite.labels import check_domain
from graphsite.publisher import caddy, route, versions
from graphsite.publisher.deployment import COMMENT_LIMIT, Deployment, Stamp, bind_dir, iso, new_id
from graphsite.publisher.names import check_length
from graphsite.publisher.names import fqdn as make_fqdn
from graphsite.publisher.route import RouteDocument

MAX_CONFIG_BYTES = 500 * 1024  # Swarm's limit on a config's data
CONTENT_MODES = CHOICES["deploy.content"]
_TTL = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_ttl(text: str) -> timedelta:
    """Return the duration of `--ttl` text such as 90m, 12h, 7d, 2w."""
    match = _TTL.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise ConfigError(f"--ttl: {text!r} is not a duration", hint="write a number and a unit: 30m, 12h, 7d, 2w")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


@dataclass(frozen=True)
class ConfigFile:
    """One Swarm config: a file the service reads, named with its content hash."""

    name: str
    target: str
    sha256: str
    data: bytes = field(repr=False)
    labels: tuple[tuple[str, str], ...] = ()  # a page's: what version it is (publisher/versions.py), beside the stamp


@dataclass(frozen=True)
class ServiceSpec:
    """The Swarm service that serves the page."""

    name: str
    image: str
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    labels: tuple[tuple[str, str], ...]
    network: str
    replicas: int
    endpoint_mode: str
    port: int
    configs: tuple[ConfigFile, ...] = ()
    bind_source: str = ""
    tmpfs: tuple[str, ...] = caddy.TMPFS
    constraints: tuple[str, ...] = ()
    spread: tuple[str, ...] = ()  # placement preferences: spread the replicas over these node attributes
    update_order: str = "start-first"
    restart_condition: str = "any"

    def describe(self) -> dict[str, Any]:
        """Return the spec as plain data (the golden file, --dry-run, --json)."""
        return {
            "name": self.name, "image": self.image, "command": list(self.command),
            "env": dict(self.env), "labels": dict(self.labels), "network": self.network,
            "replicas": self.replicas, "endpoint_mode": self.endpoint_mode, "port": self.port,
            "published_ports": [],
            "configs": [{"name": c.name, "target": c.target, "mode": "0444"} for c in self.configs],
            "bind": {"source": self.bind_source, "target": caddy.SITE_ROOT, "read_only": True}
            if self.bind_source else None,
            "tmpfs": list(self.tmpfs), "constraints": list(self.constraints), "spread": list(self.spread),
            "update_order": self.update_order, "restart_condition": self.restart_condition,
        }


@dataclass(frozen=True)
class DnsRecord:
    """The A record that points the fqdn at the host."""

    name: str
    type: str
    content: str
    ttl: int
    proxied: bool
    comment: str


@dataclass(frozen=True)
class DeployPlan:
    """Every resource of one deployment, decided before anything is touched."""

    deployment: Deployment
    service: ServiceSpec
    route_path: Path
    route: RouteDocument  # the Traefik dynamic configuration, as data
    record: DnsRecord
    bind_dir: Path | None
    server: caddy.Server  # what the service's Caddyfile is made from
    page: bytes = field(repr=False)
    page_labels: tuple[tuple[str, str], ...] = ()  # what version the page is (publisher/versions.py)

    @property
    def subdomain(self) -> str:
        return self.deployment.name

    @property
    def fqdn(self) -> str:
        return self.deployment.fqdn

    @property
    def url(self) -> str:
        return self.deployment.url

    @property
    def sha256(self) -> str:
        return self.deployment.sha256

    @property
    def content_mode(self) -> str:
        return self.deployment.content

    @property
    def stamp(self) -> Stamp:
        return self.deployment.stamp

    def with_access(self, users: tuple[str, ...], route: RouteDocument) -> DeployPlan:
        """Return the plan of a deployment readable by `users` (htpasswd lines; none: public) through `route`
        and at its own server: the Caddyfile asks for the same users as the route."""
        deployment = replace(self.deployment, access="private" if users else "public")
        server = replace(self.server, users=users)
        caddyfile = caddyfile_config(self.subdomain, server)
        configs = tuple(caddyfile if c.target == caddy.CADDYFILE_PATH else c for c in self.service.configs)
        service = replace(self.service, labels=tuple(deployment.labels().items()), configs=configs)
        return replace(self, deployment=deployment, service=service, route=route, server=server)

    @property
    def contents(self) -> tuple[ConfigFile, ...]:
        """Return each config the service mounts, once (a page is mounted at the root and under /v/ too)."""
        seen: dict[str, ConfigFile] = {}
        for item in self.service.configs:
            seen.setdefault(item.name, item)
        return tuple(seen.values())

    def with_versions(self, page_labels: dict[str, str], kept: tuple[tuple[str, str], ...],
                      configs: tuple[ConfigFile, ...] = ()) -> DeployPlan:
        """Return the plan of a deployment that keeps versions: its page is the version `page_labels` say, served
        at the root and under /v/<sha12>/ beside the `kept` ones ((sha256, its page's CSP) each, under its own
        /v/<sha12>/), and the Caddyfile serves /v/* with noindex. In content mode config the page's config is
        mounted twice and the kept ones' `configs` under /v/; in bind mode the versions are in its directory."""
        labels = tuple(page_labels.items())
        server = replace(self.server, versions=((versions.short(self.sha256), self.server.csp),
                                                *((versions.short(sha256), csp) for sha256, csp in kept)))
        page = next((c for c in self.service.configs if c.target == versions.ROOT_PAGE), None)
        mounts: tuple[ConfigFile, ...] = ()
        if page is not None:
            page = replace(page, labels=labels)
            mounts = (page, replace(page, target=versions.version_target(page.sha256)),
                      *(replace(item, target=versions.version_target(item.sha256)) for item in configs))
        service = replace(self.service, configs=(*mounts, caddyfile_config(self.subdomain, server)))
        return replace(self, service=service, server=server, page_labels=labels)

    def renewing(self, previous: Deployment) -> DeployPlan:
        """Return the plan of a redeploy: the previous deployment's creation time is kept everywhere, and its
        expiry unless this deploy sets one."""
        deployment = self.deployment.renewed(previous)
        service = replace(self.service, labels=tuple(deployment.labels().items()))
        record = replace(self.record, comment=record_comment(deployment))
        return replace(self, deployment=deployment, service=service, record=record)


def record_comment(deployment: Deployment) -> str:
    """Return the record's comment (its ownership stamp); raise ConfigError when the fqdn is too long for it."""
    try:
        return deployment.stamp.record_comment()
    except ValueError as exc:
        room = COMMENT_LIMIT - (len(deployment.stamp.record_comment(limit=10_000).split(" e=")[0])
                                - len(deployment.fqdn))
        raise ConfigError(f"--subdomain: {deployment.fqdn} is too long for the DNS record's comment: {exc}",
                          hint=f"graphsite proves a record is its own by that comment; use a name and domain of at "
                               f"most {room} characters together") from None


def config_name(subdomain: str, kind: str, sha256: str) -> str:
    """Return `NAME-KIND-<12 hex>`; a name too long for Swarm's config names is refused (deploy's name step has
    refused it already)."""
    return f"{check_length(subdomain)}-{kind}-{sha256[:12]}"


def caddyfile_config(subdomain: str, server: caddy.Server) -> ConfigFile:
    """Return the Swarm config holding the Caddyfile of `server`; raise DeployError when a user of a private
    deployment, or the page's CSP, cannot be written into it."""
    refusal = caddy.csp_refusal(server.csp)
    if refusal is not None:
        raise DeployError(f"the page of {subdomain} cannot be served: {refusal}",
                          hint="the CSP graphsite writes never holds them: rebuild the page from its source")
    try:
        text = caddy.caddyfile(server).encode()
    except ValueError as exc:
        raise DeployError(f"the users of {subdomain} cannot be written into its Caddyfile: {exc}",
                          hint=f"redeploy with --new-password, or with --auth-file of users of "
                               f"{caddy.USER_CHARACTERS}") from None
    sha = hashlib.sha256(text).hexdigest()
    return ConfigFile(config_name(subdomain, "caddyfile", sha), caddy.CADDYFILE_PATH, sha, text)


def check_settings(config: Config, content: str) -> None:
    """Raise ConfigError naming the first setting a deploy cannot work with."""
    deploy = config.deploy
    check_domain(config.site.domain)
    if content not in CONTENT_MODES:
        raise ConfigError(f"--content: expected {' or '.join(CONTENT_MODES)}, got {content!r}")
    errors = settings_errors(config)
    if errors:
        raise ConfigError(errors[0])
    if not deploy.image.strip():
        raise ConfigError("deploy.image: empty", hint="name the Caddy image that serves the page, e.g. caddy:2-alpine")
    if content == "bind" and deploy.replicas > 1:
        raise ConfigError(f"deploy.replicas: {deploy.replicas} replicas with --content bind: the page's directory "
                          "exists on this node only, so every replica would be pinned to it",
                          hint="deploy with --content config (the page as a Swarm config reaches every node), "
                               "or set deploy.replicas = 1")
    try:
        ipaddress.IPv4Address(config.dns.record_content)
    except ValueError:
        raise ConfigError(f"dns.record_content: {config.dns.record_content!r} is not an IPv4 address",
                          hint="the A record points at the Swarm manager's public IPv4 address") from None
    if config.dns.ttl != 1 and not 30 <= config.dns.ttl <= 86400:
        raise ConfigError(f"dns.ttl: {config.dns.ttl} is not 1 (automatic) or 30-86400 seconds")


def make_plan(config: Config, subdomain: str, *, html: str, sha256: str, title: str, content: str,
              now: datetime, ttl: timedelta | None = None, node_id: str = "",
              deployment_id: str = "") -> DeployPlan:
    """Return every resource of the deployment of `html` under `subdomain` (a fresh deployment id unless
    `deployment_id` gives one)."""
    check_settings(config, content)
    deploy, page = config.deploy, html.encode("utf-8")
    if content == "config" and len(page) > MAX_CONFIG_BYTES:
        raise DeployError(f"the page is {len(page) // 1024} KB, more than a Swarm config holds "
                          f"({MAX_CONFIG_BYTES // 1024} KB)", hint="deploy it with --content bind")
    created, expires = iso(now), iso(now + ttl) if ttl else ""
    deployment = Deployment(name=subdomain, fqdn=make_fqdn(subdomain, config.site.domain), sha256=sha256,
                            title=title, created=created, expires=expires, content=content,
                            replicas=deploy.replicas, id=deployment_id or new_id(), made_by=__version__)
    # The Caddyfile is a config in both modes: it is small and the same on every node. Public until with_access.
    server = caddy.Server(deploy.port, csp=caddy.page_csp(html), indexing=config.site.indexable)
    configs: tuple[ConfigFile, ...] = (caddyfile_config(subdomain, server),)
    source, directory = "", None
    constraints: tuple[str, ...] = ()
    if content == "config":
        configs = (ConfigFile(config_name(subdomain, "page", sha256), versions.ROOT_PAGE, sha256, page),) + configs
    else:
        directory = bind_dir(deploy.bind_root, subdomain)
        source = str(directory)
        constraints = (f"node.id=={node_id}",) if node_id else ()
    service = ServiceSpec(
        name=subdomain, image=deploy.image, command=caddy.COMMAND, env=caddy.ENV,
        labels=tuple(deployment.labels().items()), network=deploy.network, replicas=deploy.replicas,
        endpoint_mode=deploy.endpoint_mode, port=deploy.port, configs=configs, bind_source=source,
        constraints=constraints, spread=("node.id",) if deploy.replicas > 1 else ())
    record = DnsRecord(name=deployment.fqdn, type="A", content=config.dns.record_content, ttl=config.dns.ttl,
                       proxied=config.dns.proxied, comment=record_comment(deployment))
    return DeployPlan(deployment=deployment, service=service,
                      route_path=deployment.route_path(deploy.dynamic_dir),
                      route=route.route_document(route.RouteSettings.from_config(config), subdomain, deployment.fqdn),
                      record=record, bind_dir=directory, server=server, page=page)
