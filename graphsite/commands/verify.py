"""`graphsite verify NAME`: the seven checks of a deployment; exit 1 on any FAIL."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.config import load_config


@click.command("verify")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def verify_command(name: str, as_json: bool, config_path: Path | None) -> None:
    """Prove deployment NAME (the subdomain alone or its fqdn) is live: service, origin, public URL, TLS,
    redirect, DNS, route."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.verify import verify

    config = site(load_config(config_path))
    name = subdomain_of(name, config.site.domain)  # before connecting: a mistyped name costs no connection
    with connected(config) as clients:
        results = verify(config, name, clients)
    present.verify(name, results, as_json)
