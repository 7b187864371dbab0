"""The doctor's judgement: pure functions from the configuration and the gathered facts to checks, each PASS, WARN,
FAIL or SKIP with the evidence and, when it is not PASS, the fix. No I/O here; `facts.py` gathers."""

from __future__ import annotations

import ipaddress
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.codes import CheckStatus
from graphsite.config import Config
from graphsite.publisher.check import FAIL, PASS, SKIP, WARN, CheckResult
from graphsite.usecases.doctor.model import Facts, Permissions, RouteFile, Token, Unknown

if TYPE_CHECKING:
    from graphsite.publisher.swarm import DaemonFacts, ImageFacts, NetworkFacts

MIN_API = (1, 30)  # Swarm configs need Docker API 1.30
TOKEN_LENGTH = 40  # Cloudflare's API tokens are 40 characters of [A-Za-z0-9_-]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _skip(name: str, why: str) -> CheckResult:
    return CheckResult(name, SKIP, f"not checked: {why}")


# --- Docker ---------------------------------------------------------------------------------------------------


def docker_checks(config: Config, facts: Facts) -> list[CheckResult]:
    daemon = facts.daemon
    if daemon is None:
        return []
    if isinstance(daemon, Unknown):
        checks = [CheckResult("docker.daemon", FAIL, daemon.why, "start Docker, or point DOCKER_HOST at its socket")]
        return checks + [_skip(n, "the daemon does not answer") for n in ("docker.swarm", "docker.network")]
    # ASCII digits: "²" is a digit to str.isdigit(), not to int()
    version = tuple(int(p) for p in daemon.api_version.split(".")[:2] if p.isascii() and p.isdigit() and len(p) < 9)
    checks = [CheckResult("docker.daemon", PASS, f"Docker {daemon.version}, API {daemon.api_version}")]
    if version < MIN_API:
        checks[0] = CheckResult("docker.daemon", FAIL, f"Docker {daemon.version} speaks API {daemon.api_version}; "
                                "Swarm configs need 1.30 or newer", "upgrade Docker")
    checks.append(_swarm(daemon))
    checks.append(_network(config, facts.network))
    if facts.image is not None:
        checks.append(_image(config, facts.image))
    return checks


def _swarm(daemon: DaemonFacts) -> CheckResult:
    if daemon.manager:
        return CheckResult("docker.swarm", PASS, f"node {daemon.node_id[:12]} is a Swarm manager")
    if daemon.swarm_state != "active":
        return CheckResult("docker.swarm", FAIL, f"this node is in no swarm (state {daemon.swarm_state or 'unknown'})",
                           "docker swarm init (Dokploy does this on install)")
    return CheckResult("docker.swarm", FAIL, f"node {daemon.node_id[:12]} is a Swarm worker, not a manager",
                       "run graphsite on a manager node (docker node ls there)")


def _network(config: Config, network: NetworkFacts | Unknown | None) -> CheckResult:
    name, setting = config.deploy.network, "deploy.network"
    create = f"docker network create --driver overlay --attachable {name}"
    if isinstance(network, Unknown):
        return CheckResult("docker.network", FAIL, f"{setting} {name}: {network.why}", "check the Docker daemon")
    if network is None:
        return _skip("docker.network", f"{setting} {name} was not looked up")
    if not network.found:
        return CheckResult("docker.network", FAIL, f"{setting}: Docker network {name} does not exist",
                           f"{create}, or fix {setting}")
    shape = f"driver {network.driver}, scope {network.scope}, attachable {str(network.attachable).lower()}"
    if network.driver != "overlay" or network.scope != "swarm":
        return CheckResult("docker.network", FAIL, f"{setting}: {name} is not a Swarm overlay ({shape})",
                           f"use the overlay network Traefik is attached to, or {create}")
    if not network.attachable:
        return CheckResult("docker.network", FAIL, f"{setting}: {name} is not attachable ({shape})",
                           f"recreate it with --attachable ({create}) or name an attachable one")
    return CheckResult("docker.network", PASS, f"{name}: {shape}")


