"""The Traefik route as data (pure): the dynamic-configuration document, its check against Traefik's v3 schema,
its text with the stamp, and the reading of a stamp or a temporary's name. publisher/route_files.py writes,
reads and removes the files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import yaml

from graphsite.atomic import TEMPORARY_RANDOM, temporary_pattern
from graphsite.config import Config
from graphsite.errors import DeployError
from graphsite.publisher.deployment import NEEDS_PROOF, Claim, Leftover, Stamp
from graphsite.publisher.dynamic import schema_errors

# Traefik's file provider reads only .yml, .yaml and .toml files (pkg/provider/file: loadFileConfigFromDirectory):
# a temporary file ending otherwise is ignored. graphsite.atomic names it `.NAME.yml.<random>.tmp`; the first
# version named it `.NAME.<random>.graphsite-tmp`, still recognised (_LEGACY_TEMPORARY) so that what a killed write
# of that version left is found and removed. Both carry the deployment's name; <random> is only what graphsite
# writes there (atomic.TEMPORARY_RANDOM), so a name anyone else chose is never taken for one.
_TEMPORARY = temporary_pattern(r"(?P<name>[a-z0-9-]+)\.yml")
_LEGACY_TEMPORARY = re.compile(r"\.(?P<name>[a-z0-9-]+)\." + TEMPORARY_RANDOM + r"\.graphsite-tmp")

# Traefik's dynamic configuration as YAML data: its shape is Traefik's v3 schema's to check (check_route), not
# a Python type's, so its values stay Any.
RouteDocument: TypeAlias = dict[str, Any]


def auth_middleware(subdomain: str) -> str:
    """Return the name of the basicAuth middleware a private deployment's route file defines."""
    return f"{subdomain}-auth"


@dataclass(frozen=True)
class RouteSettings:
    """What a deployment's route is made from: the [deploy] settings of Traefik's routers, and the domain a
    wildcard certificate is asked for."""

    domain: str
    port: int
    tls: str
    cert_resolver: str
    https_entrypoint: str
    http_entrypoint: str
    redirect_middleware: str
    middlewares: tuple[str, ...]

    @classmethod
    def from_config(cls, config: Config) -> RouteSettings:
        deploy = config.deploy
        return cls(config.site.domain, deploy.port, deploy.tls, deploy.cert_resolver, deploy.https_entrypoint,
                   deploy.http_entrypoint, deploy.redirect_middleware, deploy.middlewares)


def route_document(settings: RouteSettings, subdomain: str, fqdn: str, *,
                   users: tuple[str, ...] = ()) -> RouteDocument:
    """Return the dynamic configuration routing https://<fqdn>/ to http://<subdomain>:<port>; with `users`
    (htpasswd lines, bcrypt) the websecure router asks for them first (a private report), then runs the
    operator's deploy.middlewares."""
    rule = f"Host(`{fqdn}`)"
    tls: dict[str, Any] = {"certResolver": settings.cert_resolver}
    if settings.tls == "wildcard":
        tls["domains"] = [{"main": settings.domain, "sans": [f"*.{settings.domain}"]}]
    service = f"{subdomain}-service"
    websecure: dict[str, Any] = {"rule": rule, "entryPoints": [settings.https_entrypoint], "service": service,
                                 "tls": tls}
    middlewares = [f"{auth_middleware(subdomain)}@file"] if users else []
    middlewares += list(settings.middlewares)
    if middlewares:
        websecure["middlewares"] = middlewares
    document: RouteDocument = {
        "http": {
            "routers": {
                f"{subdomain}-websecure": websecure,
                f"{subdomain}-web": {
                    "rule": rule, "entryPoints": [settings.http_entrypoint], "service": service,
                    "middlewares": [settings.redirect_middleware],
                },
            },
            "services": {
                service: {
                    "loadBalancer": {
                        "servers": [{"url": f"http://{subdomain}:{settings.port}"}],
                        "passHostHeader": True,
                    },
                },
            },
        },
    }
    if users:
        document["http"]["middlewares"] = {auth_middleware(subdomain): {"basicAuth": {"users": list(users)}}}
    return document


def route_users(document: RouteDocument | None, subdomain: str, path: Path | None = None) -> tuple[str, ...]:
    """Return the htpasswd lines of a route's basicAuth middleware (empty: the route has no such middleware, the
    deployment is public). Raise DeployError naming `path` when the route is not shaped as graphsite writes it
    (a hand-edited file): its users are then unknown, never none."""
    name = auth_middleware(subdomain)
    keys = ("http", "middlewares", name)
    table: Any = document or {}
    for depth, key in enumerate(keys):
        if not isinstance(table, dict):
            where = ".".join(keys[:depth]) or "the document"
            raise _unread_users(path, f"{where} is a {type(table).__name__}, not a mapping")
        if key not in table:
            return ()
        table = table[key]
        if table is None and key != name:  # `http:` or `middlewares:` left empty; `n-auth: ~` is not a middleware
            return ()
    basic = table.get("basicAuth") if isinstance(table, dict) else None
    users = basic.get("users") if isinstance(basic, dict) else None
    if not isinstance(users, list) or not users or not all(isinstance(line, str) for line in users):
        raise _unread_users(path, f"http.middlewares.{name} is not a basicAuth middleware with a list of users")
    return tuple(users)


