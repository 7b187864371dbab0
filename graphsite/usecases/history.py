"""`graphsite history NAME`: the versions a deployment keeps, read from Swarm alone (the service says which one is
live; each kept page config says what version it is). A version counts only when its stamp proves it is this
deployment's; a page config of the name that does not is listed apart, never counted. A Swarm that cannot be read
is an error, never an empty history; so is a bind directory this host does not hold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphsite.errors import DeployError
from graphsite.output import shown
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Claim, Deployment, PageDirectory, bind_dir, claim, whose
from graphsite.publisher.names import fqdn as make_fqdn
from graphsite.publisher.swarm import Service
from graphsite.publisher.versions import Held, Version, Versions, bind_pages, read_versions
from graphsite.usecases.inventory import SurveySettings, Unread, known


@dataclass(frozen=True)
class History:
    name: str
    fqdn: str
    deployment: Deployment | None  # the live one, from its service (None: no service of the name)
    found: Versions

    @property
    def empty(self) -> bool:
        return not self.found.versions and not self.found.unproven

    def as_json(self) -> dict[str, Any]:
        deployment = self.deployment
        live = self.found.live
        return {"name": self.name, "fqdn": self.fqdn, "live": live.sha256 if live else None,
                "content": deployment.content if deployment else None,
                "versions": [v.as_json(self.fqdn) for v in self.found.versions],
                "unproven": [u.as_json() for u in self.found.unproven]}


@dataclass(frozen=True)
class Kept:
    """The versions a deployment keeps, as one read found them: its live deployment (None: no service of the
    name), the versions, and how to read a version's page (None: gone since)."""

    deployment: Deployment | None
    found: Versions
    read: Callable[[Version], bytes | None]


def history(settings: SurveySettings, name: str, clients: Clients) -> History:
    """Return the versions graphsite keeps for deployment `name`, newest first; raise DeployError when its service
    is not this configuration's or Swarm cannot be read."""
    kept = kept_versions(settings, name, clients, clients.docker.service(name))
    return History(name, make_fqdn(name, settings.domain), kept.deployment, kept.found)


def kept_versions(settings: SurveySettings, name: str, clients: Clients, service: Service | None, *,
                  labelled: Mapping[str, Mapping[str, str]] | None = None,
                  directory: PageDirectory | Unread | None = None) -> Kept:
    """Return the versions deployment `name` keeps, judged by its service (`service`, as the caller read it), its
    page configs (`labelled`) and its page directory (`directory`), as the caller read them, else read now: what
    `history` lists and `rollback` chooses from, one sequence for both. Raise DeployError when the service is not
    this configuration's, or its versions are not held here; a read that fails raises."""
    deployment = Deployment.from_labels(service.labels) if service is not None else None
    if service is not None:
        owner = claim(deployment.stamp if deployment else None, name, settings.domain)
        if owner != Claim.OURS:
            raise DeployError(f"the Swarm service {name} is not this configuration's deployment: "
                              f"{whose(owner, deployment.stamp if deployment else None)}",
                              hint="graphsite shows and rolls back the versions of its own deployments only")
    if deployment is not None:
        held_here(name, deployment, settings.bind_root, clients, directory)
    # without a service nothing proves which deployment the pages belong to: none of them is counted
    found, read = read_kept(name, deployment or Deployment(name, make_fqdn(name, settings.domain)),
                            settings.domain, settings.bind_root, clients, labelled=labelled)
    return Kept(deployment, found, read)


def held_here(name: str, deployment: Deployment, bind_root: Path, clients: Clients,
              seen: PageDirectory | Unread | None = None) -> None:
    """Raise DeployError when `deployment` keeps its page in a bind directory this host does not hold (another
    node's, a container without the mount), or when what is there is not its page directory (a link, another
    deployment's): its versions are unknown here, not none. `seen`: the survey's look at that directory (None:
    looked at now); a look that failed raises its error."""
    if deployment.content != "bind":
        return
    directory = bind_dir(bind_root, name)
    found = known(seen) if seen is not None else clients.binds.page_directory(directory)
    if found.path != directory:  # a guard, not a path: a look at another directory proves nothing of this one
        raise DeployError(f"the versions of {name} are unknown: {directory} was not looked at (the look given is "
                          f"at {found.path})", hint="nothing was decided: report this, then run the command again")
    if found.there:
        why = _not_its_directory(found, deployment)
        if why:
            raise DeployError(f"the versions of {name} are unknown: {directory} is not its page directory: {why}",
                              hint="nothing is decided on versions that were not read: look at it, and deploy "
                                   f"{name} again once it is the deployment's")
        return
    missing = directory if clients.binds.has_root(bind_root) else bind_root  # only which one the message names
    raise DeployError(f"the versions of {name} are unknown here: {missing} does not exist on this host, and {name} "
                      f"keeps its page in {directory}",
                      hint=f"run the command on the node that holds it (`docker service ps {name}` names it)")


def _not_its_directory(found: PageDirectory, deployment: Deployment) -> str:
    """Return why the directory `found` is not the page directory of `deployment` (a link, no marker of
    graphsite's, another deployment's), '' when it is, or when `deployment` has no id: a release before versions,
    whose pages no marker can prove (none of them is counted)."""
    if not deployment.id:
        return ""
    if found.link is not None:
        return f"a symbolic link to {shown(found.link)}, which graphsite never follows"
    stamp = found.own_stamp
    if stamp is None:
        return "no marker of graphsite's names it"
    if stamp.id != deployment.id or stamp.fqdn != deployment.fqdn:
        return f"its marker names deployment {stamp.id or '-'} of {stamp.fqdn or '-'}, not {deployment.id or '-'}"
    return ""


def read_kept(name: str, deployment: Deployment, domain: str, bind_root: Path, clients: Clients, *,
              content: str | None = None, held: Held | None = None,
              labelled: Mapping[str, Mapping[str, str]] | None = None,
              ) -> tuple[Versions, Callable[[Version], bytes | None]]:
    """Return the versions deployment `name` keeps in its content mode (`content`, else the deployment's): its
    page configs (`labelled`: {config: labels} of the name's, as a read already found them, else read now), or
    the v/<sha12>/ of its bind directory (`held`: as a read already found them, else read now); and how to read a
    version's page (None: gone)."""
    if (content or deployment.content) == "bind":
        directory = bind_dir(bind_root, name)
        markers = held.markers_of(directory) if held is not None else None
        if markers is None:
            markers = clients.binds.versions(directory)
        labelled, places = bind_pages(markers, name, directory)
        return (read_versions(labelled, deployment, domain, places=places),
                lambda version: clients.binds.version_page(directory, version.short))
    swarm = clients.docker
    return (read_versions(swarm.labelled_configs(name) if labelled is None else labelled, deployment, domain),
            lambda version: swarm.read_config(version.config))