def _image(config: Config, image: ImageFacts | Unknown) -> CheckResult:
    name = config.deploy.image
    if isinstance(image, Unknown):
        return CheckResult("docker.image", FAIL, f"deploy.image {name}: {image.why}", "check the Docker daemon")
    if image.present:
        return CheckResult("docker.image", PASS, f"{name} is on this node")
    if image.pullable:
        return CheckResult("docker.image", PASS,
                           f"{name} is not on this node; its registry describes it (Swarm pulls it)")
    return CheckResult("docker.image", FAIL, f"deploy.image {name}: not on this node and not pullable: {image.detail}",
                       f"docker pull {name} (or log in to its registry), or fix deploy.image")


def ipvs_check(config: Config, facts: Facts) -> list[CheckResult]:
    ipvs, mode = facts.ipvs, config.deploy.endpoint_mode
    if ipvs is None:
        return []
    if mode == "dnsrr":
        return [CheckResult("docker.ipvs", PASS, "deploy.endpoint_mode = dnsrr: the service needs no IPVS")]
    fix = 'set deploy.endpoint_mode = "dnsrr" (no virtual IP, no IPVS needed)'
    if ipvs.loaded:
        return [CheckResult("docker.ipvs", PASS, "IPVS is loaded (endpoint_mode vip)")]
    if ipvs.module:
        return [CheckResult("docker.ipvs", PASS,
                            "IPVS is available as a kernel module (Docker loads it; endpoint_mode vip)")]
    if ipvs.module is None:
        return [CheckResult("docker.ipvs", WARN, "IPVS is not loaded and this kernel's module list cannot be read "
                            "(endpoint_mode vip: a virtual IP without IPVS accepts no connection)", fix)]
    return [CheckResult("docker.ipvs", FAIL, "this kernel has no IPVS (endpoint_mode vip: a virtual IP without IPVS "
                        "accepts no connection, Traefik answers 502)", fix)]


def dirs_checks(config: Config, facts: Facts) -> list[CheckResult]:
    """The directories deploy writes besides the route: its locks, and the pages in bind mode."""
    return [CheckResult(d.setting, FAIL, f"{d.setting}: cannot create files in {d.path}: {d.problem}",
                        f"set {d.setting} to a directory this user may write") if d.problem else
            CheckResult(d.setting, PASS, f"{d.path} is writable{'' if d.path.exists() else ' (made on first deploy)'}")
            for d in facts.writable_dirs]


def permission_checks(config: Config, facts: Facts) -> list[CheckResult]:
    """Who else may change what graphsite trusts. A token file others can read gives the zone's DNS away; a
    directory others can write in lets them add a route Traefik applies (dynamic_dir), plant a directory or link
    under a deployment's name (bind_root), or take a name's lock (lock_dir). The sticky bit does not help: it
    stops removing or renaming others' entries, not creating new ones. A directory owned by another user is
    theirs to chmod. WARN (deploy prints it and carries on), or FAIL with deploy.strict_permissions (deploy's
    preflight refuses)."""
    status = FAIL if config.deploy.strict_permissions else WARN
    return [_token_file(fact, status) if fact.setting == "dns.token_file" else _trusted_dir(fact, status)
            for fact in facts.permissions]


def _token_file(fact: Permissions, status: CheckStatus) -> CheckResult:
    name, mode = "permissions.token_file", stat.S_IMODE(fact.mode)
    readers = _who(mode, stat.S_IRGRP, stat.S_IROTH)
    if not readers:
        return CheckResult(name, PASS, f"dns.token_file {fact.path}: mode {mode:04o}, no one but its owner reads it")
    return CheckResult(name, status, f"dns.token_file {fact.path}: mode {mode:04o}, {readers} can read the Cloudflare "
                       "token", f"chmod 600 {fact.path}")


