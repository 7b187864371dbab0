"""What `graphsite doctor` judges: plain values gathered read-only (`facts.py`, `host.py`), one per fact; a fact
that could not be read is an `Unknown` saying why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphsite.publisher.cloudflare import Zone
    from graphsite.publisher.swarm import DaemonFacts, ImageFacts, NetworkFacts


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
    files: tuple[RouteFile, ...] | Unknown = ()  # Unknown: a directory in it this user cannot list


@dataclass(frozen=True)
class WritableDir:
    """A directory deploy creates files in (making it when missing): whether it can, and the reason if not."""

    setting: str
    path: Path
    problem: str = ""


@dataclass(frozen=True)
class Permissions:
    """A file graphsite trusts (the Cloudflare token file, a directory deploy writes in): its mode and owner as
    the operator's setting leads to it, and the user graphsite runs as."""

    setting: str  # dns.token_file, deploy.dynamic_dir, deploy.bind_root, deploy.lock_dir
    path: Path
    mode: int  # st_mode
    uid: int
    user: int  # this process's effective uid


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
    dynamic_dir: DynamicDir | Unknown | None = None
    writable_dirs: tuple[WritableDir, ...] = ()
    permissions: tuple[Permissions, ...] = ()  # of those that exist
    static: StaticConfig | Unknown | None = None
    token: Token | Unknown | None = None
    token_status: str | Unknown | None = None
    zone: Zone | Unknown | None = None  # None: not found
    zone_looked_up: bool = False
    records: int | Unknown | None = None
    addresses: tuple[str, ...] | Unknown | None = None
    ca_bundles: tuple[CaBundle, ...] = ()
