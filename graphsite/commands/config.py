"""`graphsite config show [--json]` and `graphsite config schema`: the configuration as documentation."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option


@click.group("config")
def config_group() -> None:
    """Show the effective configuration, or the JSON Schema of graphsite.toml."""


@config_group.command("show")
@json_option
@config_option
def show_command(as_json: bool, config_path: Path | None) -> None:
    """Print every effective value and its source (default, file, environment); the token is redacted."""
    from graphsite.commands import present
    from graphsite.usecases.configdoc import effective, render_toml, token_setting

    config, settings, chosen = effective(config_path)
    token = token_setting(config)
    data = {"config_file": str(config.path or ""), "config_file_source": chosen,
            "values": {s.name: s.as_json() for s in settings}, "token": token.as_json()}
    present.config_show(data, [f"# configuration file: {config.path or '(none)'} ({chosen})",
                               f"# Cloudflare token: {'set' if token.value else 'not set'} ({token.source}; never "
                               "shown)", render_toml(settings).rstrip("\n")], as_json)


@config_group.command("schema")
@json_option
def schema_command(as_json: bool) -> None:
    """Print the JSON Schema of graphsite.toml (checked in as graphsite/schemas/graphsite.schema.json); it is one
    JSON object, with or without --json."""
    from graphsite.commands import present
    from graphsite.usecases.configdoc import schema_text

    present.schema(schema_text())
