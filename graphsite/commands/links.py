"""`graphsite links [SOURCE]`: check every link of a report, over the network where it leads there.

Exit status: 0 when no link ends in a state of links.fail_on (dead by default), 1 when one does, 2 for a usage,
configuration or input error, 130 / 143 / 129 when SIGINT (Ctrl-C) / SIGTERM / SIGHUP stopped the run (the verdicts
reached are printed, saved in the cache and marked partial in --json).
"""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option, source_argument


@click.command("links")
@source_argument(dir_okay=False)
@json_option
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds one request may take in all: connect, headers, body [links.timeout].")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True),
              help="Seconds the whole check may take [links.deadline].")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight [links.concurrency].")
@click.option("--no-cache", is_flag=True, help="Check every link again (the cache is refreshed, not read).")
@click.option("--offline", is_flag=True, help="Ask nothing of the network: every verdict from the cache.")
@click.option("--allow-private", is_flag=True, default=None,
              help="Also request loopback and private addresses [links.allow_private].")
@config_option
def links_command(source: Path | None, as_json: bool, timeout: float | None, deadline: float | None,
                  concurrency: int | None, no_cache: bool, offline: bool, allow_private: bool | None,
                  config_path: Path | None) -> None:
    """Check every link of SOURCE (default: content/graph-engineering.md; `-`: standard input): ok, redirected,
    warn, blocked, unavailable, dead, timeout, unverified, local, private, skipped, each with its Markdown line.
    Exits 0 when clean, 1 when a link is dead (links.fail_on), 2 on a usage or configuration error, 130/143/129
    when interrupted."""
    from graphsite import output
    from graphsite.codes import Exit
    from graphsite.commands import present
    from graphsite.config import load_config
    from graphsite.errors import BuildError, ConfigError
    from graphsite.paths import default_source
    from graphsite.usecases.links import check_report_links

    output.end_without_teardown()  # it writes the cache atomically and closed, and runs no thread past its check
    try:
        config = load_config(config_path)
        flags = {"timeout": timeout, "deadline": deadline, "concurrency": concurrency, "allow_private": allow_private}
        config = config.replace("links", **{k: v for k, v in flags.items() if v is not None})
        report = check_report_links(source or default_source(), config, use_cache=not no_cache, offline=offline)
    except (ConfigError, BuildError) as error:
        raise error.ending_with(Exit.USAGE) from None  # the input is wrong, not a link: 1 means a link failed
    present.links(report, config.links.fail_on, as_json)