def _trusted_dir(fact: Permissions, status: CheckStatus) -> CheckResult:
    name, mode = f"permissions.{fact.setting.partition('.')[2]}", stat.S_IMODE(fact.mode)
    writers = _who(mode, stat.S_IWGRP, stat.S_IWOTH)
    where = f"{fact.setting} {fact.path}: mode {mode:04o}"
    if writers:
        sticky = " (sticky: that stops only the removal of others' files)" if mode & stat.S_ISVTX else ""
        return CheckResult(name, status,
                           f"{where}, {writers} can create files in it{sticky}", f"chmod go-w {fact.path}")
    if fact.uid not in (0, fact.user):
        return CheckResult(name, status, f"{where}, owned by uid {fact.uid} (not root, not this user), who can change "
                           "its mode", f"chown {fact.user} {fact.path}")
    return CheckResult(name, PASS, f"{where}, owned by uid {fact.uid}: no one else can create files in it")


def _who(mode: int, group: int, others: int) -> str:
    """Return 'its group', 'others', 'its group and others', or '' for the bits of `mode` among `group`, `others`."""
    return " and ".join(who for who, bit in (("its group", group), ("others", others)) if mode & bit)


# --- Traefik --------------------------------------------------------------------------------------------------


def traefik_checks(config: Config, facts: Facts) -> list[CheckResult]:
    directory = facts.dynamic_dir
    if directory is None:
        return []
    if isinstance(directory, Unknown):
        return [CheckResult("traefik.dynamic_dir", FAIL, directory.why,
                            "run graphsite as a user who may look into it (on Dokploy: root)"),
                *(_skip(name, "the dynamic directory cannot be read") for name in
                  ("traefik.files", "traefik.middleware", "traefik.middlewares"))]
    setting, path = "deploy.dynamic_dir", directory.path
    if not directory.is_dir:
        what = "does not exist" if not directory.exists else "is not a directory"
        return [CheckResult("traefik.dynamic_dir", FAIL, f"{setting}: {path} {what}",
                            "point it at the directory Traefik's file provider watches (Dokploy: "
                            "/etc/dokploy/traefik/dynamic)"),
                _skip("traefik.files", f"{path} is not a directory"),
                _skip("traefik.middleware", f"{path} is not a directory"),
                _skip("traefik.middlewares", f"{path} is not a directory")]
    listed = directory.files
    files = _count(len(listed), "file") if not isinstance(listed, Unknown) else "not every file read"
    checks = [CheckResult("traefik.dynamic_dir", PASS, f"{path} is a writable directory ({files})")
              if directory.writable else
              CheckResult("traefik.dynamic_dir", FAIL, f"{setting}: {path} is not writable by this user",
                          "run graphsite as a user who may write there (on Dokploy: root)")]
    if isinstance(listed, Unknown):  # Traefik reads it as its own user: what it loads there is unknown, not nothing
        return [*checks,
                CheckResult("traefik.files", FAIL, f"{listed.why}: the files Traefik reads there cannot be checked "
                            "(one it cannot load blocks every change of the file provider)",
                            f"run graphsite as a user who may read every file and directory under {path} "
                            "(on Dokploy: root)"),
                _skip("traefik.middleware", listed.why), _skip("traefik.middlewares", listed.why)]
    broken = [f for f in listed if f.errors]
    if broken:
        lines = [f"{f.path}: {error}" for f in broken for error in f.errors[:3]]
        checks.append(CheckResult("traefik.files", FAIL,
                                  f"{_count(len(broken), 'file')} Traefik cannot load (one bad file "
                                  "blocks every change of the file provider): " + "; ".join(lines),
                                  "fix or remove " + ", ".join(str(f.path) for f in broken)))
    else:
        checks.append(CheckResult("traefik.files", PASS, f"{files}: each parses and fits Traefik's v3 schema"))
    checks.append(_middleware(config, path, listed))
    checks.append(_operator_middlewares(config, path, listed))
    return checks


