"""`graphsite rollback NAME [--to SHA]`: make a kept version live again, without downtime, then verify it."""

from __future__ import annotations

import time
from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config


@click.command("rollback")
@click.argument("name")
@click.option("--to", "to", metavar="SHA", help="The version to make live: its sha256 or first 7+ hex digits "
              "(default: the one live before the live one, i.e. the page the last deploy or rollback replaced).")
@click.option("--dry-run", is_flag=True, help="Print the plan; touch nothing.")
@click.option("--keep-on-failure", is_flag=True, help="Keep what a failed run changed, for inspection.")
@click.option("--no-verify", "skip_verify", is_flag=True, help="Skip the checks after rolling back.")
@click.option("--wait", type=float, default=0.0, metavar="SECONDS", help="Wait for another run on the name.")
@json_option
@config_option
def rollback_command(name: str, to: str | None, dry_run: bool, keep_on_failure: bool, skip_verify: bool,
                     wait: float, as_json: bool, config_path: Path | None) -> None:
    """Switch deployment NAME (the subdomain alone or its fqdn) to a kept version (`graphsite history NAME`
    lists them) with a start-first update, as a redeploy does, then verify it against that version's sha256."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.progress import Console
    from graphsite.publisher.versions import sha_prefix
    from graphsite.usecases.rollback import RollbackRequest, rollback

    if to is not None:  # before anything else: a mistyped sha costs no configuration and no connection
        try:
            to = sha_prefix(to)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--to") from None
    start, config = time.perf_counter(), site(load_config(config_path))
    name = subdomain_of(name, config.site.domain)  # before connecting: a mistyped name costs no connection
    request = RollbackRequest(name, to=to, dry_run=dry_run, keep_on_failure=keep_on_failure,
                              verify=not skip_verify, wait=wait)
    with connected(config) as clients:
        result = rollback(config, request, clients, Console())
    present.deploy(result, time.perf_counter() - start, as_json, verb="Rolled back")
