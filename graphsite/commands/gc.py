"""`graphsite gc`: tear down every expired deployment, and what runs that died halfway left behind."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config


def _moment(ctx: click.Context, param: click.Parameter, text: str | None) -> datetime | None:
    from graphsite.publisher.deployment import parse_stamp

    if text is None:
        return None
    moment = parse_stamp(text)
    if moment is None:
        raise click.BadParameter(f"{text!r} is not a moment such as 2026-07-01T12:00:00Z")
    return moment


@click.command("gc")
@click.option("--dry-run", is_flag=True, help="Name what would be torn down; touch nothing.")
@click.option("--prefix", default="", metavar="TEXT", help="Only names that start with TEXT.")
@click.option("--wait", type=float, default=0.0, metavar="SECONDS",
              help="Wait for a run that holds a name's lock (default: skip that name this time).")
@json_option
@config_option
# The clock, injected: a test judges a --ttl 1s deployment expired without waiting out the second.
@click.option("--now", callback=_moment, hidden=True, metavar="STAMP", help="Judge expiry at STAMP, not now.")
def gc_command(dry_run: bool, prefix: str, wait: float, as_json: bool, config_path: Path | None,
               now: datetime | None) -> None:
    """Tear down every deployment whose --ttl has passed, and every partial one older than deploy.gc_grace."""
    from graphsite.commands import present
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.progress import Console
    from graphsite.usecases.gc import GcSettings, collect

    config = site(load_config(config_path))
    with connected(config, partial=True) as clients:
        report = collect(GcSettings.from_config(config), clients, Console(), dry_run=dry_run, prefix=prefix,
                         wait=wait, now=now)
    present.gc(report, as_json)
