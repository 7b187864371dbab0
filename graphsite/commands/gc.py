"""`graphsite gc`: tear down every expired deployment."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite import output
from graphsite.config import load_config


@click.command("gc")
@click.option("--dry-run", is_flag=True, help="Name what would be torn down; touch nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def gc_command(dry_run: bool, as_json: bool, config_path: Path | None) -> None:
    """Tear down every deployment whose --ttl has passed."""
    from graphsite.publisher.commands import gc_verb

    collected = gc_verb(load_config(config_path), dry_run=dry_run)
    if as_json:
        output.emit_json({"dry_run": dry_run, "expired": [
            {"subdomain": e.subdomain, "expires": e.expires, "resources": [r.__dict__ for r in rs]}
            for e, rs in collected]})
    else:
        for entry, _ in collected:
            output.result(f"{'would tear down' if dry_run else 'tore down'} {entry.subdomain} "
                          f"(expired {entry.expires})")
