"""What `graphsite doctor` looks at, gathered read-only: the Docker daemon (through the Swarm adapter), the
Traefik directories, Cloudflare (through the Dns adapter), this host's addresses and CA bundles. Every fact is a
plain value; a fact that could not be read is an `Unknown` saying why. Nothing here decides PASS or FAIL."""

from __future__ import annotations

import os
import platform
import ssl
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from graphsite.config import TOKEN_ENV, Config
from graphsite.errors import GraphsiteError

if TYPE_CHECKING:
    from graphsite.publisher.cloudflare import Zone
    from graphsite.publisher.swarm import DaemonFacts, ImageFacts, NetworkFacts

TRAEFIK_SUFFIXES = (".yml", ".yaml", ".toml")  # what Traefik's file provider reads; anything else is ignored


@dataclass(frozen=True)
class Unknown:
    """A fact that could not be read, and why (an error message that never holds the token)."""

    why: str


@dataclass(frozen=True)
class RouteFile:
    """One file of the dynamic directory: its parse or schema errors (empty: fine) and the middlewares it defines."""

    path: Path
    errors: tuple[str, ...] = ()
    middlewares: tuple[str, ...] = ()


@dataclass(frozen=True)
class DynamicDir:
    path: Path
    exists: bool
    is_dir: bool
    writable: bool
    files: tuple[RouteFile, ...] = ()


@dataclass(frozen=True)
class WritableDir:
    """A directory deploy creates files in (making it when missing): whether it can, and the reason if not."""

    setting: str
    path: Path
    problem: str = ""


@dataclass(frozen=True)
class StaticConfig:
    """Traefik's static configuration: resolver name -> challenge type, entry points, the file provider's directory."""

    path: Path
    resolvers: dict[str, str] = field(default_factory=dict)
    entrypoints: tuple[str, ...] = ()
    file_directory: str = ""
    error: str = ""  # the file is there but does not parse: Traefik would not start from it


@dataclass(frozen=True)
class Token:
    """The Cloudflare token as configured: where it comes from and its shape, never its value."""

    source: str  # "" when there is none
    length: int = 0
    charset_ok: bool = True


@dataclass(frozen=True)
class Ipvs:
    loaded: bool
    module: bool | None  # None: this host's module list cannot be read


@dataclass(frozen=True)
class CaBundle:
    setting: str
    path: str  # the file loaded: the setting's, else the default (certifi's bundle, the system's CA file)
    certificates: int | Unknown


@dataclass(frozen=True)
class Facts:
    """Everything the checks judge. Docker and Cloudflare facts are None when they were not gathered."""

    daemon: DaemonFacts | Unknown | None = None
    network: NetworkFacts | Unknown | None = None
    image: ImageFacts | Unknown | None = None
    ipvs: Ipvs | None = None
    dynamic_dir: DynamicDir | None = None
    writable_dirs: tuple[WritableDir, ...] = ()
    static: StaticConfig | Unknown | None = None
    token: Token | Unknown | None = None
    token_status: str | Unknown | None = None
    zone: Zone | Unknown | None = None  # None: not found
    zone_looked_up: bool = False
    records: int | Unknown | None = None
    addresses: tuple[str, ...] | Unknown | None = None
    ca_bundles: tuple[CaBundle, ...] = ()


# --- Docker ---------------------------------------------------------------------------------------------------


def docker_facts(config: Config, *, image: bool = True, client: Any = None) -> dict[str, Any]:
    """Return the daemon, network (and image) facts; Unknown for each when the daemon does not answer. `client`:
    a connected Swarm adapter to use (and leave open), else one is made and closed here."""
    from graphsite.publisher import swarm

    own = client is None
    try:
        client = client or swarm.Swarm()
    except GraphsiteError as exc:
        return {"daemon": Unknown(_docker_reason(exc))}
    try:
        facts: dict[str, Any] = {"daemon": _read(lambda: swarm.daemon_facts(client)),
                                 "network": _read(lambda: swarm.network_facts(client, config.deploy.network))}
        if image:
            facts["image"] = _read(lambda: swarm.image_facts(client, config.deploy.image))
        return facts
    finally:
        if own:
            client.close()


def _docker_reason(exc: GraphsiteError) -> str:
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    return f"{exc.message.splitlines()[0]} (DOCKER_HOST={where})"


def _read(reader):
    try:
        return reader()
    except GraphsiteError as exc:
        return Unknown(exc.message.splitlines()[0])


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


