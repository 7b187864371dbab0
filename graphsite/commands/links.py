"""`graphsite links [SOURCE]`: check every outbound link of a report over the network."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("links")
@click.argument("source", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--timeout", type=click.FloatRange(min=0.1), help="Seconds per request [links.timeout].")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight [links.concurrency].")
@click.option("--no-cache", is_flag=True, help="Check every link again; neither read nor write the cache.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def links_command(source: Path | None, as_json: bool, timeout: float | None, concurrency: int | None,
                  no_cache: bool, config_path: Path | None) -> None:
    """Check every outbound URL of SOURCE (default: content/graph-engineering.md): ok, redirected, blocked,
    dead, timeout or skipped. Exits 1 when a link is dead (links.fail_on)."""
    from graphsite.citations.report_links import check_report_links
    from graphsite.citations.summary import show_links
    from graphsite.config import load_config
    from graphsite.paths import default_source

    config = load_config(config_path)
    flags = {k: v for k, v in {"timeout": timeout, "concurrency": concurrency}.items() if v is not None}
    config = config.replace("links", **flags) if flags else config
    report = check_report_links(source or default_source(), config, use_cache=not no_cache)
    show_links(report, config.links.fail_on, as_json=as_json)
