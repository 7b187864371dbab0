"""The doctor's facts read from this host alone: the kernel (IPVS, addresses), the Traefik files and directories,
the CA bundles. Read-only, and nothing here decides PASS or FAIL."""

from __future__ import annotations

import os
import platform
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite.config import Config
from graphsite.paths import expand_user
from graphsite.usecases.doctor.model import (
    CaBundle,
    DynamicDir,
    Ipvs,
    Permissions,
    RouteFile,
    StaticConfig,
    Unknown,
    WritableDir,
)

if TYPE_CHECKING:
    from graphsite.publisher.dynamic import DynamicFile


def ipvs_facts(proc: Path = Path("/proc"), modules: Path = Path("/lib/modules")) -> Ipvs:
    """Return whether the kernel's IPVS is loaded, and whether it is available as a module or built in."""
    loaded = (proc / "net" / "ip_vs").exists() or Path("/sys/module/ip_vs").exists()
    release = modules / platform.release()
    if not release.is_dir():
        return Ipvs(loaded=loaded, module=None)
    try:
        listed = "\n".join((release / name).read_text(encoding="utf-8", errors="replace")
                           for name in ("modules.dep", "modules.builtin") if (release / name).is_file())
    except OSError:
        return Ipvs(loaded=loaded, module=None)
    return Ipvs(loaded=loaded, module="/ip_vs.ko" in listed)


# --- Traefik --------------------------------------------------------------------------------------------------


def route_file(parsed: DynamicFile) -> RouteFile:
    """Return one dynamic-configuration file as Traefik would judge it: parsed, then the v3 schema (the same
    reading as deploy's and verify's, publisher/dynamic.py)."""
    from graphsite.publisher.dynamic import schema_problems

    if parsed.data is None:
        return RouteFile(parsed.path, (parsed.error,))
    return RouteFile(parsed.path, tuple(schema_problems(parsed)), parsed.middlewares())


def dynamic_dir_facts(directory: Path) -> DynamicDir | Unknown:
    """Return the directory's state and every file Traefik's file provider reads there (subdirectories too), or
    Unknown when this user cannot look at it or list it (a parent it may not search: whether the directory exists
    is then unknown too, never "absent"); its files are Unknown when a directory Traefik reads cannot be listed or
    a file there cannot be read."""
    from graphsite.publisher.dynamic import Unread, read_directory

    try:
        if not directory.exists():
            return DynamicDir(directory, exists=False, is_dir=False, writable=False)
        if not directory.is_dir():
            return DynamicDir(directory, exists=True, is_dir=False, writable=False)
        os.listdir(directory)  # the directory itself, unlisted: nothing of it is known (a subdirectory: its files)
    except OSError as exc:
        return Unknown(f"deploy.dynamic_dir: cannot look into {directory}: {exc.strerror}")
    files: tuple[RouteFile, ...] | Unknown
    try:
        files = tuple(route_file(parsed) for parsed in read_directory(directory))
    except Unread as unread:
        files = Unknown(str(unread))
    return DynamicDir(directory, exists=True, is_dir=True, writable=os.access(directory, os.W_OK | os.X_OK),
                      files=files)


