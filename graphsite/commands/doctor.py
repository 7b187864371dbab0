"""`graphsite doctor [--json]`: every precondition of a deploy, checked read-only; exit 1 on any FAIL."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite import output
from graphsite.errors import GraphsiteError


class DoctorError(GraphsiteError):
    """At least one precondition of a deploy fails."""


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def doctor_command(as_json: bool, config_path: Path | None) -> None:
    """Check every precondition of a deploy (Docker, Traefik, Cloudflare, DNS, TLS) without changing anything."""
    from graphsite.config import load_config
    from graphsite.usecases.doctor import FAIL, diagnose

    config = load_config(config_path)
    checks = diagnose(config)
    for check in checks:
        output.info(f"  {check.status} {check.name:20} {check.evidence}")
        if check.fix:
            output.info(f"       {'':20} fix: {check.fix}")
    failed = [c.name for c in checks if c.status == FAIL]
    counts = {s: sum(c.status == s for c in checks) for s in ("PASS", "WARN", "FAIL", "SKIP")}
    output.info(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" ({config.path or 'built-in defaults'})")
    if as_json:
        output.emit_json({"ok": not failed, "config": str(config.path or ""), "checks": [c.as_json() for c in checks]})
    if failed:
        raise DoctorError(f"{len(failed)} check(s) failed: {', '.join(failed)}",
                          hint="each FAIL above says the fix; nothing was changed")
