"""The Traefik route: a dynamic-configuration file made as data, checked against Traefik's v3 schema,
written atomically (one unparsable file in the directory stops Traefik applying any change).

The route file and its temporaries are read, judged, written and removed without following a symbolic link
(publisher/files.py): a link named like a route is never graphsite's, and is refused, never replaced."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from graphsite.atomic import TEMPORARY_SUFFIX, write_atomic
from graphsite.config import Config
from graphsite.errors import DeployError
from graphsite.publisher import files
from graphsite.publisher.deployment import Claim, Stamp
from graphsite.publisher.dynamic import parse_text, schema_errors

# Traefik's file provider reads only .yml, .yaml and .toml files (pkg/provider/file: loadFileConfigFromDirectory):
# a temporary file ending otherwise is ignored. graphsite.atomic names it `.NAME.yml.<random>.tmp`; the first
# version named it `.NAME.<random>.graphsite-tmp`. Both still carry the deployment's name.
_TEMPORARY = re.compile(r"^\.(?P<name>[a-z0-9-]+)\.(?:yml\.[^/]*" + re.escape(TEMPORARY_SUFFIX)
                        + r"|[^/]*\.graphsite-tmp)$")


def auth_middleware(subdomain: str) -> str:
    """Return the name of the basicAuth middleware a private deployment's route file defines."""
    return f"{subdomain}-auth"


def route_document(config: Config, subdomain: str, fqdn: str, *, users: tuple[str, ...] = ()) -> dict:
    """Return the dynamic configuration routing https://<fqdn>/ to http://<subdomain>:<port>; with `users`
    (htpasswd lines, bcrypt) the websecure router asks for them first (a private report), then runs the
    operator's deploy.middlewares."""
    deploy = config.deploy
    rule = f"Host(`{fqdn}`)"
    tls: dict = {"certResolver": deploy.cert_resolver}
    if deploy.tls == "wildcard":
        tls["domains"] = [{"main": config.site.domain, "sans": [f"*.{config.site.domain}"]}]
    service = f"{subdomain}-service"
    websecure: dict = {"rule": rule, "entryPoints": [deploy.https_entrypoint], "service": service, "tls": tls}
    middlewares = [f"{auth_middleware(subdomain)}@file"] if users else []
    middlewares += list(deploy.middlewares)
    if middlewares:
        websecure["middlewares"] = middlewares
    document: dict = {
        "http": {
            "routers": {
                f"{subdomain}-websecure": websecure,
                f"{subdomain}-web": {
                    "rule": rule, "entryPoints": [deploy.http_entrypoint], "service": service,
                    "middlewares": [deploy.redirect_middleware],
                },
            },
            "services": {
                service: {
                    "loadBalancer": {
                        "servers": [{"url": f"http://{subdomain}:{deploy.port}"}],
                        "passHostHeader": True,
                    },
                },
            },
        },
    }
    if users:
        document["http"]["middlewares"] = {auth_middleware(subdomain): {"basicAuth": {"users": list(users)}}}
    return document


def route_users(document: dict | None, subdomain: str) -> tuple[str, ...]:
    """Return the htpasswd lines of a route's basicAuth middleware (empty: the deployment is public)."""
    middlewares = ((document or {}).get("http") or {}).get("middlewares") or {}
    basic = (middlewares.get(auth_middleware(subdomain)) or {}).get("basicAuth") or {}
    return tuple(str(line) for line in basic.get("users") or ())


def dump(document: dict, stamp: Stamp | None = None) -> str:
    """Return the route file's text: the stamp as a leading YAML comment, then the document."""
    head = stamp.route_comment() if stamp else ""
    return head + yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def check_route(document: object, path: Path) -> None:
    """Raise DeployError naming each schema violation of the route for `path`."""
    errors = schema_errors(document)
    if errors:
        raise DeployError(f"{path}: the route breaks Traefik's v3 schema, not written:\n  " + "\n  ".join(errors),
                          hint="this is a graphsite bug or a bad [deploy] setting; nothing was changed")


def write_route(path: Path, document: dict, stamp: Stamp | None = None) -> bool:
    """Write the route atomically with mode 0644 after checking it; return False when it was already there.
    A symbolic link at `path` is refused."""
    check_route(document, path)
    text = dump(document, stamp)
    if route_text(path) == text:
        return False
    try:
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o644)
    except OSError as exc:
        raise DeployError(f"{path}: cannot write the route: {exc.strerror or exc}",
                          hint="check deploy.dynamic_dir and its permissions") from None
    return True


def remove_file(path: Path) -> bool:
    """Remove a route file (or a temporary one); return False when it was absent; raise DeployError naming the
    file when the directory refuses, or when it is a symbolic link (graphsite makes none: not its own)."""
    refusal = files.link_refusal(path, "route file")
    if refusal is not None:
        raise refusal
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise DeployError(f"{path}: cannot remove the route: {exc.strerror or exc}",
                          hint="check deploy.dynamic_dir and its permissions, then run the command again") from None
    return True


