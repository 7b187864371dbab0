"""`graphsite rollback NAME [--to SHA]`: make a kept version live again. It is a deploy whose page is read from
the version's config instead of built: the same lock, plan, start-first service update (no failed request),
route, record, undo on failure or signal, and verify, against the version's own sha256."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphsite.config import Config
from graphsite.errors import DeployError
from graphsite.publisher.clients import Clients
from graphsite.publisher.ports import Reporter
from graphsite.publisher.versions import choose, look_at, page_refusal
from graphsite.usecases.deploy import DeployRequest, DeployResult, Page, deploy
from graphsite.usecases.history import kept_versions
from graphsite.usecases.inventory import Holding, SurveySettings


@dataclass(frozen=True)
class RollbackRequest:
    name: str  # the subdomain
    to: str | None = None  # a sha256 or its first 7+ hex digits; None: the one live before the live one
    dry_run: bool = False
    keep_on_failure: bool = False
    verify: bool = True
    wait: float = 0.0


def rollback(config: Config, request: RollbackRequest, clients: Clients, reporter: Reporter) -> DeployResult:
    """Make the chosen kept version of `request.name` live; return what the deploy did and its checks."""

    def version(clients: Clients, seen: Holding) -> Page:  # called under the name's lock, with its survey
        name, answers = seen.name, seen.answers
        assert answers is not None, "deploy surveys the name with every system it decides on"
        if answers.service is None:
            raise DeployError(f"nothing to roll back: no service of {name} that graphsite made",
                              hint="`graphsite list` shows what is deployed")
        kept = kept_versions(SurveySettings.from_config(config), name, clients, answers.service,
                             labelled=answers.configs, directory=answers.directory)
        live, found, read = kept.deployment, kept.found, kept.read
        if live is None:  # kept_versions refuses a service whose labels are not graphsite's: a guard
            raise DeployError(f"nothing to roll back: no service of {name} that graphsite made")
        target = choose(found, request.to, live.replaced)
        data = read(target)
        if data is None:
            raise DeployError(f"{target.config} (version {target.short}) was removed meanwhile",
                              hint=f"`graphsite history {name}` lists the versions kept")
        refusal = page_refusal(target, data)
        if refusal is not None:
            raise DeployError(f"{target.config}: {refusal}; not rolled back", hint=look_at(target))
        try:
            html = data.decode("utf-8")
        except UnicodeDecodeError:
            raise DeployError(f"{target.config}: its page is not UTF-8; not rolled back") from None
        reporter.info(f"  version {target.short} (live first {target.deployed or 'at an unknown time'}), "
                      f"replacing {live.sha256[:12]}")
        return Page(html, target.sha256, target.title, target.date, content=live.content)

    return deploy(config, DeployRequest(source=Path("-"), subdomain=request.name, dry_run=request.dry_run,
                                        keep_on_failure=request.keep_on_failure, verify=request.verify,
                                        wait=request.wait, version=version), clients, reporter)
