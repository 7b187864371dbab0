"""`graphsite doctor [--json]`: every precondition of a deploy, checked read-only; exit 1 on any FAIL."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option


@click.command("doctor")
@json_option
@config_option
def doctor_command(as_json: bool, config_path: Path | None) -> None:
    """Check every precondition of a deploy (Docker, Traefik, Cloudflare, DNS, TLS) without changing anything."""
    from graphsite.commands import present
    from graphsite.config import load_config
    from graphsite.usecases.doctor import diagnose

    config = load_config(config_path)
    present.doctor(diagnose(config), config.path, as_json)
