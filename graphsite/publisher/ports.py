"""The publisher's ports: what its use cases (deploy, verify, list, teardown, gc) ask of the systems a deployment
lives in, as Protocols. The real adapters (`swarm.Swarm`, `cloudflare.Dns`) implement them against Docker and
Cloudflare; the in-memory fakes of tests/publisher/fakes.py implement them too, with failure injection at every
call, so the rules that decide whether a live page survives are tested without a daemon.

Every read returns a complete answer or raises a GraphsiteError (or OSError, for the filesystem's): a port never
answers "nothing" for "I could not look" (docs/reliability.md, "knowing versus assuming"). The route files and
the page directories are ports too (`RouteStore`, `BindStore`): `stores.RouteFiles` and `stores.BindDirectories`
keep them on this host's filesystem through `route.py` and `bind.py`, never through a symbolic link.
"""

from __future__ import annotations

from collections.abc import Collection
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the adapters' value types; importing them here must not import docker or httpx
    from graphsite.publisher.cloudflare import Record
    from graphsite.publisher.deployment import Leftover, PageDirectory, Stamp
    from graphsite.publisher.plan import ConfigFile, DnsRecord, ServiceSpec
    from graphsite.publisher.probe import Probe
    from graphsite.publisher.swarm import DaemonFacts, Expected, NetworkFacts, Service, ServiceOutcome, Task


class SwarmPort(Protocol):
    """Docker Swarm: the page's service and its configs, found by name and label."""

    def node_id(self) -> str: ...

    def service(self, name: str) -> Service | None: ...

    def services(self) -> list[Service]: ...

    def tasks(self, name: str) -> list[Task]: ...

    def node_names(self) -> dict[str, str]: ...

    def configs(self, subdomain: str | None = None) -> list[str]: ...

    def config_stamps(self, subdomain: str | None = None) -> dict[str, Stamp]: ...

    def labelled_configs(self, subdomain: str | None = None) -> dict[str, dict[str, str]]: ...

    def configs_named(self, names: Collection[str]) -> frozenset[str]:
        """Return which of `names` are configs now, whoever made them (one look, by exact name)."""
        ...

    def ensure_config(self, stamp: Stamp, config: ConfigFile) -> bool: ...

    def read_config(self, name: str) -> bytes | None: ...

    def relabel_config(self, name: str, labels: dict[str, str]) -> bool: ...

    def remove_config(self, name: str) -> bool: ...

    def ensure_service(self, spec: ServiceSpec, expected: Expected) -> ServiceOutcome:
        """Create the service or roll it to `spec` where the name holds what `expected` says the plan read
        (`swarm.service_verdict`, the look before the write being the adapter's own); an update carries the
        version the plan read and is refused (CHANGED) when another run changed the service's Spec since (a
        version moved by Swarm's own bookkeeping alone is not a change)."""
        ...

    def restore_previous(self, spec: ServiceSpec) -> bool: ...

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]: ...

    def remove_service(self, name: str) -> bool: ...

    def daemon(self) -> DaemonFacts: ...

    def network(self, name: str) -> NetworkFacts: ...

    def close(self) -> None: ...


class EdgePort(Protocol):
    """The edge (Traefik) as a reader meets it: one GET of the page, over the real network path."""

    def fetch(self, scheme: str, fqdn: str, address: str = "", *, ca_bundle: str = "", timeout: float = 5.0,
              auth: tuple[str, str] | None = None, headers: dict[str, str] | None = None,
              insecure: bool = False) -> Probe: ...


class DnsPort(Protocol):
    """The zone's records: looked up by exact name, listed whole, created, given another comment (graphsite's
    stamp) and deleted by id."""

    def limit(self, seconds: float | None) -> None: ...

    def records(self, name: str) -> list[Record]: ...

    def a_records(self) -> list[Record]: ...

    def create(self, record: DnsRecord) -> Record: ...

    def restamp(self, record: Record, comment: str) -> Record: ...

    def delete(self, record_id: str) -> bool: ...

    def close(self) -> None: ...