def _unread_users(path: Path | None, why: str) -> DeployError:
    return DeployError(f"{path or 'the route file'}: {why}: who may read the deployment cannot be read from it",
                       hint="fix or remove the route file, or deploy with --auth-file (its users) or --public")


def dump(document: RouteDocument, stamp: Stamp | None = None) -> str:
    """Return the route file's text: the stamp as a leading YAML comment, then the document."""
    head = stamp.route_comment() if stamp else ""
    return head + yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def check_route(document: object, path: Path) -> None:
    """Raise DeployError naming each schema violation of the route for `path`."""
    errors = schema_errors(document)
    if errors:
        raise DeployError(f"{path}: the route breaks Traefik's v3 schema, not written:\n  " + "\n  ".join(errors),
                          hint="this is a graphsite bug or a bad [deploy] setting; nothing was changed")


def _our_shape(data: RouteDocument | None, name: str) -> bool:
    """Return whether `data` holds graphsite's route definitions of `name` by name, and nothing else; any value of
    another type where a mapping belongs (`http: 5`, a list of routers) is not graphsite's shape."""
    http = (data or {}).get("http") or {}
    if not isinstance(http, dict):
        return False
    parts = {key: http.get(key) or {} for key in ("routers", "services", "middlewares")}
    if not all(isinstance(part, dict) for part in parts.values()):
        return False
    return (set(http) <= {"routers", "services", "middlewares"}
            and set(parts["routers"]) == {f"{name}-websecure", f"{name}-web"}
            and set(parts["services"]) == {f"{name}-service"}
            and set(parts["middlewares"]) <= {auth_middleware(name)})


def stamp_of_text(text: str, name: str) -> Stamp | None:
    """Return the stamp of a route file's `text` for the deployment `name` when it has graphsite's shape (only
    its own routers and service, by name) and a leading comment that parses completely, else None (whose it
    is, is the stamp's `claim` to say)."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):  # not a document graphsite wrote (a number of 5,000
        return None                                       # digits, brackets nested thousands deep)
    if not isinstance(data, dict) or not _our_shape(data, name):
        return None
    stamp = Stamp.from_route_text(text)
    return stamp if stamp is not None and stamp.name == name else None


def temporary_name(filename: str) -> str | None:
    """Return the deployment a temporary route file's name carries, or None when it is not one."""
    match = _TEMPORARY.fullmatch(filename) or _LEGACY_TEMPORARY.fullmatch(filename)
    return match["name"] if match else None


def temporary_claim(head: str, name: str, domain: str) -> Claim | None:
    """Return whose a temporary route file for `name` beginning with `head` is under `domain` (its `adopted` to
    say), None when graphsite did not write it: a whole stamp's claim; OURS or OTHER once its fqdn is written
    whole (the space after it with it); UNFINISHED for nothing yet or a write cut short before or inside its fqdn
    (`fqdn=blog.exam` names no domain yet: example.com and example.org alike); OTHER for one cut inside a fqdn
    that already parts from this configuration's."""
    stamp = Stamp.from_route_text(head)
    if stamp is not None:
        return stamp.claim(name, domain)
    first, newline, _ = head.partition("\n")
    start = Stamp(name).route_comment().split(" fqdn=", 1)[0] + " "  # "# graphsite: stamp=2 name=NAME "
    if newline or not (start.startswith(first) or first.startswith(start)):
        return None
    rest = first[len(start):]
    if "fqdn=".startswith(rest):  # cut before its fqdn began: it says nothing of its domain
        return Claim.UNFINISHED
    written, space, _ = rest.removeprefix("fqdn=").partition(" ")
    wanted = f"{name}.{domain}"
    if not rest.startswith("fqdn="):
        return None
    if space:
        return Claim.OURS if written == wanted else Claim.OTHER
    return Claim.UNFINISHED if wanted.startswith(written) else Claim.OTHER


def qualified_middlewares(names: tuple[str, ...]) -> list[str]:
    """Return deploy.middlewares as Traefik reads a router's names: one without a provider is the file
    provider's (`name@file`)."""
    return [name if "@" in name else f"{name}@file" for name in names]


def stamp_in(raw: bytes, name: str) -> Stamp | None:
    """Return the stamp of the content `raw` of route file NAME.yml when it has graphsite's shape and a whole
    leading stamp comment for NAME, else None (bytes that are not UTF-8 are not a document graphsite wrote)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return stamp_of_text(text, name)


def temporary_owner(filename: str, head: bytes, domain: str) -> tuple[str, Leftover] | None:
    """Return the deployment whose killed write left the temporary route file `filename` beginning with `head`
    (its first 1024 bytes) under `domain`'s configuration, with what it is (its claim: OURS, or one of
    NEEDS_PROOF that `adopted` decides; and the whole stamp of that name it carries, if any), or None when it is
    not one. The claim and the stamp come from the same bytes: the one read of the file."""
    name = temporary_name(filename)
    text = head[:1024].decode("utf-8", errors="replace")
    owner = temporary_claim(text, name, domain) if name else None
    if name is None or owner is None or not (owner == Claim.OURS or owner in NEEDS_PROOF):
        return None
    stamp = Stamp.from_route_text(text)
    return name, Leftover(owner, stamp if stamp is not None and stamp.name == name else None)
