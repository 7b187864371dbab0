"""`graphsite history NAME`: the versions a deployment keeps, newest first, the live one marked."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config


@click.command("history")
@click.argument("name")
@json_option
@config_option
def history_command(name: str, as_json: bool, config_path: Path | None) -> None:
    """List the versions deployment NAME (the subdomain alone or its fqdn) keeps: sha, when each went live
    first, the graphsite that made it, the source's title and date, and its own URL (/v/<sha12>/); the live
    one marked. Exits 1 when Swarm cannot be read."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.clients import connected, site
    from graphsite.usecases.history import history
    from graphsite.usecases.inventory import SurveySettings

    config = site(load_config(config_path))
    name = subdomain_of(name, config.site.domain)  # before connecting: a mistyped name costs no connection
    with connected(config) as clients:
        found = history(SurveySettings.from_config(config), name, clients)
    present.history(found, as_json)
