"""`graphsite links [SOURCE]`: check every link of a report, over the network where it leads there.

Exit status: 0 when no link ends in a state of links.fail_on (dead by default), 1 when one does, 2 for a usage,
configuration or input error, 130 / 143 / 129 when SIGINT (Ctrl-C) / SIGTERM / SIGHUP stopped the run (the verdicts
reached are printed, saved in the cache and marked partial in --json).
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("links")
@click.argument("source", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds one request may take in all: connect, headers, body [links.timeout].")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True),
              help="Seconds the whole check may take [links.deadline].")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight [links.concurrency].")
@click.option("--no-cache", is_flag=True, help="Check every link again (the cache is refreshed, not read).")
@click.option("--offline", is_flag=True, help="Ask nothing of the network: every verdict from the cache.")
@click.option("--allow-private", is_flag=True, default=None,
              help="Also request loopback and private addresses [links.allow_private].")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def links_command(source: Path | None, as_json: bool, timeout: float | None, deadline: float | None,
                  concurrency: int | None, no_cache: bool, offline: bool, allow_private: bool | None,
                  config_path: Path | None) -> None:
    """Check every link of SOURCE (default: content/graph-engineering.md): ok, redirected, warn, blocked, unavailable,
    dead, timeout, unverified, local, private, skipped, each with its Markdown line. Exits 0 when clean, 1 when a
    link is dead (links.fail_on), 2 on a usage or configuration error, 130/143/129 when interrupted."""
    from graphsite.citations.console import show_links
    from graphsite.errors import BuildError, ConfigError
    from graphsite.usecases.links import check_report_links

    try:
        from graphsite.config import load_config
        from graphsite.paths import default_source

        config = load_config(config_path)
        flags = {"timeout": timeout, "deadline": deadline, "concurrency": concurrency, "allow_private": allow_private}
        config = config.replace("links", **{k: v for k, v in flags.items() if v is not None})
        report = check_report_links(source or default_source(), config, use_cache=not no_cache, offline=offline)
    except (ConfigError, BuildError) as error:
        raise error.ending_with(2) from None  # the input is wrong, not a link: distinct from exit 1 (fail_on)
    except KeyboardInterrupt:  # before or after the checks (reading the report): nothing to save yet
        raise SystemExit(130) from None
    show_links(report, config.links.fail_on, as_json=as_json)
