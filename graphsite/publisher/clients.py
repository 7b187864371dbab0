"""The adapters a verb needs, opened and closed in one place: Swarm (docker), Dns (cloudflare), the edge, and
the route files and page directories on this host."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError
from graphsite.labels import check_domain
from graphsite.publisher.ports import BindStore, DnsPort, EdgePort, RouteStore, SwarmPort
from graphsite.publisher.probe import HttpEdge
from graphsite.publisher.stores import BindDirectories, RouteFiles

# The systems a deployment lives in, as messages and `list` name them.
SWARM, ROUTES, DIRECTORIES, DNS = "Docker Swarm", "route directory", "bind directories", "Cloudflare"


@dataclass
class Clients:
    """The adapters. With `partial=True`, a Docker daemon that cannot be reached is left out and named in
    `unavailable` (list, teardown and gc still work on the other systems). Opening Dns makes no request: what
    it refuses is the configuration (the token, the CA bundle), an error whatever `partial` says; Cloudflare
    unreachable shows at the first call, where each verb judges it."""

    dns: DnsPort
    swarm: SwarmPort | None = None  # None: Docker could not be reached (with partial=True), named in unavailable
    edge: EdgePort = field(default_factory=HttpEdge)
    routes: RouteStore = field(default_factory=RouteFiles)
    binds: BindStore = field(default_factory=BindDirectories)
    unavailable: dict[str, str] = field(default_factory=dict)

    @property
    def docker(self) -> SwarmPort:
        """Return the Swarm port; raise the reason Docker could not be reached when it could not."""
        if self.swarm is None:
            raise DeployError(self.unavailable.get(SWARM, "Docker: the daemon could not be reached"),
                              hint="run the command again once the Docker daemon answers")
        return self.swarm

    @classmethod
    def connect(cls, config: Config, *, partial: bool = False) -> Clients:
        from graphsite.publisher.cloudflare import Dns
        from graphsite.publisher.swarm import Swarm

        clients = cls(dns=Dns(config))
        try:
            clients.swarm = Swarm(timeout=config.deploy.docker_timeout)
        except GraphsiteError as exc:
            if not partial:
                clients.close()
                raise
            clients.unavailable[SWARM] = exc.message.splitlines()[0]
        return clients

    def close(self) -> None:
        for adapter in (self.dns, self.swarm):
            if adapter is not None:
                adapter.close()


def site(config: Config) -> Config:
    """Return `config` with site.domain as Cloudflare and Swarm hold names: lower case, no trailing dot."""
    return config.replace("site", domain=check_domain(config.site.domain))


@contextmanager
def connected(config: Config, *, partial: bool = False) -> Iterator[Clients]:
    """Open the adapters for one command and close them whatever happens."""
    clients = Clients.connect(config, partial=partial)
    try:
        yield clients
    finally:
        clients.close()
