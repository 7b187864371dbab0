"""`graphsite build [SOURCE]`: render a Markdown report into one self-contained index.html."""

from __future__ import annotations

from pathlib import Path

from graphsite.commands import words

COMMAND = words.Command(
    "build",
    "Render SOURCE (default: content/graph-engineering.md, else the packaged report; `-`: standard input) into "
    "OUT/index.html.",
    words.source(),
    (
        words.Option("--out", "out_dir", words.PathKind(file_okay=False), "Directory that receives index.html.",
                     default=Path("site"), show_default=True),
        words.Option("--subdomain", "subdomain", words.TextKind(), "Show `live NAME` and name it in the teardown "
                     "command (NAME alone or NAME.<site.domain>).", metavar="NAME"),
        words.fonts("embedded: the theme's fonts inside the page, no request; google: Google Fonts' stylesheet; "
                    "system: the reader's own fonts."),
        words.Flag("--pdf", "pdf", "Also print the page to OUT/report.pdf with headless Chromium."),
        words.Flag("--strict", "strict", "Fail (and write nothing) on any unaccepted citation finding, link to a "
                   "#fragment the page does not have, or local image that is missing."),
        words.Flag("--check-links", "check_links", "Also check every outbound link over the network and say on the "
                   "page what came of each reference (exit 1 on a dead link; see `links`)."),
        words.Option("--since", "since", words.PathKind(dir_okay=False), "The previous version (a report, or a page "
                     "`build` wrote): the page notes the sections that changed since it (\"Changed since <date>\").",
                     metavar="OLD"),
        words.JSON,
        words.CONFIG,
    ),
    run="graphsite.commands.build:run",
)


def run(source: Path | None, out_dir: Path, subdomain: str | None, fonts: str, pdf: bool, strict: bool,
        check_links: bool, since: Path | None, as_json: bool, config_path: Path | None) -> None:
    """What `graphsite build` does with the words COMMAND reads."""
    from graphsite import output
    from graphsite.commands import present
    from graphsite.config import load_config
    from graphsite.labels import subdomain_of
    from graphsite.paths import default_source
    from graphsite.usecases.build import build

    config = load_config(config_path)
    subdomain = subdomain_of(subdomain, config.site.domain, what="--subdomain") if subdomain else None
    source = source or default_source()
    outcome = build(source, out_dir, subdomain=subdomain, fonts=fonts, strict=strict, config=config,
                    check_links=check_links, since=since)
    links = outcome.links
    present.build_summary(outcome)
    if pdf:  # after the page's own summary: the page is written whether or not printing works
        from graphsite.builder.pdf import write_pdf

        pdf_path = write_pdf(outcome.path, outcome.path.parent / "report.pdf")
        present.printed(pdf_path)
    else:  # the page is written atomically and closed, and no thread runs: nothing is left to the teardown
        output.end_without_teardown()
    present.build(outcome, as_json, links=links, fail_on=config.links.fail_on)