def _operator_middlewares(config: Config, path: Path, listed: tuple[RouteFile, ...]) -> CheckResult:
    """deploy.middlewares: each of the file provider's defined in some file of the directory (FAIL, or WARN with
    deploy.undefined_middleware = "warn"); another provider's is not visible from here."""
    from graphsite.publisher.route import qualified_middlewares

    names = qualified_middlewares(config.deploy.middlewares)
    if not names:
        return CheckResult("traefik.middlewares", PASS, "deploy.middlewares: none (the page's router has only its own)")
    defined = {f"{name}@file" for f in listed for name in f.middlewares}
    undefined = [name for name in names if name.endswith("@file") and name not in defined]
    others = [name for name in names if not name.endswith("@file")]
    elsewhere = f"; {', '.join(others)}: another provider's, not visible from here" if others else ""
    if not undefined:
        found = [name for name in names if name.endswith("@file")]
        return CheckResult("traefik.middlewares", PASS,
                           (f"deploy.middlewares: {', '.join(found)} defined in {path}" if found else
                      "deploy.middlewares: none of the file provider's") + elsewhere)
    refuse = config.deploy.undefined_middleware != "warn"
    return CheckResult("traefik.middlewares", FAIL if refuse else WARN,
                       f"deploy.middlewares: {', '.join(undefined)} defined in no file of {path}: Traefik "
                       f"{'would not build' if refuse else 'will not build'} the page's router until it is",
                       "define it there, fix the name"
                       + (', or set deploy.undefined_middleware = "warn"' if refuse else ""))


def _middleware(config: Config, path: Path, listed: tuple[RouteFile, ...]) -> CheckResult:
    name = config.deploy.redirect_middleware
    qualified = name if "@" in name else f"{name}@file"
    if not qualified.endswith("@file"):
        return _skip("traefik.middleware", f"deploy.redirect_middleware {name} comes from another provider, "
                     "not visible from here")
    bare = qualified.removesuffix("@file")
    defined = [f.path for f in listed if bare in f.middlewares]
    if defined:
        return CheckResult("traefik.middleware", PASS, f"{qualified} is defined in {defined[0]}")
    return CheckResult("traefik.middleware", FAIL,
                       f"deploy.redirect_middleware: {qualified} is defined in no file of {path}",
                       f"define it there (http.middlewares.{bare}.redirectScheme: {{scheme: https, permanent: "
                       "true}) or name a middleware that exists")


def static_checks(config: Config, facts: Facts) -> list[CheckResult]:
    static, deploy = facts.static, config.deploy
    if static is None:
        return []
    if isinstance(static, Unknown):
        return [_skip("traefik.static", static.why)]
    if static.error:
        return [CheckResult("traefik.static", FAIL, f"deploy.traefik_static: {static.path}: {static.error}",
                            "fix the file (Traefik reads it only when it starts), or point the setting elsewhere")]
    checks = []
    challenge = static.resolvers.get(deploy.cert_resolver)
    if challenge is None:
        known = ", ".join(sorted(static.resolvers)) or "none"
        checks.append(CheckResult("traefik.resolver", FAIL, f"deploy.cert_resolver: {static.path} defines no resolver "
                                  f"{deploy.cert_resolver} (defined: {known})", "name one of them, or define it"))
    elif deploy.tls == "wildcard" and challenge != "dnsChallenge":
        checks.append(CheckResult("traefik.resolver", FAIL,
                                  f"deploy.tls = wildcard, but resolver {deploy.cert_resolver} "
                                  f"uses {challenge}: only a DNS challenge can issue a wildcard certificate",
                                  'set deploy.tls = "host", or give the resolver a dnsChallenge'))
    else:
        checks.append(CheckResult("traefik.resolver", PASS, f"resolver {deploy.cert_resolver} ({challenge}) can issue "
                                  f"{'a wildcard' if deploy.tls == 'wildcard' else 'per-host'} certificates"))
    missing = [e for e in (deploy.https_entrypoint, deploy.http_entrypoint) if e not in static.entrypoints]
    checks.append(CheckResult("traefik.entrypoints", FAIL, f"{static.path} defines no entry point {', '.join(missing)} "
                              f"(defined: {', '.join(static.entrypoints) or 'none'})",
                              "fix deploy.https_entrypoint / deploy.http_entrypoint") if missing else
                  CheckResult("traefik.entrypoints", PASS, f"entry points {deploy.https_entrypoint}, "
                              f"{deploy.http_entrypoint} are defined"))
    if static.file_directory and Path(static.file_directory) != Path(deploy.dynamic_dir):
        checks.append(CheckResult("traefik.provider", WARN, f"Traefik's file provider watches {static.file_directory}, "
                                  f"not deploy.dynamic_dir {deploy.dynamic_dir}",
                                  "fine when a mount maps one onto the other; otherwise fix deploy.dynamic_dir"))
    return checks


