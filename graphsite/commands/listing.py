"""`graphsite list [NAME]`: every resource graphsite made, grouped by deployment, as the systems record them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config


@click.command("list")
@click.argument("name", required=False)
@json_option
@config_option
def list_command(name: str | None, as_json: bool, config_path: Path | None) -> None:
    """List every deployment, complete or partial: fqdn, age, expiry, sha, replicas, access, state; with NAME
    (the subdomain alone or its fqdn), only that one, or "nothing deployed for NAME". Exits 1 when a system could
    not be read (the others are still listed)."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.clients import connected, site
    from graphsite.usecases.inventory import SurveySettings, survey

    config = site(load_config(config_path))
    subdomain = subdomain_of(name, config.site.domain) if name is not None else None  # before connecting
    with connected(config, partial=True) as clients:
        inventory = survey(SurveySettings.from_config(config), clients, name=subdomain, runtime=True)
    present.listing(inventory, datetime.now(UTC), as_json, name=subdomain)