def read_route(path: Path) -> dict | None:
    """Return the parsed route file, or None when it is missing, empty, not UTF-8, not a YAML mapping, or a
    symbolic link (never followed); raise DeployError when it could not be read (a private page's credentials
    are read here: a failed read must not make it public)."""
    text = route_text(path, refuse_link=False)
    return parse_text(path, text).data or None if text is not None else None


def route_text(path: Path, *, refuse_link: bool = True) -> str | None:
    """Return the text of the route file at `path`, None when there is none or it is not UTF-8 text; raise
    DeployError when it could not be read, or (with `refuse_link`) when it is a symbolic link (never followed,
    never replaced)."""
    refusal = files.link_refusal(path, "route file") if refuse_link else None
    if refusal is not None:
        raise refusal
    data = files.read_ours(path.parent, path.name, what="the route file")
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _our_shape(data: dict | None, name: str) -> bool:
    http = (data or {}).get("http") or {}
    return (set(http) <= {"routers", "services", "middlewares"}
            and set(http.get("routers") or {}) == {f"{name}-websecure", f"{name}-web"}
            and set(http.get("services") or {}) == {f"{name}-service"}
            and set(http.get("middlewares") or {}) <= {auth_middleware(name)})


def route_stamp(path: Path) -> Stamp | None:
    """Return the stamp of the route file at `path` when it has graphsite's shape (only its own routers and
    service, by name) and a leading comment that parses completely, else None (whose it is, is the stamp's
    `claim` to say)."""
    raw = files.read_ours(path.parent, path.name, what="the route file")
    return stamp_in(raw, path.stem) if raw is not None else None


def stamp_in(raw: bytes, name: str) -> Stamp | None:
    """Return the stamp of the content `raw` of route file NAME.yml when it has graphsite's shape and a whole
    leading stamp comment for NAME, else None."""
    try:
        text = raw.decode("utf-8")
        data = yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError):  # not a document graphsite wrote
        return None
    if not isinstance(data, dict) or not _our_shape(data, name):
        return None
    stamp = Stamp.from_route_text(text)
    return stamp if stamp is not None and stamp.name == name else None


def temporaries(dynamic_dir: Path, domain: str) -> dict[str, list[Path]]:
    """Return {subdomain: [paths]} of the temporary route files a killed write of the configuration of `domain`
    left behind: named after the deployment, and empty or stamped by graphsite for it (a stamp of another
    configuration, on a shared directory, is not)."""
    found: dict[str, list[Path]] = {}
    # iterdir, not glob: a directory that cannot be listed raises (glob says "nothing"), and the caller names it
    for path in sorted(p for p in dynamic_dir.iterdir() if p.name.startswith(".")) if dynamic_dir.is_dir() else ():
        if not temporary_name(path.name):
            continue
        data = files.read_ours(dynamic_dir, path.name, what="a temporary route file", limit=1024)
        owner = temporary_owner(path.name, data, domain) if data is not None else ""
        if owner:
            found.setdefault(owner, []).append(path)
    return found


def temporary_name(filename: str) -> str:
    """Return the deployment a temporary route file's name carries, or '' when it is no such name."""
    match = _TEMPORARY.match(filename)
    return match["name"] if match else ""


def temporary_owner(filename: str, head: bytes, domain: str) -> str:
    """Return the deployment whose killed write left the temporary route file `filename` beginning with `head`
    (its first 1024 bytes) under `domain`'s configuration, or '' when it is not one."""
    name = temporary_name(filename)
    return name if name and _written_by_us(head[:1024].decode("utf-8", errors="replace"), name, domain) else ""


def _written_by_us(head: str, name: str, domain: str) -> bool:
    """True when a temporary file's first bytes are what graphsite writes for `name` under `domain`: nothing
    yet, a whole stamp of this configuration's, or a write cut short inside the stamp's first line (a kill
    mid-write) whose fqdn, when it was written whole, is this configuration's."""
    stamp = Stamp.from_route_text(head)
    if stamp is not None:
        return stamp.claim(name, domain) in (Claim.OURS, Claim.OLDER)
    first, newline, _ = head.partition("\n")
    start = Stamp(name).route_comment().split(" fqdn=", 1)[0] + " "  # "# graphsite: stamp=2 name=NAME "
    if newline or not (start.startswith(first) or first.startswith(start)):
        return False
    rest = first[len(start):]
    if "fqdn=".startswith(rest):  # cut before its fqdn began: it says nothing of its domain
        return True
    written, space, _ = rest.removeprefix("fqdn=").partition(" ")
    wanted = f"{name}.{domain}"
    return rest.startswith("fqdn=") and (written == wanted if space else wanted.startswith(written))


def qualified_middlewares(names: tuple[str, ...]) -> list[str]:
    """Return deploy.middlewares as Traefik reads a router's names: one without a provider is the file
    provider's (`name@file`)."""
    return [name if "@" in name else f"{name}@file" for name in names]
