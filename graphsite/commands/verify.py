"""`graphsite verify NAME`: the seven checks of a deployment; exit 1 on any FAIL."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite import output
from graphsite.config import load_config
from graphsite.errors import VerifyError


@click.command("verify")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def verify_command(name: str, as_json: bool, config_path: Path | None) -> None:
    """Prove deployment NAME is live: service, origin, public URL, TLS, redirect, DNS, route."""
    from graphsite.publisher.commands import print_checks, verify_verb

    checks = verify_verb(load_config(config_path), name)
    print_checks(checks)
    failed = [c.name for c in checks if c.status == "FAIL"]
    if as_json:
        output.emit_json({"name": name, "ok": not failed, "checks": [c.as_json() for c in checks]})
    if failed:
        raise VerifyError(f"{name}: {len(failed)} check(s) failed: {', '.join(failed)}")