def _parse(path: Path) -> tuple[Any, str]:
    """Return the parsed document and '' or None and the parse error with its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read: {getattr(exc, 'strerror', None) or exc}"
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text), ""
        return yaml.safe_load(text), ""
    except tomllib.TOMLDecodeError as exc:
        return None, f"invalid TOML: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, f"{where}invalid YAML: {problem}"


def route_file(path: Path) -> RouteFile:
    """Return one dynamic-configuration file as Traefik would judge it: parse, then the v3 schema."""
    from graphsite.publisher.route import schema_errors

    document, error = _parse(path)
    if error:
        return RouteFile(path, (error,))
    if document is None:
        return RouteFile(path)  # an empty file configures nothing; Traefik accepts it
    errors = tuple(schema_errors(document))
    http = document.get("http") if isinstance(document, dict) else None
    middlewares = tuple(sorted((http or {}).get("middlewares") or {})) if isinstance(http, dict) else ()
    return RouteFile(path, errors, middlewares)


def dynamic_dir_facts(directory: Path) -> DynamicDir:
    """Return the directory's state and every file Traefik's file provider reads there (subdirectories too)."""
    if not directory.exists():
        return DynamicDir(directory, exists=False, is_dir=False, writable=False)
    if not directory.is_dir():
        return DynamicDir(directory, exists=True, is_dir=False, writable=False)
    files = tuple(route_file(path) for path in sorted(directory.rglob("*"))
                  if path.suffix in TRAEFIK_SUFFIXES and path.is_file())
    return DynamicDir(directory, exists=True, is_dir=True, writable=os.access(directory, os.W_OK | os.X_OK),
                      files=files)


def writable_dir(setting: str, path: Path) -> WritableDir:
    """Return whether this user can create files in `path`, making it (and its parents) first when missing."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return WritableDir(setting, path, f"{existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        return WritableDir(setting, path, f"{existing} is not writable by this user")
    return WritableDir(setting, path)


def static_facts(path_text: str) -> StaticConfig | Unknown:
    """Return Traefik's static configuration, or Unknown saying why it cannot be read (or is not configured)."""
    if not path_text:
        return Unknown("deploy.traefik_static is empty")
    path = Path(path_text)
    if not path.is_file():
        return Unknown(f"deploy.traefik_static: {path} is not readable here "
                       f"({'missing' if not path.exists() else 'not a file'})")
    document, error = _parse(path)
    if error or not isinstance(document, dict):
        return StaticConfig(path, error=error or "expected a mapping at the top")
    resolvers = {}
    for name, spec in (document.get("certificatesResolvers") or {}).items():
        acme = (spec or {}).get("acme") or {}
        challenges = [kind for kind in ("dnsChallenge", "httpChallenge", "tlsChallenge") if kind in acme]
        resolvers[str(name)] = challenges[0] if challenges else "none"
    file_provider = (document.get("providers") or {}).get("file") or {}
    return StaticConfig(path, resolvers, tuple(sorted(document.get("entryPoints") or {})),
                        str(file_provider.get("directory") or ""))


# --- Cloudflare -----------------------------------------------------------------------------------------------


def token_facts(config: Config) -> Token | Unknown:
    """Return where the token comes from and its shape (length, characters), never the token itself."""
    try:
        token = config.token()
    except GraphsiteError as exc:
        return Unknown(exc.message.splitlines()[0])
    if not token:
        return Token(source="")
    source = TOKEN_ENV if os.environ.get(TOKEN_ENV, "").strip() else f"dns.token_file {config.dns.token_file}"
    return Token(source=source, length=len(token),
                 charset_ok=all(c.isascii() and (c.isalnum() or c in "-_") for c in token))


def cloudflare_facts(config: Config) -> dict[str, Any]:
    """Return the token's status, the zone and whether its records can be listed (read-only API calls)."""
    from graphsite.publisher import cloudflare

    try:
        dns = cloudflare.Dns(config)
    except GraphsiteError as exc:
        return {"token_status": Unknown(exc.message.splitlines()[0])}
    try:
        facts: dict[str, Any] = {"token_status": _read(lambda: cloudflare.token_status(dns))}
        if config.dns.zone_id:
            zone = _read(lambda: cloudflare.zone_by_id(dns, config.dns.zone_id))
        else:
            zone = _read(lambda: cloudflare.zone_by_name(dns, config.site.domain))
            facts["zone_looked_up"] = True
        facts["zone"] = zone
        if zone is not None and not isinstance(zone, Unknown):
            facts["records"] = _read(lambda: cloudflare.count_records(dns, zone.id))
        return facts
    finally:
        dns.close()


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


def gather(config: Config, *, cheap: bool = False, swarm: Any = None) -> Facts:
    """Return the facts of every check (`cheap`: only local ones and the daemon, no registry or Cloudflare call);
    `swarm`: a connected Swarm adapter to reuse."""
    values: dict[str, Any] = docker_facts(config, image=not cheap, client=swarm)
    deploy = config.deploy
    dirs = [("deploy.lock_dir", deploy.lock_dir)] + ([("deploy.bind_root", deploy.bind_root)]
                                                     if deploy.content == "bind" else [])
    values.update(ipvs=ipvs_facts(), dynamic_dir=dynamic_dir_facts(Path(deploy.dynamic_dir)),
                  writable_dirs=tuple(writable_dir(setting, Path(path)) for setting, path in dirs))
    if not cheap:
        values.update(static=static_facts(config.deploy.traefik_static), token=token_facts(config),
                      addresses=host_addresses(), ca_bundles=ca_bundle_facts(config))
        token = values["token"]
        if isinstance(token, Token) and token.source:
            values.update(cloudflare_facts(config))
    return Facts(**values)
