"""`graphsite list`: deployments as the systems record them, with orphans."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite import output
from graphsite.config import load_config


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def list_command(as_json: bool, config_path: Path | None) -> None:
    """List every deployment: fqdn, age, expiry, sha, replicas, orphans."""
    from graphsite.publisher.commands import list_verb, render_list

    entries, now = list_verb(load_config(config_path))
    if as_json:
        output.emit_json({"deployments": [e.as_json(now) for e in entries]})
    else:
        for line in render_list(entries, now):
            output.result(line)