# --- Cloudflare -----------------------------------------------------------------------------------------------


def cloudflare_checks(config: Config, facts: Facts) -> list[CheckResult]:
    token = facts.token
    if token is None:
        return []
    blocked = ("cloudflare.verify", "cloudflare.zone", "cloudflare.records")
    if isinstance(token, Unknown):
        return [CheckResult("cloudflare.token", FAIL, token.why, "fix dns.token_file, or set CLOUDFLARE_API_TOKEN")] + \
            [_skip(n, "no token") for n in blocked]
    if not token.source:
        return [CheckResult("cloudflare.token", FAIL, "no Cloudflare API token",
                            "set CLOUDFLARE_API_TOKEN or dns.token_file (a token with Zone:DNS:Edit on "
                            f"{config.site.domain})")] + [_skip(n, "no token") for n in blocked]
    checks = [_token_shape(token)]
    status = facts.token_status
    if isinstance(status, Unknown) or status != "active":
        why = status.why if isinstance(status, Unknown) else f"the token's status is {status}"
        checks.append(CheckResult("cloudflare.verify", FAIL, f"GET /user/tokens/verify: {why}",
                                  "create a new token (Zone:DNS:Edit on the zone) and configure it"))
        return checks + [_skip(n, "the token does not verify") for n in blocked[1:]]
    checks.append(CheckResult("cloudflare.verify", PASS, "GET /user/tokens/verify: active"))
    checks.append(_zone(config, facts))
    records = facts.records
    if records is None:
        checks.append(_skip("cloudflare.records", "no zone"))
    elif isinstance(records, Unknown):
        checks.append(CheckResult("cloudflare.records", FAIL, f"cannot list the zone's records: {records.why}",
                                  "give the token the Zone:DNS:Edit permission on the zone"))
    else:
        checks.append(CheckResult("cloudflare.records", PASS, f"records can be listed ({records} on the first page); "
                                  "DNS:Edit itself shows only when a deploy creates a record"))
    return checks


def _token_shape(token: Token) -> CheckResult:
    where = f"from {token.source}"
    if not token.charset_ok:
        return CheckResult("cloudflare.token", FAIL, f"the token {where} holds characters no Cloudflare token has "
                           "(spaces, quotes, non-ASCII)", "copy the token again, without quotes or line breaks")
    if token.length != TOKEN_LENGTH:
        return CheckResult("cloudflare.token", WARN, f"the token {where} has {token.length} characters, not the "
                           f"{TOKEN_LENGTH} of a Cloudflare API token (a Global API Key does not work here)",
                           "use an API token (My Profile → API Tokens), not the Global API Key")
    return CheckResult("cloudflare.token", PASS, f"present ({where}), {token.length} characters")


