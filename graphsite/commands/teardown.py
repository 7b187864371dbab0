"""`graphsite teardown NAME`: remove every trace of a deployment and prove it."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite import output
from graphsite.config import load_config


@click.command("teardown")
@click.argument("name")
@click.option("--wait", type=float, default=30.0, metavar="SECONDS", help="Wait for a deploy running on NAME.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def teardown_command(name: str, wait: float, as_json: bool, config_path: Path | None) -> None:
    """Remove NAME's record, route, service, configs and bind directory; print removed/absent for each."""
    from graphsite.publisher.commands import teardown_verb

    removals = teardown_verb(load_config(config_path), name, wait=wait)
    if as_json:
        output.emit_json({"name": name, "resources": [r.__dict__ for r in removals]})
    else:
        for removal in removals:
            output.result(removal.line())
