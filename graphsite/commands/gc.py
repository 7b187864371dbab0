"""`graphsite gc`: tear down every expired deployment, and what runs that died halfway left behind."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.config import load_config


@click.command("gc")
@click.option("--dry-run", is_flag=True, help="Name what would be torn down; touch nothing.")
@click.option("--prefix", default="", metavar="TEXT", help="Only names that start with TEXT.")
@click.option("--wait", type=float, default=0.0, metavar="SECONDS",
              help="Wait for a run that holds a name's lock (default: skip that name this time).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def gc_command(dry_run: bool, prefix: str, wait: float, as_json: bool, config_path: Path | None) -> None:
    """Tear down every deployment whose --ttl has passed, and every partial one older than deploy.gc_grace."""
    from graphsite.commands import present
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.gc import collect

    config = site(load_config(config_path))
    with connected(config, partial=True) as clients:
        report = collect(config, clients, dry_run=dry_run, prefix=prefix, wait=wait)
    present.gc(report, as_json)
