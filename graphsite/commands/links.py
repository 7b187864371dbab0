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
    from graphsite.config import load_config
    from graphsite.paths import default_source

    config = load_config(config_path)
    flags = {k: v for k, v in {"timeout": timeout, "concurrency": concurrency}.items() if v is not None}
    config = config.replace("links", **flags) if flags else config
    report = check_report_links(source or default_source(), config, use_cache=not no_cache)
    report_links(report, config.links.fail_on, as_json)


def report_links(report, fail_on, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Warnings and the table on stderr, the JSON object on stdout; LinkCheckError when a link fails."""
    from graphsite import output
    from graphsite.citations.summary import render_summary
    from graphsite.errors import LinkCheckError

    for warning in report.warnings:
        output.warn(warning)
    output.info(render_summary(report, every_link=output._verbosity >= 1))
    if as_json:
        output.emit_json(report.as_dict())
    failing = report.failing(fail_on)
    if failing:
        first = failing[0]
        raise LinkCheckError(f"{len(failing)} link(s) {'/'.join(fail_on)}: first {first.url} ({first.detail})",
                             hint="fix or replace the link in the report, or add its prefix to links.skip")
