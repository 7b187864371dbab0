"""Translate Traefik's merged dynamic configuration into the edge Caddy's JSON configuration: pure functions.

Semantics follow Traefik v3's documentation (docs/lab.md has the table): routers are tried longest rule first;
a router whose service or middleware does not exist, or whose rule does not parse, is not built (Traefik logs
a router error and serves the others); a TLS router serves only the TLS entry point; a host no router matches
gets `404 page not found`; an unknown SNI gets a default certificate no client trusts (Traefik's
`TRAEFIK DEFAULT CERT`)."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from graphsite_lab.traefik.files import Dynamic
from graphsite_lab.traefik.subset import rule_hosts

NOT_FOUND = "404 page not found\n"
DEFAULT_CERT_NAME = "traefik-default.invalid"  # the SNI name the default certificate is issued for
DEFAULT_CA = "traefik-default"
LAB_CA = "local"  # Caddy's internal CA: its root is .lab/ca.pem
TEXT = {"Content-Type": ["text/plain; charset=utf-8"], "X-Content-Type-Options": ["nosniff"]}
# The header by which `verify` asks the lab's edge for one task by its overlay address (not Traefik: a lab aid)
TASK_HEADER = "X-Graphsite-Task"
_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# Traefik entry point → (Caddy server, whether it terminates TLS)
ENTRY_POINTS = {"websecure": True, "web": False}


class RouterError(ValueError):
    """A router Traefik would not build (its error is logged, the other routers are served)."""


@dataclass(frozen=True)
class EdgeSettings:
    """What the edge Caddy is, besides the routes: its ports inside the container, its admin socket, the
    certificate resolvers of Traefik's static configuration (Dokploy's: letsencrypt) and the certificates'
    lifetimes (long enough for verify's 14-day check)."""

    https_port: int = 8443
    http_port: int = 8080
    admin_listen: str = "unix//config/admin.sock"
    resolvers: tuple[str, ...] = ("letsencrypt",)
    leaf_lifetime: str = "2160h"  # 90 days
    intermediate_lifetime: str = "4320h"  # 180 days
    task_subnet: str = ""  # the lab overlay's IPv4 subnet: every router serves task_route (empty: no such route)
    task_header: str = TASK_HEADER


@dataclass(frozen=True)
class Translation:
    config: dict[str, Any]
    config_id: str  # the `@id` the edge carries while this configuration is loaded
    router_errors: tuple[str, ...]
    served: tuple[str, ...]  # "name: entry point host, …" of every router built


def static(status: int, body: str = "", headers: dict[str, list[str]] | None = None) -> dict[str, Any]:
    handler: dict[str, Any] = {"handler": "static_response", "status_code": status}
    if body:
        handler["body"] = body
    if headers:
        handler["headers"] = headers
    return handler


def priority(item: tuple[str, dict[str, Any]]) -> tuple[int, str]:
    """Traefik's default router order: the longest rule first (priority = rule length)."""
    name, router = item
    return -len(str(router.get("rule", ""))), name


def _local(reference: str, kind: str, defined: dict[str, Any]) -> dict[str, Any]:
    """Return the definition a router's reference names; `name@file` and `name` (the router's own provider,
    here the file provider) resolve in the file provider; another provider does not exist in the lab."""
    name, _, provider = reference.partition("@")
    if provider and provider != "file":
        raise RouterError(f"{kind} {reference}: provider {provider} does not exist in the lab (only @file)")
    if name not in defined:
        raise RouterError(f"{kind} {reference} does not exist")
    return defined[name]


def redirect_scheme(spec: dict[str, Any], entry_scheme: str) -> list[dict[str, Any]]:
    """redirectScheme: redirect to `scheme` (and `port`, left out when it is the scheme's default); 301/308
    when permanent, 302/307 otherwise (308/307 for methods other than GET, as Traefik v3); a request already
    on the target scheme passes through."""
    scheme = str(spec.get("scheme") or "")
    if not scheme:
        raise RouterError("redirectScheme: scheme is empty")
    if scheme == entry_scheme:
        return []
    port = str(spec.get("port") or "")
    suffix = "" if port in ("", {"http": "80", "https": "443"}.get(scheme)) else f":{port}"
    location = {"Location": [f"{scheme}://{{http.request.host}}{suffix}{{http.request.uri}}"]}
    get, other = (301, 308) if spec.get("permanent") else (302, 307)
    return [{"match": [{"method": ["GET"]}], "handle": [static(get, headers=location)]},
            {"handle": [static(other, headers=location)]}]


def basic_auth(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """basicAuth: `user:bcrypt-hash` lines, realm (default traefik), removeHeader (strip Authorization)."""
    accounts = []
    for line in spec.get("users") or []:
        user, _, hashed = str(line).partition(":")
        accounts.append({"username": user, "password": hashed})
    handlers: list[dict[str, Any]] = [{"handler": "authentication", "providers": {"http_basic": {
        "accounts": accounts, "realm": spec.get("realm") or "traefik", "hash": {"algorithm": "bcrypt"}}}}]
    if spec.get("removeHeader"):
        handlers.append({"handler": "headers", "request": {"delete": ["Authorization"]}})
    return [{"handle": handlers}]


def _security_headers(spec: dict[str, Any], entry_scheme: str) -> dict[str, str]:
    found: dict[str, str] = {}
    if spec.get("contentTypeNosniff"):
        found["X-Content-Type-Options"] = "nosniff"
    if spec.get("frameDeny"):
        found["X-Frame-Options"] = "DENY"
    if spec.get("customFrameOptionsValue"):
        found["X-Frame-Options"] = str(spec["customFrameOptionsValue"])
    for key, header in (("referrerPolicy", "Referrer-Policy"), ("contentSecurityPolicy", "Content-Security-Policy"),
                        ("permissionsPolicy", "Permissions-Policy")):
        if spec.get(key):
            found[header] = str(spec[key])
    seconds = int(spec.get("stsSeconds") or 0)
    if seconds > 0 and (entry_scheme == "https" or spec.get("forceSTSHeader")):  # HSTS only over TLS
        value = f"max-age={seconds}"
        value += "; includeSubDomains" if spec.get("stsIncludeSubdomains") else ""
        value += "; preload" if spec.get("stsPreload") else ""
        found["Strict-Transport-Security"] = value
    return found


def headers(spec: dict[str, Any], entry_scheme: str) -> list[dict[str, Any]]:
    """headers: custom request/response headers (an empty value removes the header) and the security
    headers of the subset; response headers replace the service's own, as Traefik's do."""
    handler: dict[str, Any] = {"handler": "headers"}
    for side, custom, extra in (("request", spec.get("customRequestHeaders") or {}, {}),
                                ("response", spec.get("customResponseHeaders") or {},
                                 _security_headers(spec, entry_scheme))):
        values = {**extra, **{str(k): str(v) for k, v in custom.items()}}
        ops: dict[str, Any] = {}
        kept = {name: [value] for name, value in values.items() if value != ""}
        removed = sorted(name for name, value in values.items() if value == "")
        if kept:
            ops["set"] = kept
        if removed:
            ops["delete"] = removed
        if ops:
            if side == "response":
                ops["deferred"] = True
            handler[side] = ops
    return [{"handle": [handler]}] if len(handler) > 1 else []


def ip_allow_list(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """ipAllowList: a client outside `sourceRange` (the connection's address) gets 403 Forbidden."""
    ranges = [str(item) for item in spec.get("sourceRange") or []]
    return [{"match": [{"not": [{"remote_ip": {"ranges": ranges}}]}], "handle": [static(403, "Forbidden", TEXT)]}]


def middleware_routes(spec: dict[str, Any], entry_scheme: str) -> list[dict[str, Any]]:
    """Return the Caddy routes one middleware becomes on an entry point of scheme `entry_scheme`."""
    if "redirectScheme" in spec:
        return redirect_scheme(spec["redirectScheme"] or {}, entry_scheme)
    if "basicAuth" in spec:
        return basic_auth(spec["basicAuth"] or {})
    if "headers" in spec:
        return headers(spec["headers"] or {}, entry_scheme)
    if "ipAllowList" in spec:
        return ip_allow_list(spec["ipAllowList"] or {})
    raise RouterError(f"middleware kind {sorted(spec)} is outside the lab's subset")


def dial(url: str) -> str:
    """Return Caddy's dial address of an http://host[:port] server URL."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 80}"


def service_handler(spec: dict[str, Any]) -> dict[str, Any]:
    """loadBalancer: round robin over `servers`; passHostHeader (default true) keeps the client's Host."""
    balancer = spec.get("loadBalancer") or {}
    servers = balancer.get("servers") or []
    if not servers:
        return static(503, "Service Unavailable", TEXT)
    handler: dict[str, Any] = {"handler": "reverse_proxy", "upstreams": [{"dial": dial(s["url"])} for s in servers],
                               "load_balancing": {"selection_policy": {"policy": "round_robin"}}}
    if balancer.get("passHostHeader") is False:
        handler["headers"] = {"request": {"set": {"Host": ["{http.reverse_proxy.upstream.hostport}"]}}}
    return handler


def subnet_pattern(subnet: str) -> str:
    """Return a regular expression that matches exactly the dotted IPv4 addresses inside `subnet` (no leading
    zeros, no other form); with no subnet, one that matches nothing."""
    if not subnet:
        return "^$.^"
    network = ipaddress.IPv4Network(subnet, strict=False)
    octets: list[str] = []
    bits = network.prefixlen
    for value in network.network_address.packed:
        if bits >= 8:
            octets.append(str(value))
        elif bits == 0:
            octets.append(_OCTET)
        else:
            free = 8 - bits
            octets.append("(" + "|".join(str(value + n) for n in range(1 << free)) + ")")
        bits = max(bits - 8, 0)
    return "^" + r"\.".join(octets) + "$"


def task_route(service: dict[str, Any], settings: EdgeSettings) -> list[dict[str, Any]]:
    """The lab's per-task route (NOT Traefik behaviour: a lab aid for `verify`): a request whose
    `settings.task_header` holds an address inside the overlay's subnet is proxied to that address on the port
    of the router's service, after the router's middlewares, so that `verify` reaches every task of a service
    and not only the one the balancer picks. Any other value, or none, goes to the service as Traefik would."""
    if not settings.task_subnet or service.get("handler") != "reverse_proxy":
        return []
    port = service["upstreams"][0]["dial"].rsplit(":", 1)[1]
    task = {key: value for key, value in service.items() if key not in ("upstreams", "load_balancing")}
    task["upstreams"] = [{"dial": f"{{http.request.header.{settings.task_header}}}:{port}"}]
    match = {"header_regexp": {settings.task_header: {"name": "task", "pattern": subnet_pattern(settings.task_subnet)}}}
    return [{"match": [match], "handle": [task], "terminal": True}]


def router_routes(name: str, router: dict[str, Any], dynamic: Dynamic,
                  settings: EdgeSettings | None = None) -> tuple[list[str], dict[str, dict]]:
    """Return the router's hosts and its Caddy route per entry point it serves; raise RouterError when
    Traefik would not build it."""
    try:
        hosts = rule_hosts(str(router.get("rule", "")))
    except ValueError as exc:
        raise RouterError(f"rule: {exc}") from None
    service = service_handler(_local(str(router.get("service", "")), "service", dynamic.services))
    middlewares = [_local(str(ref), "middleware", dynamic.middlewares) for ref in router.get("middlewares") or []]
    points = router.get("entryPoints") or list(ENTRY_POINTS)  # none listed: every entry point
    unknown = [point for point in points if point not in ENTRY_POINTS]
    if unknown:
        raise RouterError(f"entryPoint {', '.join(unknown)} does not exist (the lab has web and websecure)")
    routes = {}
    for point in points:
        scheme = "https" if ENTRY_POINTS[point] else "http"
        chain = [route for spec in middlewares for route in middleware_routes(spec, scheme)]
        task = task_route(service, settings or EdgeSettings())
        routes[point] = {"match": [{"host": hosts}], "terminal": True,
                         "handle": [{"handler": "subroute", "routes": [*chain, *task, {"handle": [service]}]}]}
    return hosts, routes


def certificate_names(router: dict[str, Any], hosts: list[str], resolvers: tuple[str, ...]) -> tuple[list[str], str]:
    """Return the names the router's certificate covers (none: the default certificate) and a note when its
    resolver does not exist. `domains` main/sans replace the rule's hosts."""
    tls = router.get("tls")
    if not isinstance(tls, dict):
        return [], ""
    domains = tls.get("domains") or []
    names = [str(n).lower() for d in domains for n in [d.get("main", ""), *(d.get("sans") or [])] if n]
    resolver = tls.get("certResolver")
    if resolver and resolver not in resolvers:
        return [], f"certResolver {resolver} does not exist (the lab has {', '.join(resolvers)}): default certificate"
    if names:
        return names, ""
    return (hosts if resolver else []), ""


def caddy_config(dynamic: Dynamic, settings: EdgeSettings | None = None) -> Translation:
    """Return the edge's whole Caddy configuration for `dynamic`, with the routers Traefik would not build."""
    settings = settings or EdgeSettings()
    routes: dict[str, list[dict[str, Any]]] = {point: [] for point in ENTRY_POINTS}
    errors: list[str] = []
    served: list[str] = []
    subjects: list[str] = []
    for name, router in sorted(dynamic.routers.items(), key=priority):
        try:
            hosts, by_point = router_routes(name, router, dynamic, settings)
        except RouterError as exc:
            errors.append(f"router {name}: {exc}")
            continue
        tls = "tls" in router
        for point, route in by_point.items():
            if tls != ENTRY_POINTS[point]:
                if not router.get("entryPoints"):
                    continue  # every entry point by default: only the matching ones serve it
                errors.append(f"router {name}: not served on {point} ("
                              + ("tls is set but the lab's web entry point has no TLS)" if tls
                                 else "no tls: Traefik would answer plain HTTP on the TLS port)"))
                continue
            routes[point].append(route)
            served.append(f"{name}: {point} {' '.join(hosts)}")
        names, note = certificate_names(router, hosts, settings.resolvers)
        subjects.extend(n for n in names if n not in subjects)
        if note:
            errors.append(f"router {name}: {note}")
    config = _whole(routes, subjects, settings)
    config_id = "graphsite-lab-" + hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    config["apps"]["http"]["servers"]["websecure"]["@id"] = config_id
    return Translation(config, config_id, tuple(errors), tuple(served))


def _whole(routes: dict[str, list[dict[str, Any]]], subjects: list[str], settings: EdgeSettings) -> dict[str, Any]:
    not_found = {"handle": [static(404, NOT_FOUND, TEXT)]}
    issuer = {"module": "internal", "ca": LAB_CA, "lifetime": settings.leaf_lifetime}
    default_issuer = {"module": "internal", "ca": DEFAULT_CA, "lifetime": settings.leaf_lifetime}
    policies: list[dict[str, Any]] = [{"subjects": [DEFAULT_CERT_NAME], "issuers": [default_issuer]}]
    if subjects:
        policies.insert(0, {"subjects": subjects, "issuers": [issuer]})
    return {
        "admin": {"listen": settings.admin_listen},
        "apps": {
            "pki": {"certificate_authorities": {
                LAB_CA: {"install_trust": False, "intermediate_lifetime": settings.intermediate_lifetime},
                DEFAULT_CA: {"name": "TRAEFIK DEFAULT CERT", "install_trust": False}}},
            "tls": {"automation": {"policies": policies},
                    "certificates": {"automate": [*subjects, DEFAULT_CERT_NAME]}},
            "http": {"http_port": settings.http_port, "https_port": settings.https_port, "servers": {
                "websecure": {"listen": [f":{settings.https_port}"], "automatic_https": {"disable": True},
                              "tls_connection_policies": [{"fallback_sni": DEFAULT_CERT_NAME}],
                              "routes": [*routes["websecure"], not_found]},
                "web": {"listen": [f":{settings.http_port}"], "automatic_https": {"disable": True},
                        "routes": [*routes["web"], not_found]},
            }},
        },
    }