def _zone(config: Config, facts: Facts) -> CheckResult:
    zone, domain, zone_id = facts.zone, config.site.domain.lower().rstrip("."), config.dns.zone_id
    if isinstance(zone, Unknown):
        return CheckResult("cloudflare.zone", FAIL, zone.why, "check dns.zone_id and site.domain")
    if zone is None and facts.zone_looked_up:
        return CheckResult("cloudflare.zone", FAIL, f"site.domain: this token sees no zone named {domain}",
                           "check site.domain, or the token's zone resources")
    if zone is None:
        shape = "" if re.fullmatch(r"[0-9a-f]{32}", zone_id) else " (a zone id is 32 hex digits)"
        return CheckResult("cloudflare.zone", FAIL, f"dns.zone_id: no zone {zone_id} for this token{shape}",
                           "copy the zone id from the zone's Overview page, or leave dns.zone_id empty to look it up")
    if zone.name != domain:
        return CheckResult("cloudflare.zone", FAIL, f"dns.zone_id {zone.id} is the zone {zone.name}, not site.domain "
                           f"{domain}", "use the zone id of site.domain, or fix site.domain")
    how = "looked up by name" if facts.zone_looked_up else "dns.zone_id"
    return CheckResult("cloudflare.zone", PASS,
                       f"zone {zone.name} ({zone.id}, {how}, status {zone.status or 'unknown'})")


# --- DNS and TLS ----------------------------------------------------------------------------------------------


def record_content_check(config: Config, facts: Facts) -> list[CheckResult]:
    addresses, content, name = facts.addresses, config.dns.record_content, "dns.record_content"
    if addresses is None:
        return []
    try:
        address = ipaddress.ip_address(content)
    except ValueError:
        return [CheckResult(name, FAIL, f"{name}: {content!r} is not an IP address", "set this host's public IPv4")]
    if address.version != 4:
        return [CheckResult(name, FAIL, f"{name}: {content} is not IPv4 (graphsite creates A records)",
                            "set this host's public IPv4")]
    local = None if isinstance(addresses, Unknown) else content in addresses
    rehearsal = config.verify.resolve_https.rsplit(":", 1)[0] == content
    if not address.is_global:
        if local and rehearsal:
            return [CheckResult(name, PASS, f"{content} is this host's and private: a rehearsal (verify.resolve_https "
                                "reaches it)")]
        return [CheckResult(name, FAIL, f"{name}: {content} is not a public address: no one else can reach the page",
                            "set this host's public IPv4")]
    if local:
        return [CheckResult(name, PASS, f"{content} is a public IPv4 of this host")]
    why = addresses.why if isinstance(addresses, Unknown) else f"this host has {', '.join(addresses)}"
    return [CheckResult(name, WARN,
                        f"{content} is public but cannot be told to be this host's ({why}); behind NAT that "
                        "is expected", "check that the address reaches this host (the cloud console's public IP)")]


def ca_checks(config: Config, facts: Facts) -> list[CheckResult]:
    checks = []
    for bundle in facts.ca_bundles:
        configured = (config.dns if bundle.setting.startswith("dns") else config.verify).ca_bundle
        what = bundle.path if configured else f"empty: the default {bundle.path}"
        if isinstance(bundle.certificates, Unknown):
            checks.append(CheckResult(f"tls.{bundle.setting.split('.')[0]}_ca", FAIL,
                                      f"{bundle.setting}: {bundle.certificates.why}",
                                      "point it at a PEM file of CA certificates, or leave it empty for the default"))
        else:
            checks.append(CheckResult(f"tls.{bundle.setting.split('.')[0]}_ca", PASS,
                                      f"{bundle.setting}: {what} loads ({_count(bundle.certificates, 'certificate')})"))
    return checks


def evaluate(config: Config, facts: Facts) -> tuple[CheckResult, ...]:
    """Return every check the facts allow, in the order of a deploy: Docker, Traefik, Cloudflare, DNS, TLS."""
    return tuple(check for judge in (docker_checks, ipvs_check, dirs_checks, traefik_checks, permission_checks,
                                     static_checks, cloudflare_checks, record_content_check, ca_checks)
                 for check in judge(config, facts))
