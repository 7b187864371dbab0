"""The part of Traefik's dynamic configuration the lab implements, as data, and the check that refuses the rest.

Anything else would be accepted by Traefik but silently mean nothing in the lab, so a key outside this subset
rejects the whole configuration with a message that names the key (Traefik's own decoder does the same for a
key it does not know)."""

from __future__ import annotations

import re
from typing import Any

# A mapping of supported keys to what may sit under each: a nested dict, LEAF (any value of the schema's
# type), or NAMED (a mapping of user-chosen names, each checked against the value).
LEAF: dict[str, Any] = {}
NAMED = "*"

ROUTER = {"rule": LEAF, "entryPoints": LEAF, "middlewares": LEAF, "service": LEAF,
          "tls": {"certResolver": LEAF, "domains": LEAF}}
HEADERS = {
    "customRequestHeaders": LEAF, "customResponseHeaders": LEAF, "contentTypeNosniff": LEAF,
    "frameDeny": LEAF, "customFrameOptionsValue": LEAF, "referrerPolicy": LEAF,
    "contentSecurityPolicy": LEAF, "permissionsPolicy": LEAF, "stsSeconds": LEAF,
    "stsIncludeSubdomains": LEAF, "stsPreload": LEAF, "forceSTSHeader": LEAF,
}
MIDDLEWARE = {
    "redirectScheme": {"scheme": LEAF, "permanent": LEAF, "port": LEAF},
    "basicAuth": {"users": LEAF, "realm": LEAF, "removeHeader": LEAF},
    "headers": HEADERS,
    "ipAllowList": {"sourceRange": LEAF},
}
SERVICE = {"loadBalancer": {"servers": LEAF, "passHostHeader": LEAF}}
DYNAMIC = {"http": {"routers": {NAMED: ROUTER}, "middlewares": {NAMED: MIDDLEWARE}, "services": {NAMED: SERVICE}}}

BCRYPT = re.compile(r"^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$")
_HOST = re.compile(r"^Host\(\s*`([^`]+)`\s*\)$")
_MATCHERS = re.compile(r"\b(Header|HeaderRegexp|Host|HostRegexp|Method|Path|PathPrefix|PathRegexp|Query|"
                       r"QueryRegexp|ClientIP|HostSNI|HostSNIRegexp|ALPN)\(")


def refusals(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Return (key path, message) for every key outside the subset and every supported key the lab cannot
    honour as written (a rule other than Host alternatives, a non-bcrypt password, a server URL with a path)."""
    found: list[tuple[str, str]] = []
    _walk(data, DYNAMIC, "", found)
    http = _mapping(data.get("http"))
    for name, router in _named(http, "routers"):
        rule = router.get("rule")
        if isinstance(rule, str) and unsupported_rule(rule):
            found.append((f"http.routers.{name}.rule", unsupported_rule(rule)))
    for name, middleware in _named(http, "middlewares"):
        users = _mapping(middleware.get("basicAuth")).get("users") or []
        for index, line in enumerate(users if isinstance(users, list) else []):
            _, _, hashed = str(line).partition(":")
            if not BCRYPT.match(hashed):
                found.append((f"http.middlewares.{name}.basicAuth.users[{index}]",
                               "only bcrypt hashes ($2y$, $2a$, $2b$) are in the lab's subset"))
    for name, service in _named(http, "services"):
        servers = _mapping(service.get("loadBalancer")).get("servers") or []
        for index, server in enumerate(servers if isinstance(servers, list) else []):
            problem = unsupported_url(str(_mapping(server).get("url", "")))
            if problem:
                found.append((f"http.services.{name}.loadBalancer.servers[{index}].url", problem))
    return found


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _named(http: dict[str, Any], section: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name, value) for name, value in _mapping(http.get(section)).items() if isinstance(value, dict)]


def _walk(value: Any, spec: dict[str, Any], path: str, found: list[tuple[str, str]]) -> None:
    if spec is LEAF or not isinstance(value, dict):
        return
    for key, child in value.items():
        where = f"{path}.{key}" if path else str(key)
        if NAMED in spec:
            _walk(child, spec[NAMED], where, found)
        elif key in spec:
            _walk(child, spec[key], where, found)
        else:
            found.append((where, f"`{key}` is outside the lab's Traefik subset (docs/lab.md lists what it supports)"))


def unsupported_rule(rule: str) -> str:
    """Return why the lab cannot route `rule` when it uses a matcher other than Host (empty: supported).
    A rule that uses only Host but is malformed is Traefik's router error, not a refusal (see rule_hosts)."""
    others = sorted({name for name in _MATCHERS.findall(rule) if name != "Host"})
    if others:
        return f"matcher {', '.join(others)} is outside the lab's subset (only Host(`…`) joined by ||)"
    if "&&" in rule or "!" in rule:
        return "only Host(`…`) alternatives joined by || are in the lab's subset"
    return ""


def rule_hosts(rule: str) -> list[str]:
    """Return the hosts of a rule `Host(`a`) || Host(`b`)` (lower case); raise ValueError when malformed."""
    hosts = []
    for part in rule.split("||"):
        match = _HOST.match(part.strip())
        if not match:
            raise ValueError(f"cannot parse {part.strip()!r} as Host(`name`)")
        hosts.append(match.group(1).lower())
    return hosts


def unsupported_url(url: str) -> str:
    """Return why the lab cannot proxy to `url` (empty: it can): http://host:port with no path only."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number
    except ValueError as exc:
        return f"{url!r} is not a URL: {exc}"
    if parts.scheme != "http" or not parts.hostname:
        return f"{url!r}: only http://host[:port] servers are in the lab's subset"
    if parts.path not in ("", "/") or parts.query:
        return f"{url!r}: a server URL with a path or query is outside the lab's subset"
    return ""
