"""`graphsite teardown NAME`: take the page offline, remove every trace of the deployment, and prove it."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config


@click.command("teardown")
@click.argument("name")
@click.option("--wait", type=float, default=30.0, metavar="SECONDS", help="Wait for a deploy running on NAME.")
@json_option
@config_option
def teardown_command(name: str, wait: float, as_json: bool, config_path: Path | None) -> None:
    """Remove NAME's route, service, configs, directory and record (in that order: the page goes offline first);
    print removed/absent/kept/failed for each, then the proof. NAME is the subdomain alone or its fqdn."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.progress import Console
    from graphsite.usecases.teardown import TeardownSettings, teardown

    config = site(load_config(config_path))
    name = subdomain_of(name, config.site.domain)  # before connecting: a mistyped name costs no connection
    with connected(config, partial=True) as clients:
        report = teardown(TeardownSettings.from_config(config), name, clients, Console(), wait=wait)
    present.teardown(report, as_json)