class RouteStore(Protocol):
    """Traefik's dynamic directory: graphsite's route files (NAME.yml, a stamp comment first) and the temporary
    files a killed write left. A symbolic link is never followed: `link` tells one apart."""

    def routes(self, dynamic_dir: Path, name: str | None = None) -> dict[Path, Stamp | None]:
        """Return the route files (.yml) in `dynamic_dir`, or only NAME.yml when it is there, each with its stamp
        (None: not graphsite's shape, a link, or no regular file); raise DeployError when `dynamic_dir` is no
        directory and OSError when it cannot be listed."""
        ...

    def temporaries(self, dynamic_dir: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        """Return {subdomain: {path: leftover}} of the temporary files a killed write left: OURS, or one of
        NEEDS_PROOF (ours only beside a proven resource of the name: `adopted`), with the stamp each carries, all
        from one read of each file."""
        ...

    def text(self, path: Path) -> str | None:
        """Return the file's text, None when there is none; raise DeployError for a link or a failed read."""
        ...

    def document(self, path: Path) -> dict[str, Any] | None: ...

    def stamp(self, path: Path) -> Stamp | None: ...

    def write(self, path: Path, document: dict[str, Any], stamp: Stamp | None = None) -> bool: ...

    def put_back(self, path: Path, text: str) -> None: ...

    def remove(self, path: Path) -> bool: ...

    def exists(self, path: Path) -> bool:
        """True when something is at `path`, a symbolic link included (not followed)."""
        ...

    def link(self, path: Path) -> str | None:
        """Return where the symbolic link at `path` points; None when `path` is no link."""
        ...


class BindStore(Protocol):
    """The page directories of `--content bind` under deploy.bind_root: each with graphsite's marker, filled
    under a temporary name and renamed into place. A symbolic link is never followed."""

    def has_root(self, bind_root: Path) -> bool: ...

    def directories(self, bind_root: Path) -> dict[str, tuple[Path, Stamp]]: ...

    def temporaries(self, bind_root: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        """Return {subdomain: {directory: leftover}} of the half-filled directories a killed deploy left: OURS, or
        one of NEEDS_PROOF (ours only beside a proven resource of the name: `adopted`), with its marker's stamp,
        both from one read of its marker."""
        ...

    def page_directory(self, directory: Path) -> PageDirectory:
        """Return what one look at the page directory `directory` found: whether anything is there (a link
        included), where a link there leads, the stamp its marker holds. A marker that cannot be read raises."""
        ...

    def stamp(self, directory: Path) -> Stamp | None: ...

    def page(self, directory: Path) -> bytes | None: ...

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        """Write the page and its marker into `directory` (made when absent); return True when it was made. What
        is there when it is opened for the write must be `seen` (the caller's judged look), else DeployError
        (`bind.changed_since`) and nothing is written."""
        ...

    def put_back_page(self, directory: Path, page: bytes, ours: Collection[Stamp]) -> bool:
        """Write `page` back into `directory` while its marker is one of `ours`; raise DeployError, nothing
        written, for any other marker (`bind.put_back_page`)."""
        ...

    def remove(self, directory: Path, stamp: Stamp) -> bool:
        """Remove `directory` when its marker is still the whole `stamp` the caller judged ours; False when absent;
        raise DeployError (left in place) for anything else there."""
        ...

    def remove_temporary(self, directory: Path, stamp: Stamp | None) -> bool:
        """Remove a temporary page directory a killed deploy left while its marker is still `stamp` (None: none),
        as the survey judged it; False when absent; raise DeployError for anything else there."""
        ...

    def versions(self, directory: Path) -> dict[str, str | None]:
        """Return {sha12: its marker's text (None: no marker that can be graphsite's)} of the versions kept in
        `directory` (v/<sha12>/); {} when there are none (no directory, no v/). A link or a file where `directory`
        or its v/ should be raises UnknownVersions (what is behind it is unknown, not none); a failed read raises
        DeployError."""
        ...

    def strays(self, directory: Path) -> tuple[str, ...]:
        """Return what is in `directory` and its v/ that graphsite did not put there ('notes', 'v/notes'); ()
        when there is no `directory`. Raises as `versions` does."""
        ...

    def version_page(self, directory: Path, sha12: str) -> bytes | None: ...

    def keep_version(self, directory: Path, sha12: str, page: bytes, marker: str) -> bool: ...

    def restamp_version(self, directory: Path, sha12: str, marker: str) -> bool:
        """Write `marker` as version `sha12`'s marker, in place; False when that version is not there."""
        ...

    def remove_version(self, directory: Path, sha12: str) -> bool: ...

    def exists(self, path: Path) -> bool: ...

    def link(self, path: Path) -> str | None: ...


class Reporter(Protocol):
    """Where a use case says what it is doing, for the person at the keyboard: a use case never prints. The
    commands give it `progress.Console` (stderr, as -v/-q and NO_COLOR say); tests give it a recorder."""

    def step(self, label: str) -> AbstractContextManager[None]:
        """Say `label` around a block: done with its time, or failed."""
        ...

    def info(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...
