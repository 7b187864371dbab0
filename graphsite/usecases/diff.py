"""What a new version of a report changes against an old one or against the page a deployment serves."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.config import PASSWORD_ENV
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.build import BuiltPage
    from graphsite.builder.compare import Changes
    from graphsite.builder.model import Report
    from graphsite.builder.outline import Outline
    from graphsite.config import Config
    from graphsite.publisher.clients import Clients
    from graphsite.publisher.swarm import Service

PAGE_SUFFIXES = (".html", ".htm")


def between_files(old: Path, new: Path, config: Config) -> Changes:
    """What NEW changes against OLD, each a report (Markdown) or a page `build` wrote."""
    from graphsite.builder.compare import compare

    return compare(outline(old, config), outline(new, config))


def against_live(name: str, new: Path, config: Config) -> Changes:
    """What the report NEW changes against the page deployment NAME serves to its readers."""
    from graphsite.builder.compare import compare

    built = outline(new, config)  # a report that does not build (or a broken theme) fails before the request
    return compare(live_outline(name, config), built)


def outline(path: Path, config: Config) -> Outline:
    """The outline of a built page (.html), else of the page the Markdown at `path` builds into."""
    from graphsite.builder.build import page_from_source
    from graphsite.builder.outline import read_outline
    from graphsite.errors import BuildError
    from graphsite.usecases.build import build_settings

    if path.suffix.lower() in PAGE_SUFFIXES:
        try:
            return read_outline(path.read_text(encoding="utf-8"), where=str(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise BuildError(f"{path}: cannot read the page: {getattr(exc, 'strerror', None) or exc}") from None
    # fonts do not change what the page says: "system" skips subsetting them
    page = page_from_source(path, fonts="system", **build_settings(config))
    return read_outline(page.html, where=str(path))


def live_outline(name: str, config: Config) -> Outline:
    """The outline of the page deployment NAME serves to its readers (a private one's password from
    $GRAPHSITE_PASSWORD)."""
    from graphsite.builder.outline import read_outline
    from graphsite.labels import subdomain_of
    from graphsite.publisher.access import USER
    from graphsite.publisher.clients import site
    from graphsite.publisher.served import served_page

    config = site(config)
    subdomain = subdomain_of(name, config.site.domain)
    password = os.environ.get(PASSWORD_ENV, "")
    fqdn = f"{subdomain}.{config.site.domain}"
    html = served_page(config, fqdn, (USER, password) if password else None)
    return read_outline(html, where=f"the page https://{fqdn}/ serves")


@frozen
class LiveChanges:
    """What a deploy's new version changes against the live one: `changes`, or why they are unknown (`unknown`,
    the live page could not be read or compared: then the page carries no note). `noted`: the page notes them."""

    changes: Changes | None = None
    unknown: str = ""
    noted: bool = False


def held_outline(subdomain: str, config: Config, clients: Clients, current: Service | None) -> Outline | None:
    """The outline of the page the deployment `subdomain` serves, as the systems hold it (its page config, or its
    directory in bind mode; no request to the edge, so a private page needs no password); None when there is no
    service of the name (`current`: as the caller read it). A page that cannot be found, read or parsed is an
    error, never "no page"."""
    from graphsite.builder.outline import read_outline
    from graphsite.errors import DeployError, GraphsiteError
    from graphsite.publisher.deployment import Deployment, bind_dir
    from graphsite.publisher.plan import config_name

    if current is None:
        return None
    live = Deployment.from_labels(current.labels)
    if live is None or not live.sha256:
        raise DeployError(f"service {subdomain}: its labels do not say which page it serves")
    where = f"the live version {live.sha256[:12]}"
    try:
        if live.content == "bind":
            held = clients.binds.page(bind_dir(config.deploy.bind_root, subdomain))
        else:
            held = clients.docker.read_config(config_name(subdomain, "page", live.sha256))
    except GraphsiteError as exc:
        raise DeployError(f"{where}: cannot read its page: {exc.message.splitlines()[0]}") from None
    except OSError as exc:
        raise DeployError(f"{where}: cannot read its page: {exc.strerror or exc}") from None
    if held is None:
        raise DeployError(f"{where}: its page was not found")
    try:
        return read_outline(held.decode("utf-8"), where=where)
    except UnicodeDecodeError:
        raise DeployError(f"{where}: its page is not UTF-8") from None


def deployed_page(report: Report, subdomain: str, config: Config, clients: Clients,
                  current: Service | None) -> tuple[BuiltPage, LiveChanges | None]:
    """Return the page deploy publishes from `report` (read and checked: usecases.build.checked_report), with
    its "Changed since" note when site.show_changes and the live page was read, and what it changes against the
    live page; None for a first deploy (no service of the name: `current`, as deploy's survey read it), which has
    nothing to compare with. A live page that cannot be read is an unknown, never "nothing changed"."""
    from graphsite.builder.build import check_theme
    from graphsite.errors import GraphsiteError
    from graphsite.usecases.build import rendered_page

    check_theme()  # a broken installation fails before the live page is read
    try:
        old = held_outline(subdomain, config, clients, current)
    except GraphsiteError as exc:
        old, unknown = None, exc.message.splitlines()[0]
    else:
        unknown = ""
    page = rendered_page(report, subdomain=subdomain, config=config, since=old, note=config.site.show_changes)
    if old is None:
        return page, (LiveChanges(unknown=unknown) if unknown else None)
    return page, LiveChanges(page.changes, noted=page.report.changes is not None)
