"""`graphsite config show [--json]` and `graphsite config schema`: the configuration as documentation."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("config")
def config_group() -> None:
    """Show the effective configuration, or the JSON Schema of graphsite.toml."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def show_command(as_json: bool, config_path: Path | None) -> None:
    """Print every effective value and its source (default, file, environment); the token is redacted."""
    from graphsite import output
    from graphsite.usecases.configdoc import effective, render_toml, token_setting

    config, settings, chosen = effective(config_path)
    token = token_setting(config)
    if as_json:
        output.emit_json({"config_file": str(config.path or ""), "config_file_source": chosen,
                          "values": {s.name: s.as_json() for s in settings}, "token": token.as_json()})
        return
    output.result(f"# configuration file: {config.path or '(none)'} ({chosen})")
    output.result(f"# Cloudflare token: {'set' if token.value else 'not set'} ({token.source}; never shown)")
    output.result(render_toml(settings).rstrip("\n"))


@config_group.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of graphsite.toml (checked in as graphsite/schemas/graphsite.schema.json)."""
    from graphsite.usecases.configdoc import schema_text

    click.echo(schema_text(), nl=False)
