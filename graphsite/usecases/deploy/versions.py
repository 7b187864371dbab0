"""A deploy's versions, where they touch the systems: the bind directory's v/ read once in the plan step, the
former content mode's versions a switch would drop, the kept versions the new plan serves (their pages read and
proven), the new page kept as v/<sha12>/ in bind mode, and what fell off deploy.keep_versions dropped once the
new page is live. What is kept, what a switch must not drop and how a kept page is served are decided by the
pure functions of publisher/versions.py; this module reads and writes, and registers each write's undo first.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite import __version__
from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError
from graphsite.publisher.bind import VERSIONS
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Deployment, PageDirectory, Stamp, adopted, bind_dir, claim
from graphsite.publisher.outcomes import KEPT, Outcome
from graphsite.publisher.plan import ConfigFile, DeployPlan
from graphsite.publisher.ports import BindStore, Reporter
from graphsite.publisher.undo import Undo
from graphsite.publisher.versions import (
    Held,
    Switch,
    Unproven,
    Version,
    bind_pages,
    dropped_line,
    kept,
    marker_labels,
    read_versions,
    served_csp,
    short,
    version_labels,
    version_marker,
)
from graphsite.usecases.history import held_here, read_kept
from graphsite.usecases.inventory import Unread, known

if TYPE_CHECKING:
    from graphsite.usecases.diff import LivePage

Labelled = Mapping[str, Mapping[str, str]]  # {config: its labels}, as Swarm listed a name's


def read_held(plan: DeployPlan, clients: Clients) -> Held | None:
    """Return what the plan's bind directory holds under v/ (None in content mode config): read once, in the plan
    step, so that what the plan serves and what the content step keeps are decided from the same answer."""
    return Held(plan.bind_dir, clients.binds.versions(plan.bind_dir)) if plan.bind_dir else None


def switch(config: Config, plan: DeployPlan, previous: Deployment | None, clients: Clients,
           labelled: Labelled, directory: PageDirectory | Unread) -> Switch | None:
    """Return the versions of the former content mode a redeploy to the other one drops; raise DeployError when it
    must not (Switch.refusal) or when they cannot be read (unknown, not none). With deploy.keep_versions = 1,
    which keeps none, a bind directory this host does not hold is not asked for: nothing of it is here to drop
    (it stays where it is). `labelled` and `directory`: the name's configs and page directory, as the plan step's
    survey read them."""

    if previous is None or previous.content == plan.content_mode:
        return None
    bind_root = Path(config.deploy.bind_root)
    if config.deploy.keep_versions == 1 and previous.content == "bind" and not known(directory).there:
        return Switch(previous.content, plan.content_mode, ())
    held_here(plan.subdomain, previous, bind_root, clients, directory)
    found, _ = read_kept(plan.subdomain, previous, config.site.domain, bind_root, clients, labelled=labelled)
    # a bind directory is removed whole, with what is under v/ and not proven the deployment's and what graphsite
    # did not put there; unproven configs are left where they are
    unproven = found.unproven + _strays(bind_root, plan.subdomain, clients) if previous.content == "bind" else ()
    change = Switch(previous.content, plan.content_mode, tuple(v for v in found.versions if v.sha256 != plan.sha256),
                    unproven)
    refusal = change.refusal(plan.subdomain, config.deploy.keep_versions)
    if refusal is not None:
        raise refusal
    return change


def unproven_in(config: Config, name: str, deployment: Deployment, clients: Clients) -> tuple[Unproven, ...]:
    """Return what the bind directory of `name` holds that nothing proves `deployment`'s, read now: the folders
    under v/ history lists apart, and what graphsite did not put there."""

    bind_root = Path(config.deploy.bind_root)
    found, _ = read_kept(name, deployment, config.site.domain, bind_root, clients, content="bind")
    return found.unproven + _strays(bind_root, name, clients)


def _strays(bind_root: Path, name: str, clients: Clients) -> tuple[Unproven, ...]:
    """Return what is in the bind directory of `name` and its v/ that graphsite did not put there (a note, a
    backup, a folder whose name is no version's): removing the directory would take it too."""
    directory = bind_dir(bind_root, name)
    return tuple(Unproven(str(directory / entry), "graphsite did not put it there")
                 for entry in clients.binds.strays(directory))


def keep_versions(config: Config, plan: DeployPlan, previous: Deployment | None, clients: Clients, title: str,
                  date: str, held: Held | None, labelled: Labelled, directory: PageDirectory | Unread,
                  live: LivePage | None = None) -> DeployPlan:
    """Return the plan serving, beside the new page (the source's `title` and `date`), the kept versions of the
    deployment (the newest deploy.keep_versions - 1 others): the ones that fall off are removed once the new page
    is live. Raise DeployError when a bind redeploy's versions are unknown here (its directory is not on this
    host, or not the deployment's): a directory that is not there is no proof that none is kept. `held`,
    `labelled` and `directory` are the plan step's reads of the bind directory's v/, of the name's configs and of
    the page directory itself; `live`, the live page the render step read (its config's data is immutable: it is
    not read again for its CSP)."""

    labels = version_labels(datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z"),
                            title, date, __version__)
    if previous is None:
        return plan.with_versions(labels, ())
    bind_root = Path(config.deploy.bind_root)
    if previous.content == plan.content_mode == "bind" and previous.id and (
            config.deploy.keep_versions > 1 or known(directory).there):
        # else the deploy would make a new directory here, pin the service here and strand the kept versions
        # where they are, or take over a directory that is not the deployment's (a link, another's marker);
        # keep_versions = 1 keeps none, so a directory not here is not asked for, and a deployment without an id
        # has none that can be proven
        held_here(plan.subdomain, previous, bind_root, clients, directory)
    found, read = read_kept(plan.subdomain, previous, config.site.domain, bind_root, clients,
                            content=plan.content_mode, held=held, labelled=labelled)
    same = next((v for v in found.versions if v.sha256 == plan.sha256 and v.deployed), None)
    if same is not None:  # a version made live again stays what it is: when it went live first, who deployed it
        labels = same.labels()
    served, configs = [], []
    for version in kept(found.versions, plan.sha256, config.deploy.keep_versions, replaced=previous.sha256):
        if live is not None and plan.bind_dir is None and live.config == version.config != "":
            data: bytes | None = live.data  # the render step read this very config (Swarm never changes its data)
        else:
            data = read(version)
        if data is None:  # removed since it was listed
            continue
        served.append((version.sha256, served_csp(version, data)))
        if plan.bind_dir is None:
            configs.append(ConfigFile(version.config, "", version.sha256, b"", tuple(version.labels().items())))
    return plan.with_versions(labels, tuple(served), tuple(configs))


def keep_page(plan: DeployPlan, binds: BindStore, undo: Undo, proven: bool, planned: Held, *, first: bool) -> None:
    """Keep the plan's page as version v/<sha12>/ of its bind directory, from what the plan step read there
    (`planned`): made when it was not there, stamped again in place when a killed first run of this name kept it
    (`first`: no service of the name), else proven this deployment's as it is. The undo removes or restamps back
    only what this run wrote."""
    directory = plan.bind_dir
    assert directory is not None
    domain = plan.fqdn.split(".", 1)[1]
    sha12 = short(plan.sha256)
    marker = version_marker(plan.stamp, plan.sha256, dict(plan.page_labels))
    markers = planned.markers_of(directory)
    assert markers is not None, "the plan step read the plan's own bind directory"
    earlier = markers.get(sha12)
    if sha12 not in markers:
        undo.push(f"version {sha12} in {directory}", f"removed version {sha12} of {directory}",
                  partial(_remove_version_made, binds, directory, sha12, marker))
        if not binds.keep_version(directory, sha12, plan.page, marker):  # not there when the plan looked
            raise DeployError(f"{directory / 'v' / sha12} appeared since this deploy's plan; left in place",
                              hint="look at it and remove it by hand if it is yours, then deploy again")
    elif first and earlier and _kept_by_an_earlier_run(plan, binds, earlier, domain, proven):
        # the folder existed before this run: it is stamped again in place, and the undo puts its marker back
        undo.push(f"marker of version {sha12} in {directory}",
                  f"put back the previous marker of version {sha12} in {directory}",
                  partial(_restamp_version_made, binds, directory, sha12, marker, earlier))
        if not binds.restamp_version(directory, sha12, marker):
            raise _gone(directory, sha12)
    else:  # kept by an earlier deploy of this deployment, as it was
        _refuse_unproven_version(plan, binds, earlier, domain)


def _gone(directory: Path, sha12: str) -> DeployError:
    """Return the failure of a content step that finds no folder at v/<sha12> where its plan read one."""
    return DeployError(f"{directory / 'v' / sha12} is gone since this deploy's plan read it: something else "
                       f"changes {directory}", hint="look at what else writes there, then deploy again")


def drop_bind_versions(config: Config, plan: DeployPlan, clients: Clients, reporter: Reporter) -> tuple[Outcome, ...]:
    """Remove the versions kept in the bind directory that the plan no longer serves (proven ones only), looked at
    again now that the new page is live; return those left in place (KEPT, saying why), each warned about. One
    refused (a stray in its folder) does not keep the older ones: each is removed or left on its own."""

    # Read again, not taken from the plan's read as the old configs are (_remove_old_content): a version folder is
    # a directory anything may have written into, or restamped, since the plan read it, and its removal takes what
    # it holds; a config's data cannot change under its name, and Docker refuses to remove one in use.
    directory = plan.bind_dir
    assert directory is not None
    found, _ = read_kept(plan.subdomain, plan.deployment, config.site.domain, Path(config.deploy.bind_root),
                         clients, content="bind")
    served = {sha12 for sha12, _ in plan.server.versions}
    left: list[Outcome] = []
    for version in (v for v in found.versions if v.short not in served):
        try:
            removed = clients.binds.remove_version(directory, version.short)
        except GraphsiteError as exc:  # the deployment is live: a leftover is the next deploy's or teardown's
            reporter.warn(f"old content of {plan.subdomain} left in place: {exc.message}")
            left.append(Outcome("version", str(directory / VERSIONS / version.short), KEPT, exc.detail))
            continue
        if removed:
            reporter.info(f"  {dropped_line(version, config.deploy.keep_versions)}")
    return tuple(left)


def falling_off(config: Config, plan: DeployPlan, clients: Clients, held: Held | None,
                labelled: Labelled) -> tuple[Version, ...]:
    """Return the kept versions of the plan's deployment that the plan no longer serves: what a run drops once
    the new page is live (deploy.keep_versions), said by a dry run in the run's words, from the plan's reads."""

    found, _ = read_kept(plan.subdomain, plan.deployment, config.site.domain, Path(config.deploy.bind_root), clients,
                         content=plan.content_mode, held=held, labelled=labelled)
    served = {sha12 for sha12, _ in plan.server.versions}
    return tuple(version for version in found.versions if version.short not in served)


def _remove_version_made(binds: BindStore, directory: Path, sha12: str, marker: str) -> bool:
    """Remove v/<sha12> while it holds the marker this run wrote: a folder of that name it did not make is not its
    to remove."""
    return binds.versions(directory).get(sha12) == marker and binds.remove_version(directory, sha12)


def _restamp_version_made(binds: BindStore, directory: Path, sha12: str, marker: str, earlier: str) -> bool:
    """Put `earlier` back as the marker of v/<sha12> while it holds the one this run wrote."""
    return binds.versions(directory).get(sha12) == marker and binds.restamp_version(directory, sha12, earlier)


def _kept_by_an_earlier_run(plan: DeployPlan, binds: BindStore, marker: str, domain: str, proven: bool) -> bool:
    """True when v/<sha12> holds this very page, kept by an earlier run of this configuration for this name under
    another deployment id (asked only of a first deploy, no service of the name: a first deploy killed once it had
    kept its page, whose rerun is a new deployment). Like a config of the same data, it is this run's to stamp
    again; anything else at v/<sha12>, or beside a live deployment, is refused."""
    directory = plan.bind_dir
    assert directory is not None
    stamp = Stamp.from_labels(marker_labels(marker))
    return (stamp is not None and stamp.id != plan.stamp.id
            and adopted(claim(stamp, plan.subdomain, domain), proven)
            and binds.version_page(directory, short(plan.sha256)) == plan.page)


def _refuse_unproven_version(plan: DeployPlan, binds: BindStore, marker: str | None, domain: str) -> None:
    """Raise DeployError when what is at v/<sha12> of the plan's page is not that version of this deployment
    (no directory, a marker that does not prove it, another page): it is left in place, never taken as kept."""
    directory, sha12 = plan.bind_dir, short(plan.sha256)
    assert directory is not None
    page = binds.version_page(directory, sha12)
    if page is None and sha12 not in binds.versions(directory):  # no page read because there is no folder now
        raise _gone(directory, sha12)
    labelled, places = bind_pages({sha12: marker}, plan.subdomain, directory)
    found = read_versions(labelled, plan.deployment, domain, places=places)
    why = found.unproven[0].why if found.unproven else ""
    if not why and page != plan.page:
        why = "its page is not this one"
    if why:
        raise DeployError(f"{directory / 'v' / sha12} exists and is not this deployment's version {sha12}: {why}; "
                          "left in place", hint="look at it and remove it by hand if it is yours, then deploy again")
