"""The publisher's ports: what its use cases (deploy, verify, list, teardown, gc) ask of the systems a deployment
lives in, as Protocols. The real adapters (`swarm.Swarm`, `cloudflare.Dns`) implement them against Docker and
Cloudflare; the in-memory fakes of tests/publisher/fakes.py implement them too, with failure injection at every
call, so the rules that decide whether a live page survives are tested without a daemon.

Every read returns a complete answer or raises a GraphsiteError: a port never answers "nothing" for "I could not
look" (docs/reliability.md, "knowing versus assuming"). Route files and bind directories are the filesystem,
read and written through `route.py` and `bind.py`: tests give them a temporary directory.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the adapters' value types; importing them here must not import docker or httpx
    from graphsite.publisher.cloudflare import Record
    from graphsite.publisher.deployment import Stamp
    from graphsite.publisher.plan import ConfigFile, DnsRecord, ServiceSpec
    from graphsite.publisher.probe import Probe
    from graphsite.publisher.swarm import Service, Task


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

    def ensure_config(self, stamp: Stamp, config: ConfigFile) -> bool: ...

    def relabel_config(self, name: str, labels: dict[str, str]) -> bool: ...

    def remove_config(self, name: str) -> bool: ...

    def ensure_service(self, spec: ServiceSpec) -> str: ...

    def restore_previous(self, spec: ServiceSpec) -> bool: ...

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]: ...

    def remove_service(self, name: str) -> bool: ...

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


class Reporter(Protocol):
    """Where a use case says what it is doing, for the person at the keyboard: a use case never prints. The
    commands give it `progress.Console` (stderr, as -v/-q and NO_COLOR say); tests give it a recorder."""

    def step(self, label: str) -> AbstractContextManager[None]:
        """Say `label` around a block: done with its time, or failed."""
        ...

    def info(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...
