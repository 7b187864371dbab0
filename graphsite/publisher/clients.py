"""The adapters a verb needs, made once per command: Swarm (docker) and Dns (cloudflare)."""

from __future__ import annotations

from dataclasses import dataclass

from graphsite.config import Config
from graphsite.publisher.cloudflare import Dns
from graphsite.publisher.swarm import Swarm


@dataclass
class Clients:
    swarm: Swarm
    dns: Dns

    @classmethod
    def connect(cls, config: Config) -> Clients:
        return cls(swarm=Swarm(), dns=Dns(config))

    def close(self) -> None:
        self.dns.close()
        self.swarm.close()