def writable_dir(setting: str, path: Path) -> WritableDir:
    """Return whether this user can create files in `path`, making it (and its parents) first when missing."""
    existing = path
    while not os.path.lexists(existing) and existing != existing.parent:  # a link loop or a dangling link is
        existing = existing.parent                                         # there, not missing: no directory
    if not existing.is_dir():
        return WritableDir(setting, path, f"{existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        return WritableDir(setting, path, f"{existing} is not writable by this user")
    return WritableDir(setting, path)


def permission_facts(config: Config) -> tuple[Permissions, ...]:
    """Return the mode and owner of dns.token_file and of the directories deploy writes in (deploy.bind_root in
    bind mode only), those that exist; each setting's path is followed, as the operator configured it."""
    deploy = config.deploy
    settings = [("dns.token_file", config.dns.token_file)] if config.dns.token_file else []
    settings += [("deploy.dynamic_dir", deploy.dynamic_dir), ("deploy.lock_dir", deploy.lock_dir)]
    settings += [("deploy.bind_root", deploy.bind_root)] if deploy.content == "bind" else []
    found = []
    for setting, text in settings:
        path = expand_user(text)
        if path is None:  # under a home the user has none of: nothing to show (config.token() names the token)
            continue
        try:
            status = path.stat()
        except OSError:  # absent or unreadable: the token and directory checks say so
            continue
        found.append(Permissions(setting, path, status.st_mode, status.st_uid, os.geteuid()))
    return tuple(found)


def static_facts(path_text: str) -> StaticConfig | Unknown:
    """Return Traefik's static configuration, or Unknown saying why it cannot be read (or is not configured)."""
    if not path_text:
        return Unknown("deploy.traefik_static is empty")
    path = Path(path_text)
    try:
        if not path.is_file():
            return Unknown(f"deploy.traefik_static: {path} is not readable here "
                           f"({'missing' if not path.exists() else 'not a file'})")
    except OSError as exc:  # a parent this user may not search
        return Unknown(f"deploy.traefik_static: cannot look at {path}: {exc.strerror}")
    from graphsite.publisher.dynamic import parse_file

    parsed = parse_file(path)
    document, error = parsed.data, parsed.error
    if error or not isinstance(document, dict):
        return StaticConfig(path, error=error or "expected a mapping at the top")
    try:
        return _static(path, document)
    except _Shape as exc:
        return StaticConfig(path, error=str(exc))


class _Shape(Exception):
    """A value of Traefik's static configuration that is not of the type Traefik reads there."""


def _static(path: Path, document: dict[Any, Any]) -> StaticConfig:
    """Return what the checks need of the parsed static configuration; raise _Shape naming a value of the wrong
    type (Traefik would not start from that file either)."""
    resolvers, declared = {}, _mapping(document, "certificatesResolvers")
    for name in declared:
        acme = _mapping(_mapping(declared, name, "certificatesResolvers."), "acme", f"certificatesResolvers.{name}.")
        challenges = [kind for kind in ("dnsChallenge", "httpChallenge", "tlsChallenge") if kind in acme]
        resolvers[str(name)] = challenges[0] if challenges else "none"
    file_provider = _mapping(_mapping(document, "providers"), "file", "providers.")
    directory = file_provider.get("directory") or ""
    if not isinstance(directory, str):
        raise _Shape(f"providers.file.directory is not a string (it is a {type(directory).__name__})")
    return StaticConfig(path, resolvers, tuple(sorted(str(name) for name in _mapping(document, "entryPoints"))),
                        directory)


def _mapping(table: dict[Any, Any], key: Any, where: str = "") -> dict[Any, Any]:
    """Return `table[key]` ({} when it is absent or empty); raise _Shape naming `where` + `key` when it is not a
    mapping."""
    value = table.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Shape(f"{where}{key} is not a mapping (it is a {type(value).__name__})")
    return value


# --- this host ------------------------------------------------------------------------------------------------


def host_addresses(fib_trie: Path = Path("/proc/net/fib_trie")) -> tuple[str, ...] | Unknown:
    """Return this host's IPv4 addresses (the kernel's local routes), or Unknown when they cannot be read."""
    try:
        lines = fib_trie.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        return Unknown(f"cannot read {fib_trie}: {exc.strerror}")
    found = {previous.split()[-1] for previous, line in zip(lines, lines[1:], strict=False)
             if line.strip() == "/32 host LOCAL" and previous.strip().startswith("|--")}
    return tuple(sorted(found))


def ca_bundle_facts(config: Config) -> tuple[CaBundle, ...]:
    """Return the CA bundle each TLS client loads and how many certificates it holds. Empty settings mean the
    defaults: certifi's bundle for the Cloudflare API (httpx's default), the system store for verify."""
    bundles = []
    for setting, path, default in (("dns.ca_bundle", config.dns.ca_bundle, "certifi"),
                                   ("verify.ca_bundle", config.verify.ca_bundle, "system")):
        if not path and default == "certifi":
            import certifi

            path = certifi.where()
        elif not path:
            path = ssl.get_default_verify_paths().cafile or ""
        bundles.append(CaBundle(setting, path, _certificates(path) if path else
                                Unknown("the system trust store has no CA file (ssl.get_default_verify_paths)")))
    return tuple(bundles)


def _certificates(path: str) -> int | Unknown:
    try:
        context = ssl.create_default_context(cafile=path)
    except OSError as exc:  # ssl.SSLError included: a file without a certificate
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        return Unknown(f"cannot load {path}: {reason}")
    return len(context.get_ca_certs())
