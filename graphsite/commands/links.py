"""`graphsite links [SOURCE]`: check every link of a report, over the network where it leads there.

Exit status: 0 when no link ends in a state of links.fail_on (dead by default), 1 when one does, 2 for a usage,
configuration or input error, 130 / 143 / 129 when SIGINT (Ctrl-C) / SIGTERM / SIGHUP stopped the run (the verdicts
reached are printed, saved in the cache and marked partial in --json).
"""

from __future__ import annotations

from pathlib import Path

from graphsite.commands import words

COMMAND = words.Command(
    "links",
    "Check every link of SOURCE (default: content/graph-engineering.md; `-`: standard input): ok, redirected, "
    "warn, blocked, unavailable, dead, timeout, unverified, local, private, skipped, each with its Markdown line. "
    "Exits 0 when clean, 1 when a link is dead (links.fail_on), 2 on a usage or configuration error, 130/143/129 "
    "when interrupted.",
    words.source(dir_okay=False),
    (
        words.JSON,
        words.Option("--timeout", "timeout", words.PositiveKind(),
                     "Seconds one request may take in all: connect, headers, body [links.timeout]."),
        words.Option("--deadline", "deadline", words.PositiveKind(),
                     "Seconds the whole check may take [links.deadline]."),
        words.Option("--concurrency", "concurrency", words.CountKind(), "Requests in flight [links.concurrency]."),
        words.Flag("--no-cache", "no_cache", "Check every link again (the cache is refreshed, not read)."),
        words.Flag("--offline", "offline", "Ask nothing of the network: every verdict from the cache."),
        words.Flag("--allow-private", "allow_private", "Also request loopback and private addresses "
                   "[links.allow_private].", default=None),
        words.CONFIG,
    ),
    run="graphsite.commands.links:run",
)


def run(source: Path | None, as_json: bool, timeout: float | None, deadline: float | None, concurrency: int | None,
        no_cache: bool, offline: bool, allow_private: bool | None, config_path: Path | None) -> None:
    """What `graphsite links` does with the words COMMAND reads."""
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
