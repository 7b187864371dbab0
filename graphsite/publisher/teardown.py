"""`graphsite teardown`: remove what graphsite made for a name, then prove each resource is gone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphsite import output
from graphsite.config import Config
from graphsite.errors import TeardownError
from graphsite.labels import check_label
from graphsite.publisher import bind, route
from graphsite.publisher.clients import Clients
from graphsite.publisher.lock import subdomain_lock
from graphsite.publisher.names import fqdn
from graphsite.publisher.plan import bind_dir


@dataclass(frozen=True)
class Removal:
    resource: str
    name: str
    outcome: str  # removed, absent, kept (a record graphsite did not make)

    def line(self) -> str:
        return f"{self.outcome:8} {self.resource} {self.name}"


def subdomain_of(config: Config, name: str) -> str:
    """Return the subdomain of NAME, which may be the subdomain or the full fqdn."""
    suffix = "." + config.site.domain.lower()
    return check_label(name.strip().lower().removesuffix(suffix), what="NAME")


def teardown(config: Config, name: str, clients: Clients, *, wait: float = 30.0) -> list[Removal]:
    """Remove the record, route, service, configs and bind directory of NAME; return one line per resource."""
    subdomain = subdomain_of(config, name)
    with subdomain_lock(config.deploy.lock_dir, subdomain, wait=wait):
        removals = _remove(config, subdomain, clients)
        _prove_gone(config, subdomain, clients)
    return removals


def _remove(config: Config, subdomain: str, clients: Clients) -> list[Removal]:
    swarm, dns, removals = clients.swarm, clients.dns, []
    service = swarm.service(subdomain)
    name = (service.labels.get("graphsite.fqdn") if service else "") or fqdn(subdomain, config.site.domain)
    with output.step("dns"):
        records = [r for r in dns.records(name) if r.type == "A"]
        for record in records:
            outcome = ("removed" if dns.delete(record.id) else "absent") if record.ours else "kept"
            removals.append(Removal("record", f"A {name} id={record.id}", outcome))
        if not records:
            removals.append(Removal("record", f"A {name}", "absent"))
    with output.step("route"):
        path = Path(config.deploy.dynamic_dir) / f"{subdomain}.yml"
        outcome = "absent" if not path.exists() else "removed" if route.is_ours(path) else "kept"
        if outcome == "removed":
            path.unlink(missing_ok=True)
        removals.append(Removal("route", str(path), outcome))
    with output.step("service"):
        if service is not None and service.labels.get("graphsite.subdomain") != subdomain:
            removals.append(Removal("service", subdomain, "kept"))
        else:
            removals.append(Removal("service", subdomain, "removed" if swarm.remove_service(subdomain) else "absent"))
    with output.step("configs"):
        configs = swarm.configs(subdomain)
        for config_name in configs:
            removals.append(Removal("config", config_name,
                                    "removed" if swarm.remove_config(config_name) else "absent"))
        if not configs:
            removals.append(Removal("config", f"{subdomain}-*", "absent"))
    with output.step("directory"):
        directory = bind_dir(config, subdomain)
        if directory.exists() and not bind.made_by_graphsite(directory):
            removals.append(Removal("directory", str(directory), "kept"))
        else:
            removals.append(Removal("directory", str(directory),
                                    "removed" if bind.remove_bind_dir(directory) else "absent"))
    return removals


def _prove_gone(config: Config, subdomain: str, clients: Clients) -> None:
    left = []
    name = fqdn(subdomain, config.site.domain)
    left += [f"record A {name} id={r.id}" for r in clients.dns.records(name) if r.ours]
    path = Path(config.deploy.dynamic_dir) / f"{subdomain}.yml"
    if path.exists() and route.is_ours(path):
        left.append(f"route {path.name}")
    service = clients.swarm.service(subdomain)
    if service is not None and service.labels.get("graphsite.subdomain") == subdomain:
        left.append(f"service {subdomain}")
    left += [f"config {c}" for c in clients.swarm.configs(subdomain)]
    directory = bind_dir(config, subdomain)
    if directory.exists() and bind.made_by_graphsite(directory):
        left.append(f"directory {directory}")
    if left:
        raise TeardownError(f"teardown of {subdomain} left: {', '.join(left)}", hint="run graphsite teardown again")
