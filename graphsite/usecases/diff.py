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


@frozen
class LivePage:
    """The page a deployment serves, as the systems hold it, read once for a redeploy: the one it compares the
    new version with, and the one it keeps beside it (its CSP is read from it). `config`: the Swarm config it was
    read from ('' in bind mode: there it is the directory's index.html, not a kept version's)."""

    sha256: str
    config: str
    data: bytes


def held_page(subdomain: str, config: Config, clients: Clients, current: Service | None) -> LivePage | None:
    """The page the deployment `subdomain` serves, as the systems hold it (its page config, or its
    directory in bind mode; no request to the edge, so a private page needs no password); None when there is no
    service of the name (`current`: as the caller read it). A page that cannot be found or read is an error,
    never "no page"."""
    from graphsite.errors import DeployError, GraphsiteError
    from graphsite.publisher.deployment import Deployment, bind_dir
    from graphsite.publisher.plan import config_name

    if current is None:
        return None
    live = Deployment.from_labels(current.labels)
    if live is None or not live.sha256:
        raise DeployError(f"service {subdomain}: its labels do not say which page it serves")
    where = f"the live version {live.sha256[:12]}"
    name = "" if live.content == "bind" else config_name(subdomain, "page", live.sha256)
    try:
        if live.content == "bind":
            held = clients.binds.page(bind_dir(config.deploy.bind_root, subdomain))
        else:
            held = clients.docker.read_config(name)
    except GraphsiteError as exc:
        raise DeployError(f"{where}: cannot read its page: {exc.message.splitlines()[0]}") from None
    except OSError as exc:
        raise DeployError(f"{where}: cannot read its page: {exc.strerror or exc}") from None
    if held is None:
        raise DeployError(f"{where}: its page was not found")
    return LivePage(live.sha256, name, held)


def _outline_of(page: LivePage) -> Outline:
    """The outline of the live `page`; a page that does not parse or is no UTF-8 is an error."""
    from graphsite.builder.outline import read_outline
    from graphsite.errors import DeployError

    where = f"the live version {page.sha256[:12]}"
    try:
        return read_outline(page.data.decode("utf-8"), where=where)
    except UnicodeDecodeError:
        raise DeployError(f"{where}: its page is not UTF-8") from None


def deployed_page(report: Report, subdomain: str, config: Config, clients: Clients,
                  current: Service | None) -> tuple[BuiltPage, LiveChanges | None, LivePage | None]:
    """Return the page deploy publishes from `report` (read and checked: usecases.build.checked_report), with
    its "Changed since" note when site.show_changes and the live page was read, and what it changes against the
    live page; None for a first deploy (no service of the name: `current`, as deploy's survey read it), which has
    nothing to compare with. A live page that cannot be read is an unknown, never "nothing changed". Last, the
    live page as read (None: none, or it could not be read), for the deploy to keep without reading it again."""
    from graphsite.builder.build import check_theme
    from graphsite.errors import GraphsiteError
    from graphsite.usecases.build import rendered_page

    check_theme()  # a broken installation fails before the live page is read
    live: LivePage | None = None
    try:
        live = held_page(subdomain, config, clients, current)
        old = _outline_of(live) if live is not None else None
    except GraphsiteError as exc:
        old, unknown = None, exc.message.splitlines()[0]
    else:
        unknown = ""
    page = rendered_page(report, subdomain=subdomain, config=config, since=old, note=config.site.show_changes)
    if old is None:
        return page, (LiveChanges(unknown=unknown) if unknown else None), live
    return page, LiveChanges(page.changes, noted=page.report.changes is not None), live
